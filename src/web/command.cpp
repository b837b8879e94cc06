#include "web/command.hpp"

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "web/api.hpp"
#include "web/server.hpp"
#include "web/token.hpp"

namespace taskd::web {
namespace {

using core::ErrorKind;
using core::fail;

// Who may do what, from the options: a token file is read (and checked)
// before anything listens.
core::Result<Access> access_of(const WebOptions& options, const ListenAddress& where) {
  const auto& flags = options.flags;
  if (options.token_file.empty()) {
    if (options.token_for_reads)
      return fail(ErrorKind::usage,
                  fmt::format("{}: {} needs {}", flags.command, flags.token_for_reads, flags.token_file));
    if (!where.loopback)
      return fail(ErrorKind::usage,
                  fmt::format("{}: {} {} is reachable from other machines: give {}, or listen on 127.0.0.1 or [::1]",
                              flags.command, flags.listen, where.text, flags.token_file));
    return Access{};
  }
  return Access{.token = TRY(read_token(options.token_file)), .for_reads = options.token_for_reads};
}

struct Served {
  Api api;
  ListenAddress where;
};

core::Result<std::pair<ListenAddress, Access>> checked(const WebOptions& options) {
  auto where = TRY(parse_listen_address(options.listen, options.flags.listen));
  auto access = TRY(access_of(options, where));
  return std::pair(std::move(where), std::move(access));
}

core::Result<Served> api_of(const cli::Context& context, const WebOptions& options) {
  auto [where, access] = TRY(checked(options));
  TRY(context.open_db_to_read());  // a database that cannot be read is told now, not at the first request
  Databases databases{.to_read = [&context] { return context.open_db_to_read(); },
                      .to_change = [&context] { return context.open_db(store::IfMissing::use_empty); }};
  return Served{Api(std::move(databases), std::move(access), context.clock), std::move(where)};
}

EventFeed feed_of(const cli::Context& context) {
  return EventFeed([&context] { return context.open_db_to_read(); });
}

core::Result<void> web(const cli::Context& context, const WebOptions& options) {
  auto served = TRY(api_of(context, options));
  return serve(served.api, feed_of(context), served.where);
}

}  // namespace

void add_web_command(CLI::App& app, cli::Context& context, cli::Action& action) {
  auto options = std::make_shared<WebOptions>(
      WebOptions{.listen = "127.0.0.1:8080", .flags = {"web", "--listen", "--token-file", "--token-for-reads"}});
  auto* command = app.add_subcommand("web", "Serve the board and the HTTP API over the database");
  command->add_option("--listen", options->listen,
                      "ADDRESS:PORT to listen on (default 127.0.0.1:8080; another than loopback needs --token-file)");
  command
      ->add_option("--token-file", options->token_file,
                   "File whose first line is the token that actions need (Authorization: Bearer TOKEN)")
      ->check(cli::non_empty_path());
  command->add_flag("--token-for-reads", options->token_for_reads, "Require the token for the API's reads too");
  command->callback([&context, &action, options] { action = [&context, options] { return web(context, *options); }; });
}

void add_board_options(CLI::App& command, WebOptions& options) {
  options.flags = {command.get_name(), "--web", "--web-token-file", "--web-token-for-reads"};
  command.add_option("--web", options.listen,
                     "Serve the board and the HTTP API from this process on ADDRESS:PORT, as taskd web does");
  command.add_option("--web-token-file", options.token_file, "The token file of the board's actions (see taskd web)")
      ->check(cli::non_empty_path());
  command.add_flag("--web-token-for-reads", options.token_for_reads, "Require the token for the API's reads too");
}

core::Result<void> check_board_options(const WebOptions& options) {
  TRY(checked(options));
  return {};
}

core::Result<std::unique_ptr<ServedBoard>> ServedBoard::start(const cli::Context& context, const WebOptions& options) {
  auto served = TRY(api_of(context, options));
  std::unique_ptr<ServedBoard> board(new ServedBoard(std::move(served.api)));
  board->server_ = TRY(Server::start(board->api_, feed_of(context), served.where));
  return board;
}

}  // namespace taskd::web
