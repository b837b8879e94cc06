#include <cstdio>
#include <fmt/format.h>
#include <memory>

#include "cli/context.hpp"
#include "cli/format.hpp"
#include "cli/json.hpp"
#include "core/text.hpp"
#include "ops/explain.hpp"
#include "ops/tasks.hpp"

namespace taskd::cli {
namespace {

using core::Result;

struct ExplainOptions {
  std::string name;
  std::string at;
};

void print_explanation_text(const ops::Explanation& explanation) {
  fmt::memory_buffer text;
  for (const auto& fact : explanation.facts)
    fmt::format_to(std::back_inserter(text), "{}\n", core::printable(fact.text));
  std::fwrite(text.data(), 1, text.size(), stdout);
}

Result<void> explain(const Context& context, const ExplainOptions& options) {
  core::Time now = context.clock.now();
  auto db = TRY(context.open_db_to_read());
  auto task = TRY(ops::find_named_task(db, options.name, "explain"));
  auto asked = TRY(ops::time_asked(options.at, "--at", task.definition, now));
  auto explanation = TRY(ops::explain_task(db, task, asked, now, context.time_style(now)));
  if (context.json) {
    print_json(ops::explanation_json(task, explanation, now));
  } else {
    print_explanation_text(explanation);
  }
  return {};
}

}  // namespace

void add_explain_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<ExplainOptions>();
  auto* command = app.add_subcommand(
      "explain", "Why a slot ran, was skipped, dropped, retried or late, and when the task runs next and why then");
  command->add_option("name", options->name, "Task name")->required();
  command->add_option("--at", options->at,
                      "The time asked about: a wall time in the task's zone (03:00, 2026-11-24T03:00:00), an RFC 3339 time, "
                      "or a duration ago (2h); default now");
  command->callback([&context, &action, options] { action = [&context, options] { return explain(context, *options); }; });
}

}  // namespace taskd::cli
