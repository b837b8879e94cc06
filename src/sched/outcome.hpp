#pragma once
// Recording the end of an attempt, wherever it is learned: the worker that
// saw its child exit, or a recovery that found its worker gone.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/usage.hpp"
#include "core/policy.hpp"
#include "sched/replace.hpp"
#include "sched/report.hpp"
#include "store/database.hpp"
#include "store/tasks.hpp"

namespace taskd::sched {

// An attempt that taskd's shutdown ended before it was done: its run goes
// back to the queue for its slot, as it was queued, and the task's state to
// its count before the attempt started (core::on_shutdown_end). It uses no
// step of the retry ladder, tells --notify nothing and starts no follower.
struct ShutdownEnd {
  int run_attempt_no = 0;
  std::int64_t run_index = 0;
  core::TaskState before_start;
};

struct AttemptEnd {
  std::int64_t run_id = 0;
  std::int64_t task_id = 0;
  std::string attempt_uid;
  core::Trigger trigger = core::Trigger::schedule;
  core::AttemptOutcome outcome = core::AttemptOutcome::failed;
  std::string reason;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string output;
  bool output_truncated = false;
  std::optional<std::string> state_blob;  // the run's $TASKD_STATE, to keep for the next run
  core::ResourceUsage usage;
  std::optional<ShutdownEnd> shutdown;  // set: requeued, not finished
};

// What recording an attempt's end did: `written`, its run was still
// running under this attempt and this write ended it (not so when another
// process recorded it first, as every host may find a lost run); `current`,
// the attempt was also the task's current one, whose state the policy
// changed. A stale attempt (neither) changes nothing but history.
struct EndRecorded {
  bool written = false;
  bool current = false;
};

// In one transaction: the run row (only if it is still running under this
// attempt) and, if the attempt is still the task's current one, the task's
// new state from the policy, and when that is the final outcome of its
// slot (no retry of it comes) the runs of the task's followers (--after)
// queued as by `taskd trigger`, each with the run's id as its
// upstream_run_id (or a SKIPPED row when one cannot run). A task whose row
// is malformed keeps its row as it is, and its followers do not start.
core::Result<EndRecorded> record_attempt_end(store::Database& db, const AttemptEnd& end, core::Time now);

// The same for several attempts, in one transaction (one commit for every
// child that ended since the worker last looked); one result per attempt.
core::Result<std::vector<EndRecorded>> record_attempt_ends(store::Database& db, const std::vector<AttemptEnd>& ends,
                                                           core::Time now);

// What recording an attempt's end did to its task, when it was the task's
// current attempt: the task as it was, and its state after.
struct StateChange {
  core::Task task;
  core::TaskState after;
};

// Ends recorded inside a transaction: two flags per attempt (whether its
// run was written, and whether it was current; see EndRecorded), and the
// changes to tell once it is committed.
struct RecordedEnds {
  struct Change {
    const AttemptEnd* end;
    StateChange change;
  };
  std::vector<bool> written;
  std::vector<bool> current;
  std::vector<Change> changes;
  std::vector<ChildToStop> to_stop;  // attempts that followers' runs replaced (overlap=replace)
};

// record_attempt_ends inside the caller's transaction (a worker records its
// ended children with the claim that fills their slots), as the first thing
// it does: it locks the tasks of `ends` and their followers
// (WriteScope::rows), waiting for the transactions that hold them. The
// caller commits, then calls after_commit. `ends` must outlive the result.
core::Result<RecordedEnds> record_attempt_ends_within(store::Database& db, const std::vector<AttemptEnd>& ends,
                                                      core::Time now);

// Once the ends are committed: stops the attempts their followers' runs
// replaced, and starts the --notify commands of the tasks whose state they
// changed.
void after_commit(const RecordedEnds& recorded, core::Time now);

// Disables a task the scheduler met with its row malformed (it never runs
// one), with what is wrong as the reason; what to report of it.
core::Result<MalformedReport> disable_malformed(store::Database& db, const store::MalformedTask& task, core::Time now);

// Writes a policy decision: its SKIPPED row, if any, and the task's state.
core::Result<void> write_decision(store::Database& db, std::int64_t task_id, const core::TaskState& state,
                                  const std::optional<core::SkippedSlots>& skipped, core::Time now);

}  // namespace taskd::sched
