#pragma once
// `taskd web`, and `taskd run --web`: the command line's wiring of the web
// front-end.
#include <memory>
#include <string>
#include <string_view>

#include "cli/context.hpp"
#include "web/api.hpp"
#include "web/server.hpp"

namespace taskd::web {

void add_web_command(CLI::App& app, cli::Context& context, cli::Action& action);

// Where the board listens and who may act on it, with the options' names
// as the command spells them (messages name them).
struct WebOptions {
  std::string listen;
  std::string token_file;
  bool token_for_reads = false;
  struct Flags {
    std::string_view command, listen, token_file, token_for_reads;
  } flags;
};

// `--web ADDRESS:PORT`, `--web-token-file`, `--web-token-for-reads` on a
// command that serves the board beside its own work (`taskd run`).
void add_board_options(CLI::App& command, WebOptions& options);

// Whether the options can serve (an address, the token file), before
// anything is opened or made.
core::Result<void> check_board_options(const WebOptions& options);

// The board and the API served from the process of another command (`taskd
// run --web`), on threads of their own, until destroyed.
class ServedBoard {
 public:
  // Checks the options and the token file and listens; `context` outlives it.
  static core::Result<std::unique_ptr<ServedBoard>> start(const cli::Context& context, const WebOptions& options);

 private:
  explicit ServedBoard(Api api) : api_(std::move(api)) {}
  Api api_;
  std::unique_ptr<Server> server_;  // serves api_: declared after it, so stopped before it goes
};

}  // namespace taskd::web
