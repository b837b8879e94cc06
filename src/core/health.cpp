#include "core/health.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace taskd::core {
namespace {

// A summary names at most this many tasks of a kind, then how many more.
constexpr std::size_t names_in_summary = 5;

// "1 task", "3 tasks".
std::string tasks_counted(std::size_t count) { return fmt::format("{} task{}", count, count == 1 ? "" : "s"); }

// A duration in whole seconds, as people read it: "2h5m".
std::string whole(Millis duration) { return format_duration(std::chrono::duration_cast<Seconds>(duration)); }

HealthProblem malformed_problem(const TaskFacts& task) {
  return {Verdict::critical, HealthProblemKind::malformed, task.name,
          "malformed in the database: " + task.malformed, std::nullopt, Millis{0}, std::nullopt};
}

HealthProblem disabled_problem(const TaskFacts& task) {
  std::string reason = task.disabled_reason.empty() ? "until its next edit or enable" : task.disabled_reason;
  return {Verdict::critical, HealthProblemKind::disabled, task.name, "disabled: " + reason, std::nullopt, Millis{0},
          std::nullopt};
}

std::optional<HealthProblem> no_success_problem(const TaskFacts& task, Time now, const TimeStyle& style) {
  if (!task.alert_after) return std::nullopt;
  Time since = task.last_succeeded_at.value_or(task.created_at);
  Millis off = task.days_off ? task.days_off->time_off(since, now) : Millis{0};
  Millis age = now - since - off;
  if (age <= *task.alert_after) return std::nullopt;
  std::string not_counted =
      off > Millis{0} ? fmt::format("; {} on days its schedule leaves out not counted", whole(off)) : "";
  std::string detail =
      task.last_succeeded_at
          ? fmt::format("no success for {} (alert after {}; last success {}{})", whole(now - since),
                        format_duration(*task.alert_after), show_time(since, style), not_counted)
          : fmt::format("never succeeded in the {} since it was added {} (alert after {}{})", whole(now - since),
                        show_time(since, style), format_duration(*task.alert_after), not_counted);
  return HealthProblem{Verdict::critical, HealthProblemKind::no_success, task.name, detail, since, age,
                       *task.alert_after};
}

std::optional<HealthProblem> late_problem(const TaskFacts& task, Time now, std::optional<Millis> late,
                                          const TimeStyle& style) {
  if (!late || !task.run_not_before) return std::nullopt;
  Millis lateness = task.run_started_at.value_or(now) - *task.run_not_before;
  if (lateness <= *late) return std::nullopt;
  std::string detail =
      task.run_started_at
          ? fmt::format("its last run started {} late (due {}; --late {})", format_duration_ms(lateness),
                        show_time(*task.run_not_before, style), format_duration_ms(*late))
          : fmt::format("its run due {} has waited {} to start (--late {})", show_time(*task.run_not_before, style),
                        format_duration_ms(lateness), format_duration_ms(*late));
  return HealthProblem{
      Verdict::warning, HealthProblemKind::late, task.name, detail, task.run_not_before, lateness, *late};
}

// A task whose retries ran out stays warned about while the ladders of its
// later slots are walked, until a run succeeds.
std::optional<HealthProblem> failed_problem(const TaskFacts& task, Time now, const TimeStyle& style) {
  bool final_outcome = !task.retry_pending || task.ladder_exhausted_at;
  if (!is_failure(task.last_status) || !task.last_finished_at || !final_outcome || task.last_run_by_hand)
    return std::nullopt;
  Time at = *task.last_finished_at;
  std::string detail = fmt::format("its latest run ended {} {} ago ({}), {}", to_string(*task.last_status),
                                   whole(now - at), show_time(at, style),
                                   task.retry_pending ? "a retry to come" : "with no retry to come");
  if (task.failing_since && *task.failing_since < at)
    detail += fmt::format("; failing since {}", show_time(*task.failing_since, style));
  if (task.ladder_exhausted_at)
    detail += fmt::format("; its retries ran out at {}", show_time(*task.ladder_exhausted_at, style));
  return HealthProblem{Verdict::warning, HealthProblemKind::failed, task.name, detail, at, now - at, std::nullopt};
}

// Pipes mark performance data in a plugin's output: none in the text.
std::string without_pipes(std::string text) {
  std::ranges::replace(text, '|', '/');
  std::ranges::replace(text, '\n', ' ');
  return text;
}

// "2 tasks critical: backup, report": the tasks of the problems `keep`
// keeps; empty for none.
template <class Keep>
std::string named_part(const CheckReport& report, Keep keep, std::string_view adjective) {
  std::vector<std::string> names;
  for (const auto& problem : report.problems) {
    if (!problem.task.empty() && keep(problem)) names.push_back(problem.task);
  }
  if (names.empty()) return "";
  std::string text = fmt::format("{} {}: ", tasks_counted(names.size()), adjective);
  for (std::size_t i = 0; i < std::min(names.size(), names_in_summary); ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > names_in_summary) text += fmt::format(" and {} more", names.size() - names_in_summary);
  return text;
}

// What the summary says: the scheduler's problem, the critical tasks, the
// late ones; or, without problems, what is well.
std::vector<std::string> summary_parts(const CheckReport& report) {
  std::vector<std::string> parts;
  for (const auto& problem : report.problems) {
    if (problem.kind == HealthProblemKind::no_scheduler) parts.push_back(problem.detail);
  }
  // A task has at most one critical problem: disabled, or no success.
  auto critical = named_part(
      report, [](const HealthProblem& p) { return p.verdict == Verdict::critical; }, "critical");
  auto failed = named_part(
      report, [](const HealthProblem& p) { return p.kind == HealthProblemKind::failed; }, "failed");
  auto late = named_part(
      report, [](const HealthProblem& p) { return p.kind == HealthProblemKind::late; }, "late");
  for (const auto& part : {critical, failed, late}) {
    if (!part.empty()) parts.push_back(part);
  }
  const auto& counts = report.counts;
  if (parts.empty())
    parts.push_back(tasks_counted(static_cast<std::size_t>(counts.ok)) + " ok" +
                    (counts.paused ? fmt::format(", {} paused", counts.paused) : ""));
  return parts;
}

// The count a task adds to: paused (and without a problem), or its worst
// verdict's.
std::int64_t& count_of(TaskCounts& counts, bool paused, Verdict worst) {
  if (paused) return counts.paused;
  if (worst == Verdict::critical) return counts.critical;
  return worst == Verdict::warning ? counts.warning : counts.ok;
}

}  // namespace

