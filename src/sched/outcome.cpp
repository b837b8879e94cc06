#include "sched/outcome.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "core/alerts.hpp"
#include "core/mail.hpp"
#include "core/notify.hpp"
#include "exec/process_identity.hpp"
#include "exec/spawn.hpp"
#include "sched/backfill.hpp"
#include "sched/delivery.hpp"
#include "sched/environment.hpp"
#include "sched/trigger.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"

namespace taskd::sched {
namespace {

using namespace std::chrono_literals;

// A notify command that runs longer than this is ended by SIGALRM.
constexpr auto notify_time_limit = 60s;

// The task rows a batch of ends read under its lock (on a server), each
// served once: its first reader writes the row, so a later one reads it
// again. Nothing read (a SQLite file): every row is read when asked for.
class RowsReadUnderLock {
 public:
  explicit RowsReadUnderLock(std::optional<std::vector<store::StoredTask>> rows) : read_(rows.has_value()) {
    for (auto& row : rows.value_or(std::vector<store::StoredTask>{})) {
      const auto& upstream = store::readable(row).definition.after.task;
      if (!row) unsure_of_followers_ = true;
      else if (!upstream.empty()) upstreams_.insert(upstream);
      auto id = store::readable(row).id;
      rows_.emplace(id, std::move(row));
    }
  }

  // The row of task `id` as read under the lock, if not served yet; else as
  // it is now (none when the task was removed).
  core::Result<std::optional<store::StoredTask>> take(store::Database& db, std::int64_t id) {
    auto row = rows_.find(id);
    if (row == rows_.end()) return store::find_stored_task(db, id);
    std::optional<store::StoredTask> taken(std::move(row->second));
    rows_.erase(row);
    return taken;
  }

  // The row of `end`'s task as read under the lock, taken for an end that
  // writes its run's end and the task's new state in one: an attempt of
  // the schedule's (a manual run's end may queue a retry first), not ended
  // by taskd's shutdown, whose task's row is well-formed and holds it as its
  // current attempt (the row stays locked: nothing else changes it).
  std::optional<core::Task> take_for_one_write(const AttemptEnd& end) {
    auto row = rows_.find(end.task_id);
    if (end.shutdown || end.trigger == core::Trigger::manual || row == rows_.end() || !row->second ||
        row->second->state.attempt_uid != end.attempt_uid)
      return std::nullopt;
    std::optional<core::Task> task(std::move(*row->second));
    rows_.erase(row);
    return task;
  }

  // Whether a task may follow `upstream`: the lock took every follower of
  // the batch's tasks, so none among them is none at all.
  bool may_have_followers(std::string_view upstream) const {
    return !read_ || unsure_of_followers_ || upstreams_.contains(upstream);
  }

