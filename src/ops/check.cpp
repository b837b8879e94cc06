#include "ops/check.hpp"

#include <fmt/format.h>

#include "core/schedule.hpp"
#include "store/overview.hpp"
#include "store/workers.hpp"

namespace taskd::ops {
namespace {

using core::Result;

Result<void> require_named_tasks(store::Database& db, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (!TRY(store::find_stored_task(db, name)))
      return core::fail(core::ErrorKind::bad_input, fmt::format("no task named \"{}\" (see taskd list)", name));
  }
  return {};
}

Result<core::SchedulerFacts> read_scheduler(store::Database& db, core::Time now) {
  auto scheduler = TRY(read_schedulers(db));
  scheduler.overdue_tasks = TRY(store::count_due_tasks(db, now - core::scheduler_silence));
  return scheduler;
}

Json problem_json(const core::HealthProblem& problem) {
  return {{"status", core::to_string(problem.verdict)},
          {"kind", core::to_string(problem.kind)},
          {"task", problem.task.empty() ? Json(nullptr) : Json(problem.task)},
          {"detail", problem.detail},
          {"since", time_json(problem.since)},
          {"for", problem.since ? seconds_json(problem.age) : Json(nullptr)},
          {"limit", seconds_json(problem.limit)}};
}

}  // namespace

Result<core::SchedulerFacts> read_schedulers(store::Database& db) {
  core::SchedulerFacts scheduler;
  scheduler.newest_heartbeat = TRY(store::newest_heartbeat(db, "run"));
  auto ticks = TRY(store::list_ticks(db));
  if (!ticks.empty()) {
    const auto& newest = ticks.front();
    scheduler.newest_tick = core::TickFacts{newest.host, newest.last_at, newest.every};
  }
  return scheduler;
}

Result<std::optional<std::string>> slow_scheduler(store::Database& db, const core::Schedule& schedule,
                                                   core::Time now) {
  auto interval = core::interval_around(schedule, now);
  if (!interval) return std::nullopt;
  auto scheduler = TRY(read_schedulers(db));
  return core::slow_ticks(scheduler, *interval, now);
}

Result<Checked> check_tasks(store::Database& db, const CheckArgs& args, const sched::Clock& clock) {
  TRY(require_named_tasks(db, args.selection.names));
  core::Time now = clock.now();
  auto scheduler = TRY(read_scheduler(db, now));
  core::CheckReportBuilder builder(scheduler, now, args.late, args.style);
  TRY(store::for_each_task_facts(db, args.selection, [&builder](const core::TaskFacts& task) { builder.add(task); }));
  return Checked{.scheduler = scheduler, .report = std::move(builder).finish(), .late = args.late};
}

Json checked_json(const Checked& checked) {
  const auto& [scheduler, report, late] = checked;
  Json problems = Json::array();
  for (const auto& problem : report.problems) problems.push_back(problem_json(problem));
  const auto& c = report.counts;
  return {
      {"status", core::to_string(report.verdict)},
      {"exit_code", core::exit_code(report.verdict)},
      {"summary", core::summary_line(report)},
      {"counts", {{"ok", c.ok}, {"warning", c.warning}, {"critical", c.critical}, {"paused", c.paused}}},
      {"late", seconds_json(late)},
      {"scheduler", {{"heartbeat_at", time_json(scheduler.newest_heartbeat)}, {"due_tasks", scheduler.overdue_tasks}}},
      {"problems", problems}};
}

}  // namespace taskd::ops