std::string_view to_string(Verdict verdict) {
  constexpr std::array<std::string_view, 4> names{"OK", "WARNING", "CRITICAL", "UNKNOWN"};
  return names.at(static_cast<std::size_t>(verdict));
}

std::string_view to_string(HealthProblemKind kind) {
  constexpr std::array<std::string_view, 6> names{"disabled",     "no_success", "late",
                                                  "no_scheduler", "malformed",  "failed"};
  return names.at(static_cast<std::size_t>(kind));
}

std::vector<HealthProblem> task_problems(const TaskFacts& task, Time now, std::optional<Millis> late,
                                         const TimeStyle& style) {
  if (!task.malformed.empty()) return {malformed_problem(task)};
  if (task.paused) return {};
  if (task.disabled) return {disabled_problem(task)};
  std::vector<HealthProblem> problems;
  if (auto silent = no_success_problem(task, now, style)) problems.push_back(std::move(*silent));
  if (auto failed = failed_problem(task, now, style)) problems.push_back(std::move(*failed));
  if (auto slow = late_problem(task, now, late, style)) problems.push_back(std::move(*slow));
  return problems;
}

Millis tick_silence(std::optional<Millis> every) {
  return std::max<Millis>(scheduler_silence, 2 * every.value_or(Millis{0}));
}

namespace {

bool loop_heartbeating(const SchedulerFacts& scheduler, Time now) {
  return scheduler.newest_heartbeat && now - *scheduler.newest_heartbeat <= scheduler_silence;
}

bool run_once_ticking(const SchedulerFacts& scheduler, Time now) {
  const auto& tick = scheduler.newest_tick;
  return tick && now - tick->at <= tick_silence(tick->every);
}

}  // namespace