 private:
  bool read_;
  bool unsure_of_followers_ = false;  // a malformed row was among them
  std::map<std::int64_t, store::StoredTask> rows_;
  std::set<std::string, std::less<>> upstreams_;  // of the followers among them
};

// Where the ends of a transaction queue their followers' runs.
struct Followed {
  core::Time now;
  std::vector<ChildToStop>& to_stop;  // the attempts their runs replaced
};

// What the policy makes of the attempt's end: a manual run's end, that of a
// run with its own ladder (which may queue its retry), or a scheduled one's.
core::Result<core::FinishDecision> finish_decision(store::Database& db, const core::Task& task,
                                                   const core::Schedule& schedule, const AttemptEnd& end,
                                                   core::Time now) {
  if (end.trigger != core::Trigger::manual)
    return core::on_finish(task.definition, schedule, task.state, now, end.outcome, end.reason);
  auto run = TRY(store::find_run(db, end.run_id));
  if (run && core::has_own_ladder(run->trigger, run->scheduled_at, run->enqueued_at, run->upstream_run_id.has_value()))
    return finish_with_own_ladder(db, task, schedule, *run, end, now);
  return core::on_manual_finish(schedule, task.state, now, end.outcome, end.reason);
}

// What is written beside the task's new state at an attempt's end: the
// SKIPPED row of the slots the decision passed over, and what the run left
// in $TASKD_STATE.
core::Result<void> write_beside_state(store::Database& db, std::int64_t task_id, const core::FinishDecision& decision,
                                      const AttemptEnd& end, core::Time now) {
  if (decision.skipped) TRY(store::insert_skipped_run(db, task_id, *decision.skipped, now));
  if (end.state_blob) TRY(store::save_state_blob(db, task_id, *end.state_blob));
  return {};
}

// The policy's decision on the attempt's end, written.
core::Result<core::FinishDecision> apply_policy(store::Database& db, const core::Task& task, const AttemptEnd& end,
                                                core::Time now) {
  const auto& schedule = task.schedule.value();
  auto decision = TRY(finish_decision(db, task, schedule, end, now));
  TRY(store::save_state(db, task.id, decision.state, now));
  TRY(write_beside_state(db, task.id, decision, end, now));
  return decision;
}

// Why a follower cannot run now, if it cannot.
std::optional<std::string> why_follower_waits(const core::TaskState& state) {
  if (state.disabled_until_update) return "the task is disabled (" + state.disabled_reason + ")";
  if (state.paused) return std::string("the task is paused");
  return std::nullopt;
}

// The SKIPPED row of a follower whose row is malformed, which `end` would
// have started.
core::Result<void> skip_malformed_follower(store::Database& db, const store::MalformedTask& follower,
                                           const std::string& upstream, const AttemptEnd& end, core::Time now) {
  auto reason = fmt::format("not run after {} run {}: the task is malformed in the database: {}", upstream, end.run_id,
                            store::describe_problems(follower.problems));
  return store::insert_skipped_run(db, follower.readable.id, core::SkippedSlots{1, now, now, std::move(reason)}, now,
                                   end.run_id);
}

// A manual run of `follower` queued by the upstream's run `end`, as
// `taskd trigger` queues one; or, when it cannot run, one SKIPPED row that
// says why (and the follower's history kept within its --keep-runs).
core::Result<void> start_follower(store::Database& db, core::Task follower, const std::string& upstream,
                                  const AttemptEnd& end, const Followed& followed) {
  auto why = why_follower_waits(follower.state);
  if (!why) {
    auto queued = TRY(queue_manual_run(db, follower, follower.state, followed.now, end.run_id));
    if (queued.queued_run) {
      // Only a replaced attempt changes the follower's state.
      if (!queued.to_stop) return {};
      followed.to_stop.push_back(*queued.to_stop);
      return store::save_state(db, follower.id, follower.state, followed.now);
    }
    why = fmt::format("its run {} is still queued or running (overlap=skip)", *queued.active_run);
  }
  auto reason = fmt::format("not run after {} run {}: {}", upstream, end.run_id, *why);
  core::SkippedSlots skipped{1, followed.now, followed.now, std::move(reason)};
  TRY(store::insert_skipped_run(db, follower.id, skipped, followed.now, end.run_id));
  TRY(store::prune_history(db, follower.id, follower.definition.keep_runs));
  return {};
}

// The upstream's run `end` reached its final outcome: the followers it
// starts (--after on success, --after TASK:finished on any outcome). A
// follower whose row is malformed is not run: a SKIPPED row says why.
core::Result<void> start_followers(store::Database& db, const std::string& upstream, const AttemptEnd& end,
                                   const Followed& followed, const RowsReadUnderLock& rows) {
  if (!rows.may_have_followers(upstream)) return {};
  auto followers = TRY(store::followers_of(db, upstream));
  for (auto& follower : followers) {
    if (!store::readable(follower).definition.after.on_any_outcome && end.outcome != core::AttemptOutcome::succeeded)
      continue;
    TRY(follower ? start_follower(db, std::move(*follower), upstream, end, followed)
                 : skip_malformed_follower(db, follower.error(), upstream, end, followed.now));
  }
  return {};
}

// Starts the task's --notify command with what `facts` says of the change.
void run_notify_command(const core::Task& task, const core::NotifyFacts& facts) {
  // Of a task with --user, taskd runs it as itself (root): nothing its user
  // may have written (the --env, the --cwd) may choose what it executes.
  const bool as_user = !task.definition.user.empty();
  auto variables = core::notify_variables(facts);
  exec::SpawnRequest request{
      .argv = {"/bin/sh", "-c", task.definition.notify},
      .env = as_user ? fixed_environment(variables) : command_environment(task.definition, variables),
      .cwd = as_user ? std::string(1, '/') : task.definition.cwd};
  if (auto started = exec::spawn_detached(request, notify_time_limit); !started)
    fmt::print(stderr, "taskd: the notify command of task \"{}\" did not start: {}\n", task.definition.name,
               started.error().message);
}

// Where the mail goes out: the first sendmail in taskd's PATH, else where
// Debian's mail servers put it. Empty when there is none.
std::string sendmail_program() {
  const char* path = std::getenv("PATH");
  std::string search = std::string(path ? path : "") + ":/usr/sbin:/usr/lib";
  return exec::find_program("sendmail", search);
}

// Mails `facts` to the task's --mail-to through `sendmail -t -oi`, as cron
// mails a job's output to MAILTO. taskd says once on its stderr that it
// finds no sendmail; the run's outcome is the same either way.
void send_notify_mail(const core::Task& task, const core::NotifyFacts& facts, const AttemptEnd& end) {
  auto recipients = core::parse_mail_to(task.definition.mail_to);
  if (!recipients) {
    fmt::print(stderr, "taskd: no mail for task \"{}\": --mail-to {}\n", task.definition.name,
               recipients.error().message);
    return;
  }
  static std::atomic<bool> told_missing{false};
  auto sendmail = sendmail_program();
  if (sendmail.empty()) {
    if (!told_missing.exchange(true))
      fmt::print(stderr,
                 "taskd: no sendmail in PATH, /usr/sbin or /usr/lib: the mails of --mail-to are not sent (install a "
                 "mail server)\n");
    return;
  }
  auto mail = core::notify_mail(facts, *recipients, exec::host_name(), end.output);
  exec::SpawnRequest request{.argv = {sendmail, "-t", "-oi"}, .env = fixed_environment({}), .cwd = "/"};
  if (auto started = exec::spawn_detached(request, notify_time_limit, mail); !started)
    fmt::print(stderr, "taskd: the mail of task \"{}\" was not sent: {}\n", task.definition.name,
               started.error().message);
}

// Tells the task's --notify command, --mail-to addresses and --notify-url
// of the change the attempt made to the task's state, if it is one they are
// told of. They start after the commit: they never hear of a change that
// did not happen, and a crash between the two loses the notification.
void notify_change(const core::Task& task, const core::TaskState& after, const AttemptEnd& end, core::Time now) {
  const auto& definition = task.definition;
  if (definition.notify.empty() && definition.mail_to.empty() && definition.notify_url.empty()) return;
  auto event = core::state_change(task.state, after);
  if (!event) return;
  core::NotifyFacts facts{.event = *event,
                          .task = task.definition.name,
                          .run_id = end.run_id,
                          .status = core::run_status_of(end.outcome),
                          .exit_code = end.exit_code,
                          .signal = end.signal,
                          .reason = end.reason,
                          .disabled_reason = after.disabled_reason,
                          .attempt_no = task.state.attempt_no,
                          .started_at = task.state.attempt_started_at,
                          .at = now};
  if (!definition.notify.empty()) run_notify_command(task, facts);
  if (!definition.mail_to.empty()) send_notify_mail(task, facts, end);
  if (!definition.notify_url.empty())
    post_alert({.url = definition.notify_url,
                .body = core::notify_post(facts, definition.notify_format, exec::host_name(), end.output),
                .content_type = "application/json",
                .what = fmt::format("the {} notification of task \"{}\" (run {})", to_string(facts.event),
                                    definition.name, end.run_id)});
}

// Pings the task's --ping-url of the attempt's end.
void ping_end(const core::TaskDefinition& definition, const AttemptEnd& end) {
  if (definition.ping_url.empty()) return;
  auto ping = end.outcome == core::AttemptOutcome::succeeded ? core::Ping::success : core::Ping::failure;
  ping_run(definition.ping_url, definition.name, end.run_id, ping, end.output);
}

// The final row of the run of an attempt's end.
store::FinishRecord finish_record(const AttemptEnd& end, core::Time now) {
  return {end.run_id,      end.attempt_uid, core::run_status_of(end.outcome),
          now,             end.exit_code,   end.signal,
          end.reason,      end.output,      end.output_truncated,
          end.usage};
}

// The run row of an attempt's end (back in the queue when taskd's shutdown
// ended it); false for a stale attempt.
core::Result<bool> finish_attempt_run(store::Database& db, const AttemptEnd& end, core::Time now) {
  if (end.shutdown)
    return store::requeue_run(db, {end.run_id, end.attempt_uid, end.shutdown->run_attempt_no,
                                   end.shutdown->run_index, end.reason});
  return store::finish_run(db, finish_record(end, now));
}

// What recording an attempt's end (its run row already written, `finished`
// when it was the running attempt) did: the change to the task when the
// attempt was its current one, and whether its followers are to start.
// The end of a task whose row is malformed changes nothing of the task (its
// next tick disables it) and starts no follower; it was current if its run
// was running.
struct Recorded {
  bool current = false;
  std::optional<StateChange> change;
  bool final_outcome = false;
};

core::Result<Recorded> record_in_transaction(store::Database& db, const AttemptEnd& end, bool finished,
                                             core::Time now, RowsReadUnderLock& rows) {
  auto found = TRY(rows.take(db, end.task_id));
  if (!found) return Recorded{};
  if (!*found) return Recorded{.current = finished};
  core::Task task = std::move(**found);
  TRY(store::prune_history(db, end.task_id, task.definition.keep_runs));
  bool is_current = finished && task.state.attempt_uid == end.attempt_uid;
  if (!is_current) return Recorded{};
  if (end.shutdown) {
    TRY(store::save_state(db, task.id, core::on_shutdown_end(task.state, end.shutdown->before_start), now));
    if (end.state_blob) {
      TRY(store::save_state_blob(db, task.id, *end.state_blob));  // what it kept so far, as any ended attempt
    }
    return Recorded{.current = true};
  }
  auto decision = TRY(apply_policy(db, task, end, now));
  return Recorded{true, StateChange{std::move(task), std::move(decision.state)}, !decision.retry_pending};
}

// The end of an attempt whose task's row the lock read
// (take_for_one_write): its run's end, the task's new state and its pruned
// history in one write. Whether that ended the run, and what it recorded.
core::Result<std::pair<bool, Recorded>> record_in_one_write(store::Database& db, const AttemptEnd& end,
                                                            core::Task task, core::Time now) {
  auto decision = core::on_finish(task.definition, task.schedule.value(), task.state, now, end.outcome, end.reason);
  bool finished = TRY(store::finish_run_saving_state(db, finish_record(end, now), task.id, decision.state,
                                                     task.definition.keep_runs, now));
  if (!finished) return std::pair(false, Recorded{});
  TRY(write_beside_state(db, task.id, decision, end, now));
  bool final_outcome = !decision.retry_pending;
  return std::pair(true, Recorded{true, StateChange{std::move(task), std::move(decision.state)}, final_outcome});
}

}  // namespace

core::Result<EndRecorded> record_attempt_end(store::Database& db, const AttemptEnd& end, core::Time now) {
  auto recorded = TRY(record_attempt_ends(db, {end}, now));
  return recorded.front();
}

core::Result<std::vector<EndRecorded>> record_attempt_ends(store::Database& db, const std::vector<AttemptEnd>& ends,
                                                           core::Time now) {
  auto recorded =
      TRY(store::write(db, [&]() { return record_attempt_ends_within(db, ends, now); }, store::WriteScope::rows));
  after_commit(recorded, now);
  std::vector<EndRecorded> each;
  for (std::size_t i = 0; i < ends.size(); ++i) each.push_back({recorded.written[i], recorded.current[i]});
  return each;
}

core::Result<RecordedEnds> record_attempt_ends_within(store::Database& db, const std::vector<AttemptEnd>& ends,
                                                      core::Time now) {
  RecordedEnds recorded;
  std::vector<std::int64_t> task_ids;
  for (const auto& end : ends) task_ids.push_back(end.task_id);
  RowsReadUnderLock rows(TRY(store::lock_tasks_and_followers(db, task_ids)));
  // Every run of the batch ends before any follower starts: a follower's own
  // run may have ended in it too, and is then no longer running. An attempt
  // whose task's row the lock read ends with its task's new state, in one
  // write (below); the others' runs end first.
  std::vector<std::optional<core::Task>> in_one_write;
  std::vector<bool> finished;
  for (const auto& end : ends) {
    in_one_write.push_back(rows.take_for_one_write(end));
    bool written = false;
    if (!in_one_write.back()) written = TRY(finish_attempt_run(db, end, now));
    finished.push_back(written);
  }
  std::vector<std::pair<std::string, const AttemptEnd*>> final_outcomes;  // by the upstream's name
  for (std::size_t i = 0; i < ends.size(); ++i) {
    Recorded result;
    if (in_one_write[i]) {
      auto [written, recorded_end] = TRY(record_in_one_write(db, ends[i], std::move(*in_one_write[i]), now));
      finished[i] = written;
      result = std::move(recorded_end);
    } else {
      result = TRY(record_in_transaction(db, ends[i], finished[i], now, rows));
    }
    recorded.written.push_back(finished[i]);
    recorded.current.push_back(result.current);
    if (!result.change) continue;
    if (result.final_outcome) final_outcomes.emplace_back(result.change->task.definition.name, &ends[i]);
    recorded.changes.push_back({&ends[i], std::move(*result.change)});
  }
  Followed followed{now, recorded.to_stop};
  for (const auto& [upstream, end] : final_outcomes) {
    TRY(start_followers(db, upstream, *end, followed, rows));
  }
  return recorded;
}

void after_commit(const RecordedEnds& recorded, core::Time now) {
  stop_children(system_processes(), recorded.to_stop);
  for (const auto& [end, change] : recorded.changes) {
    notify_change(change.task, change.after, *end, now);
    ping_end(change.task.definition, *end);
  }
}

core::Result<MalformedReport> disable_malformed(store::Database& db, const store::MalformedTask& task, core::Time now) {
  MalformedReport report{task.readable.definition.name, store::describe_problems(task.problems)};
  TRY(store::disable_task(db, task.readable.id, "malformed in the database: " + report.problem, now));
  return report;
}

core::Result<void> write_decision(store::Database& db, std::int64_t task_id, const core::TaskState& state,
                                  const std::optional<core::SkippedSlots>& skipped, core::Time now) {
  if (skipped) {
    TRY(store::insert_skipped_run(db, task_id, *skipped, now));
  }
  return store::save_state(db, task_id, state, now);
}

}  // namespace taskd::sched
