#include <cstdio>
#include <fmt/format.h>
#include <memory>

#include "cli/context.hpp"
#include "cli/json.hpp"
#include "ops/backfill.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

struct BackfillOptions {
  std::string name;
  std::string from;
  std::string until;
  std::int64_t max = 10'000;
  bool dry_run = false;
};

// A required time option: RFC 3339, or a duration before `now` ("2d").
Result<core::Time> window_time(const std::string& text, std::string_view option, core::Time now) {
  auto parsed = TRY(core::time_or_ago(text, option, now));
  if (!parsed) return fail(ErrorKind::usage, fmt::format("backfill: {} needs a time", option));
  return *parsed;
}

Result<core::BackfillWindow> window_of(const BackfillOptions& options, core::Time now) {
  if (options.max < 1)
    return fail(ErrorKind::usage, fmt::format("backfill: --max {}: give a positive number of slots", options.max));
  auto from = TRY(window_time(options.from, "--from", now));
  auto until = TRY(window_time(options.until, "--until", now));
  return core::BackfillWindow{from, until, static_cast<std::size_t>(options.max)};
}

// One line per slot (with its run, once queued), then what was done.
void print_backfill_text(const ops::Backfilled& backfilled, bool dry_run, const core::TimeStyle& style) {
  const auto& [task, slots, run_ids] = backfilled;
  fmt::memory_buffer text;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    fmt::format_to(std::back_inserter(text), "{}", core::show_time(slots[i], style));
    if (i < run_ids.size()) fmt::format_to(std::back_inserter(text), " run {}", run_ids[i]);
    text.push_back('\n');
  }
  const auto& name = task.definition.name;
  if (dry_run) {
    fmt::format_to(std::back_inserter(text), "dry run: {} slot(s) of {} to backfill; nothing queued\n", slots.size(),
                   name);
  } else {
    fmt::format_to(std::back_inserter(text), "queued {} backfilled run(s) of {}, oldest first\n", slots.size(), name);
  }
  if (task.state.paused) fmt::format_to(std::back_inserter(text), "{} is paused: they run anyway, as triggered runs do\n", name);
  std::fwrite(text.data(), 1, text.size(), stdout);
}

Result<void> backfill(const Context& context, const BackfillOptions& options) {
  core::Time now = context.clock.now();
  auto window = TRY(window_of(options, now));
  auto db = TRY(context.open_db(store::IfMissing::use_empty));
  auto backfilled = TRY(ops::backfill(db, {.name = options.name, .window = window, .dry_run = options.dry_run}, now));
  if (context.json) {
    print_json(ops::backfilled_json(backfilled));
  } else {
    print_backfill_text(backfilled, options.dry_run, context.time_style(now));
  }
  return {};
}

}  // namespace

void add_backfill_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<BackfillOptions>();
  auto* command = app.add_subcommand(
      "backfill", "Queue a manual run for each planned slot of a past window; the planned slots stay as they are");
  command->add_option("name", options->name, "Task name")->required();
  command->add_option("--from", options->from, "First instant of the window (RFC 3339, or a duration ago: 7d)")
      ->required();
  command->add_option("--until", options->until, "End of the window, not included; not in the future")->required();
  command->add_flag("--dry-run", options->dry_run, "List the slots; queue nothing");
  command->add_option("--max", options->max, "Refuse a window of more slots than this (default 10000)");
  command->callback([&context, &action, options] { action = [&context, options] { return backfill(context, *options); }; });
}

}  // namespace taskd::cli