bool scheduler_ticking(const SchedulerFacts& scheduler, Time now) {
  return loop_heartbeating(scheduler, now) || run_once_ticking(scheduler, now);
}

std::string cadence_text(std::optional<Millis> every) {
  return every ? "every ~" + whole(*every) : std::string("once so far");
}

std::optional<std::string> slow_ticks(const SchedulerFacts& scheduler, Seconds interval, Time now) {
  const auto& tick = scheduler.newest_tick;
  if (loop_heartbeating(scheduler, now) || !run_once_ticking(scheduler, now) || !tick->every ||
      *tick->every <= interval)
    return std::nullopt;
  return fmt::format("the only scheduler seen, taskd run-once on {}, ticks {}: a task due every {} runs at most "
                     "once a tick, and the slots between two ticks are skipped (start taskd run, or call run-once "
                     "more often)",
                     tick->host, cadence_text(tick->every), format_duration(interval));
}

std::optional<HealthProblem> scheduler_problem(const SchedulerFacts& scheduler, Time now, const TimeStyle& style) {
  if (scheduler.overdue_tasks == 0 || scheduler_ticking(scheduler, now)) return std::nullopt;
  auto due = tasks_counted(static_cast<std::size_t>(scheduler.overdue_tasks)) +
             (scheduler.overdue_tasks == 1 ? " is" : " are");
  const auto& tick = scheduler.newest_tick;
  const auto& newest = scheduler.newest_heartbeat;
  if (tick && (!newest || tick->at > *newest))
    return HealthProblem{Verdict::critical,
                         HealthProblemKind::no_scheduler,
                         "",
                         fmt::format("no scheduler has ticked for {} (taskd run-once on {}, {}, last {}) while {} due",
                                     whole(now - tick->at), tick->host, cadence_text(tick->every),
                                     show_time(tick->at, style), due),
                         tick->at,
                         Millis{now - tick->at},
                         tick_silence(tick->every)};
  std::string detail = newest ? fmt::format("no scheduler (taskd run) has heartbeated for {} (last {}) while {} due",
                                            whole(now - *newest), show_time(*newest, style), due)
                              : fmt::format("no scheduler (taskd run) is registered while {} due", due);
  return HealthProblem{Verdict::critical,
                       HealthProblemKind::no_scheduler,
                       "",
                       detail,
                       newest,
                       newest ? Millis{now - *newest} : Millis{0},
                       scheduler_silence};
}

CheckReportBuilder::CheckReportBuilder(const SchedulerFacts& scheduler, Time now, std::optional<Millis> late,
                                       const TimeStyle& style)
    : now_(now), late_(late), style_(style) {
  if (auto silent = scheduler_problem(scheduler, now, style)) report_.problems.push_back(std::move(*silent));
}

void CheckReportBuilder::add(const TaskFacts& task) {
  auto problems = task_problems(task, now_, late_, style_);
  Verdict worst = Verdict::ok;
  for (const auto& problem : problems) worst = std::max(worst, problem.verdict);
  ++count_of(report_.counts, task.paused && problems.empty(), worst);
  std::ranges::move(problems, std::back_inserter(report_.problems));
}

CheckReport CheckReportBuilder::finish() && {
  std::ranges::stable_sort(report_.problems, std::greater{}, &HealthProblem::verdict);
  for (const auto& problem : report_.problems) report_.verdict = std::max(report_.verdict, problem.verdict);
  return std::move(report_);
}

std::string summary_line(const CheckReport& report) {
  std::string parts;
  for (const auto& part : summary_parts(report)) parts += (parts.empty() ? "" : "; ") + part;
  const auto& c = report.counts;
  return fmt::format("TASKD {} - {} | ok={} warning={} critical={} paused={}", to_string(report.verdict),
                     without_pipes(parts), c.ok, c.warning, c.critical, c.paused);
}

std::string detail_line(const HealthProblem& problem) {
  return without_pipes(fmt::format("{} {}: {}", to_string(problem.verdict),
                                   problem.task.empty() ? "scheduler" : problem.task, problem.detail));
}

}  // namespace taskd::core
