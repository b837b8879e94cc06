#pragma once
// `taskd web`: the command line's wiring of the web front-end.
#include "cli/context.hpp"

namespace taskd::web {

void add_web_command(CLI::App& app, cli::Context& context, cli::Action& action);

}  // namespace taskd::web
