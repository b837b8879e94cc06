#pragma once
// `taskd explain`: why a slot ran, was skipped, dropped, retried or late, and
// when the task runs next and why then, as plain sentences with the facts
// behind each. Pure: the history, the schedulers seen and `now` are
// arguments; the command reads them.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/chain.hpp"
#include "core/task.hpp"
#include "core/zone.hpp"

namespace taskd::core {

// A run as history keeps it: what explain reads of it.
struct PastRun {
  std::int64_t id = 0;
  RunStatus status = RunStatus::queued;
  Trigger trigger = Trigger::schedule;
  Time scheduled_at{};
  Time enqueued_at{};
  Time not_before{};  // its slot plus its jitter
  std::optional<Time> started_at;
  std::optional<Time> finished_at;
  std::optional<Time> deadline_at;
  int attempt_no = 0;
  std::string reason;
  std::optional<std::int64_t> upstream_run_id;  // the run of the --after task that queued it
};

// A `taskd run` process registered on the database now, or the ticks of
// run-once on a host (a scheduler cron calls).
struct SchedulerSeen {
  std::string host;
  Time started_at{};
  Time heartbeat_at{};  // run-once: its last tick
  bool run_once = false;
  std::optional<Millis> every;  // run-once: about how often it ticks
};

using FactValue = std::variant<std::string, std::int64_t, Time, Millis, bool, std::vector<std::string>>;

// One finding: its kind ("ran", "skipped", "late", "next", ...), one plain
// sentence, and the values behind it by name.
struct Fact {
  std::string kind;
  std::string text;
  std::vector<std::pair<std::string, FactValue>> data;
};

// The slot a question about `at` is about: for `at` up to `now` the last
// planned slot at or before it (or in its second, for a whole second), for
// a later `at` the first at or after it;
// none for a schedule without planned slots (manual, fixed delay) or
// without a slot there.
std::optional<Time> slot_in_question(const Schedule& schedule, Time at, Time now);

// The runs of the task that tell a slot's story, as the command finds them.
struct SlotHistory {
  // Runs whose slot lies in [slot, the next planned slot], oldest first:
  // the slot's attempts, its retries, and a retry that took the next slot.
  std::vector<PastRun> runs;
  // The newest run of trigger `schedule` whose slot is at or before it: a
  // SKIPPED row may stand for a span of slots that began earlier.
  std::optional<PastRun> newest_planned_before;
  std::optional<Time> oldest_kept_slot;  // of the runs history keeps of the task
  std::optional<Time> created_at;
};

// The sentences below show times in `style` (by default RFC 3339 UTC); a
// fact's values keep them as instants.

// What happened to `slot` (or, past `now`, what will), from its history.
std::vector<Fact> explain_slot(const Task& task, const Schedule& schedule, Time slot, const SlotHistory& history,
                               const std::vector<SchedulerSeen>& schedulers, Time now, const TimeStyle& style = {});

// For a task without planned slots: its latest run at or before the time asked about.
std::vector<Fact> explain_run_at(const Task& task, const Schedule& schedule, const std::optional<PastRun>& run,
                                 const std::vector<SchedulerSeen>& schedulers, Time now, const TimeStyle& style = {});

// Where the task stands in a chain (--after): what starts it, and which
// tasks its runs start (`followers`, with how they follow it).
std::vector<Fact> explain_chain(const TaskDefinition& definition, const std::vector<std::pair<std::string, Upstream>>& followers);

// Which daylight-saving rule shaped `slot`, if one did (--dst-gap, --dst-repeat).
std::optional<Fact> explain_dst(const Schedule& schedule, Time slot);

// When the task runs next, and why then; or why it does not.
std::vector<Fact> explain_next(const Task& task, const Schedule& schedule,
                               const std::vector<SchedulerSeen>& schedulers, Time now, const TimeStyle& style = {});

}  // namespace taskd::core
