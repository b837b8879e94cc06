#pragma once
// `taskd check`'s verdicts, as a monitoring plugin gives them (Nagios,
// Icinga, Sensu): from the facts the store read and the time they were read
// at; nothing here reads the clock or the database (taskd(1), check).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/duration.hpp"
#include "core/set_dates.hpp"
#include "core/task.hpp"
#include "core/time.hpp"
#include "core/zone.hpp"

namespace taskd::core {

// A plugin's states, in the order of their exit codes: 0 OK, 1 WARNING,
// 2 CRITICAL, 3 UNKNOWN (the facts could not be read).
enum class Verdict { ok, warning, critical, unknown };
// "OK", "WARNING", "CRITICAL", "UNKNOWN".
std::string_view to_string(Verdict verdict);
constexpr int exit_code(Verdict verdict) { return static_cast<int>(verdict); }

// No scheduler heartbeat for this long while a task has been due this long:
// no scheduler runs the tasks.
inline constexpr Seconds scheduler_silence{120};

// What check knows of a task.
struct TaskFacts {
  std::string name;
  // What is wrong with the task's row in the database; empty: nothing. Of a
  // malformed row check knows only this, the name and `paused`.
  std::string malformed;
  bool paused = false;
  bool disabled = false;  // disabled_until_update
  std::string disabled_reason;
  std::optional<Seconds> alert_after;
  // The days its schedule leaves out (--exdate days, calendars), which
  // alert_after does not count; none: every day counts.
  std::shared_ptr<const SlotChanges> days_off;
  std::optional<Time> last_succeeded_at;
  Time created_at;
  // The latest run taskd planned (schedule or retry) that started or still
  // waits: when it could start (its slot plus jitter), and when it started
  // (none: still queued). None: no such run.
  std::optional<Time> run_not_before;
  std::optional<Time> run_started_at;
  // The latest attempt's outcome and when it ended; `retry_pending`: a retry
  // of its slot is still to come, so that outcome is not final;
  // `last_run_by_hand`: that attempt was a run someone started (trigger,
  // backfill), not one taskd planned or a chain started.
  std::optional<RunStatus> last_status;
  std::optional<Time> last_finished_at;
  bool retry_pending = false;
  bool last_run_by_hand = false;
  // Its failing streak: the end of its first failed attempt, and when its
  // retries ran out (none: they have not).
  std::optional<Time> failing_since;
  std::optional<Time> ladder_exhausted_at;
};

// The newest tick of run-once, a scheduler that cron calls: its host, when
// it began, and about how often that host ticks (none: once so far).
struct TickFacts {
  std::string host;
  Time at;
  std::optional<Millis> every;
};

// What check knows of the schedulers (`taskd run`, run-once) on the database.
struct SchedulerFacts {
  std::optional<Time> newest_heartbeat;  // of a taskd run; none: no taskd run is registered
  std::int64_t overdue_tasks = 0;        // tasks due for scheduler_silence or longer
  std::optional<TickFacts> newest_tick;  // none: run-once never ticked
};

// How long after a run-once tick the scheduler still counts as ticking:
// twice its cadence, at least scheduler_silence.
Millis tick_silence(std::optional<Millis> every);

// Whether a scheduler ticks at `now`: a taskd run heartbeated within
// scheduler_silence, or run-once ticked within its tick_silence.
bool scheduler_ticking(const SchedulerFacts& scheduler, Time now);

// "every ~1m" of a cadence, "once so far" without one.
std::string cadence_text(std::optional<Millis> every);

// When the only scheduler seen ticking is run-once and it ticks less often
// than a task comes due (`interval`): what that means, in a sentence.
std::optional<std::string> slow_ticks(const SchedulerFacts& scheduler, Seconds interval, Time now);

enum class HealthProblemKind { disabled, no_success, late, no_scheduler, malformed, failed };
// "disabled", "no_success", "late", "no_scheduler", "malformed", "failed".
std::string_view to_string(HealthProblemKind kind);

// One thing wrong: one detail line of the plugin's output.
struct HealthProblem {
  Verdict verdict = Verdict::critical;
  HealthProblemKind kind = HealthProblemKind::disabled;
  std::string task;    // empty: the scheduler
  std::string detail;  // what is wrong, in a sentence
  // no_success: the last success (or the creation); late: when the run could
  // start; failed: when the failed attempt ended; no_scheduler: the newest
  // heartbeat (none: no scheduler at all).
  std::optional<Time> since;
  Millis age{0};                // how long ago `since` was (late: how late)
  std::optional<Millis> limit;  // no_success: alert_after; late: --late
};

// Tasks by their worst problem; paused tasks are not judged.
struct TaskCounts {
  std::int64_t ok = 0;
  std::int64_t warning = 0;
  std::int64_t critical = 0;
  std::int64_t paused = 0;
};

struct CheckReport {
  Verdict verdict = Verdict::ok;
  std::vector<HealthProblem> problems;  // CRITICAL first, then WARNING; the scheduler before the tasks
  TaskCounts counts;
};

// A task's problems at `now`: its row malformed (paused or not), disabled,
// or no success within its alert_after (counted from its last success, else
// from its creation) — CRITICAL; its latest planned run later than `late`,
// or its latest outcome a final failure (failed, timed out or lost, no retry
// to come or its retries ran out in this failing streak, not of a run
// started by hand) — WARNING. No other for a paused
// task.
// Times in the sentences are shown in `style`.
std::vector<HealthProblem> task_problems(const TaskFacts& task, Time now, std::optional<Millis> late,
                                         const TimeStyle& style = {});

// CRITICAL when a task has been due for scheduler_silence while no scheduler
// has heartbeated for as long.
std::optional<HealthProblem> scheduler_problem(const SchedulerFacts& scheduler, Time now, const TimeStyle& style = {});

// Every problem, the counts and the worst verdict, judged a task at a time:
// only the problems are kept, so a million tasks need not be in memory.
class CheckReportBuilder {
 public:
  CheckReportBuilder(const SchedulerFacts& scheduler, Time now, std::optional<Millis> late,
                     const TimeStyle& style = {});
  void add(const TaskFacts& task);
  // The report: CRITICAL problems first, the scheduler's before the tasks'.
  CheckReport finish() &&;

 private:
  Time now_;
  std::optional<Millis> late_;
  TimeStyle style_;
  CheckReport report_;
};

// The plugin's first line: "TASKD CRITICAL - 2 tasks critical: backup,
// report | ok=10 warning=0 critical=2 paused=0".
std::string summary_line(const CheckReport& report);

// A detail line: "CRITICAL backup: disabled: …".
std::string detail_line(const HealthProblem& problem);

}  // namespace taskd::core
