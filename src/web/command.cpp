#include "web/command.hpp"

#include <fmt/format.h>

#include <memory>

#include "web/api.hpp"
#include "web/server.hpp"
#include "web/token.hpp"

namespace taskd::web {
namespace {

using core::ErrorKind;
using core::fail;

struct WebOptions {
  std::string listen = "127.0.0.1:8080";
  std::string token_file;
  bool token_for_reads = false;
};

// Who may do what, from the options: a token file is read (and checked)
// before anything listens.
core::Result<Access> access_of(const WebOptions& options, const ListenAddress& where) {
  if (options.token_file.empty()) {
    if (options.token_for_reads) return fail(ErrorKind::usage, "web: --token-for-reads needs --token-file");
    if (!where.loopback)
      return fail(ErrorKind::usage,
                  fmt::format("web: --listen {} is reachable from other machines: give --token-file, or listen on "
                              "127.0.0.1 or [::1]",
                              where.text));
    return Access{};
  }
  return Access{.token = TRY(read_token(options.token_file)), .for_reads = options.token_for_reads};
}

core::Result<void> web(const cli::Context& context, const WebOptions& options) {
  auto where = TRY(parse_listen_address(options.listen));
  auto access = TRY(access_of(options, where));
  TRY(context.open_db_to_read());  // a database that cannot be read is told now, not at the first request
  Databases databases{.to_read = [&context] { return context.open_db_to_read(); },
                      .to_change = [&context] { return context.open_db(store::IfMissing::use_empty); }};
  EventFeed feed([&context] { return context.open_db_to_read(); });
  Api api(std::move(databases), std::move(access), context.clock);
  return serve(api, std::move(feed), where);
}

}  // namespace

void add_web_command(CLI::App& app, cli::Context& context, cli::Action& action) {
  auto options = std::make_shared<WebOptions>();
  auto* command = app.add_subcommand("web", "Serve the board and the HTTP API over the database");
  command->add_option("--listen", options->listen,
                      "ADDRESS:PORT to listen on (default 127.0.0.1:8080; another than loopback needs --token-file)");
  command->add_option("--token-file", options->token_file,
                      "File whose first line is the token that actions need (Authorization: Bearer TOKEN)")
      ->check(cli::non_empty_path());
  command->add_flag("--token-for-reads", options->token_for_reads, "Require the token for the API's reads too");
  command->callback([&context, &action, options] { action = [&context, options] { return web(context, *options); }; });
}

}  // namespace taskd::web
