#include <cstdio>
#include <fmt/format.h>
#include <iterator>
#include <memory>
#include <optional>

#include "cli/context.hpp"
#include "cli/json.hpp"
#include "cli/schedule_options.hpp"
#include "core/policy.hpp"
#include "core/text.hpp"
#include "ops/calendars.hpp"
#include "ops/preview.hpp"
#include "ops/tasks.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

struct PreviewOptions {
  std::string name;
  ScheduleOptions schedule;
  std::string from;
  int count = 10;
};

bool names_a_schedule(const ScheduleOptions& options) {
  return !options.every.empty() || !options.cron.empty() || !options.rrule.empty();
}

bool names_dst_rules(const ScheduleOptions& options) { return !options.dst_gap.empty() || !options.dst_repeat.empty(); }

// "2026-03-29 03:00:00+02:00", and after it how a DST change shaped its slot.
std::string preview_line(const core::Schedule& schedule, const core::UpcomingStart& upcoming,
                         const core::TimeStyle& style) {
  auto line = core::show_time(upcoming.start, style);
  auto adjustment = upcoming.slot ? core::dst_adjustment(schedule, *upcoming.slot) : std::nullopt;
  if (adjustment) line += fmt::format("  ({})", core::describe(*adjustment));
  return line;
}

// The days the task's --skip-calendar removes slots from, told among its
// starts (and not counted as starts): a line a day, as the history has a
// SKIPPED run a day, so a task every minute shows one line for a holiday,
// not 1440.
class SkippedMarks {
 public:
  SkippedMarks(core::CalendarSkippedDays days, std::vector<core::NamedCalendar> calendars)
      : days_(std::move(days)), calendars_(std::move(calendars)) {}

  // Appends the line of each day before `t` not told yet to `text`.
  void before(core::Time t, fmt::memory_buffer& text, const core::TimeStyle& style) {
    while (true) {
      if (!pending_) pending_ = days_.next();
      if (!pending_ || pending_->first >= t) return;
      const auto& day = *pending_;
      auto words = core::printable(core::skipped_day_words(day.day, calendars_));
      if (day.first == day.last) {
        fmt::format_to(fmt::appender(text), "{}  (skipped: {})\n", core::show_time(day.first, style), words);
      } else {
        fmt::format_to(fmt::appender(text), "{}  (skipped, and each slot to {}: {})\n",
                       core::show_time(day.first, style), core::show_time(day.last, style), words);
      }
      pending_.reset();
    }
  }

 private:
  core::CalendarSkippedDays days_;
  std::vector<core::NamedCalendar> calendars_;
  std::optional<core::CalendarSkippedDay> pending_;
};

// Lines are written in blocks of this many bytes as the starts are
// computed: the first come at once, and --count 1000000000 takes the memory
// of one block.
constexpr std::size_t block_size = 64 * 1024;

Result<void> print_starts(const core::Task& task, core::Time from, int count, std::optional<SkippedMarks>& marks,
                          const core::TimeStyle& style) {
  fmt::memory_buffer text;
  TRY(ops::for_each_start(task, from, count, [&](const core::UpcomingStart& upcoming) -> Result<void> {
    if (marks) marks->before(upcoming.start, text, style);
    auto line = preview_line(task.schedule.value(), upcoming, style);
    text.append(line.data(), line.data() + line.size());
    text.push_back('\n');
    if (text.size() < block_size) return {};
    std::fwrite(text.data(), 1, text.size(), stdout);
    text.clear();
    return {};
  }));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return {};
}

Result<void> print_starts_json(const core::Task& task, core::Time from, int count) {
  JsonArrayWriter out;
  TRY(ops::for_each_start(task, from, count, [&](const core::UpcomingStart& upcoming) -> Result<void> {
    out.add(ops::start_json(upcoming));
    return {};
  }));
  out.finish();
  return {};
}

struct TaskToPreview {
  core::Task task;
  std::vector<core::NamedCalendar> skip_calendars;  // of a stored task with --skip-calendar
};

// The task to preview: a stored one by name, or one made of the options.
Result<TaskToPreview> task_to_preview(const Context& context, const PreviewOptions& options, core::Time now) {
  if (!options.name.empty()) {
    if (names_a_schedule(options.schedule)) return fail(ErrorKind::usage, "preview: give a task NAME or a schedule, not both");
    if (names_dst_rules(options.schedule))
      return fail(ErrorKind::usage, "preview: --dst-gap and --dst-repeat go with a schedule (--every, --cron, "
                                    "--rrule); a task NAME has its own (taskd edit changes them)");
    auto db = TRY(context.open_db_to_read());
    auto task = TRY(ops::find_task(db, options.name));
    if (!task) return fail(ErrorKind::bad_input, fmt::format("preview: no task named \"{}\" (see taskd list)", options.name));
    if (task->definition.calendar_days.skipped.empty()) return TaskToPreview{*task, {}};
    auto calendars = TRY(ops::skip_calendars(db, task->definition));
    return TaskToPreview{*task, std::move(calendars)};
  }
  core::Task task;
  task.definition.name = "preview";
  task.schedule = TRY(apply_schedule(options.schedule, task.definition, now));
  return TaskToPreview{std::move(task), {}};
}

// The marks of the days the task's --skip-calendar removes slots from after `from`;
// none for a task without one, which costs preview nothing.
Result<std::optional<SkippedMarks>> skipped_marks(TaskToPreview& preview, core::Time from) {
  if (preview.task.definition.calendar_days.skipped.empty()) return std::nullopt;
  auto days = TRY(core::calendar_skipped_days(preview.task.definition, from));
  return std::optional<SkippedMarks>(std::in_place, std::move(days), std::move(preview.skip_calendars));
}

Result<void> preview(const Context& context, const PreviewOptions& options) {
  if (options.count < 1) return fail(ErrorKind::usage, "preview: --count must be at least 1");
  core::Time now = context.clock.now();
  auto from = TRY(ops::preview_from(options.from, "--from", now));
  auto preview = TRY(task_to_preview(context, options, now));
  const auto& task = preview.task;
  const auto& schedule = task.schedule.value();
  if (std::holds_alternative<core::AtBoot>(schedule) && !context.json)
    fmt::print(stderr, "taskd: preview: no start times: it runs once after each boot of the machine (--cron @reboot)\n");
  if (context.json) return print_starts_json(task, from, options.count);
  auto marks = TRY(skipped_marks(preview, from));
  return print_starts(task, from, options.count, marks, context.time_style(now));
}

}  // namespace

void add_preview_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<PreviewOptions>();
  auto* command = app.add_subcommand("preview", "Print the next start times of a task or of a schedule");
  command->add_option("name", options->name, "A task's name (or give a schedule with --every/--cron/--rrule)");
  add_schedule_options(*command, options->schedule);
  command->add_option("--from", options->from, "Start after this RFC 3339 time (default: now)");
  command->add_option("--count", options->count, "How many start times (default 10)");
  command->callback([&context, &action, options] { action = [&context, options] { return preview(context, *options); }; });
}

}  // namespace taskd::cli
