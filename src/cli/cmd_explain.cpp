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

using core::ErrorKind;
using core::fail;
using core::Result;

struct ExplainOptions {
  std::string name;
  std::string at;
};

// "03:00" or "03:00:00": that wall time today, or yesterday while today's is
// still to come; or a whole wall time (2026-11-24T03:00:00).
std::optional<core::LocalTime> wall_time(std::string_view text, core::Zone zone, core::Time now) {
  auto local_now = core::to_local(zone, now);
  bool time_of_day = text.size() == 5 || text.size() == 8;
  if (!time_of_day) {
    auto local = core::parse_local(text);
    return local ? std::optional(*local) : std::nullopt;
  }
  auto today = core::format_local(local_now).substr(0, 10);
  auto local = core::parse_local(fmt::format("{}T{}{}", today, text, text.size() == 5 ? ":00" : ""));
  if (!local) return std::nullopt;
  return *local > local_now ? *local - std::chrono::days{1} : *local;
}

// --at: a wall time in the task's zone (03:00, 2026-11-24T03:00:00), an
// RFC 3339 time, or a duration ago (2h); none without it.
Result<std::optional<core::Time>> time_asked(const std::string& text, const core::TaskDefinition& definition,
                                             core::Time now) {
  if (text.empty()) return std::optional<core::Time>();
  auto zone = TRY(core::find_zone(definition.tz));
  if (auto local = wall_time(text, zone, now)) return std::optional(core::resolve_local(zone, *local).first);
  auto parsed = optional_time(text, "--at", now);
  if (parsed) return parsed;
  return fail(ErrorKind::bad_input, fmt::format("--at: \"{}\" is neither a wall time in {} (03:00, 2026-11-24T03:00:00), "
                                                "an RFC 3339 time nor a duration ago (2h)",
                                                text, definition.tz.empty() ? "UTC" : definition.tz));
}

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
  auto asked = TRY(time_asked(options.at, task.definition, now));
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
