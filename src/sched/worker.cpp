#include "sched/worker.hpp"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <fmt/format.h>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <ranges>
#include <unistd.h>

#include "core/backfill.hpp"
#include "core/policy.hpp"
#include "exec/env_file.hpp"
#include "exec/handover.hpp"
#include "exec/process_identity.hpp"
#include "exec/run_as.hpp"
#include "exec/run_files.hpp"
#include "exec/spawn_ledger.hpp"
#include "sched/delivery.hpp"
#include "sched/environment.hpp"
#include "sched/outcome.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"

namespace taskd::sched {
namespace {

using core::Result;
using core::Time;

// A run this worker has claimed: the task as it was at the claim, the
// attempt's token and deadline, the task's kept state at the claim, and
// when, by this process's monotonic clock, its lease was taken.
struct Claimed {
  store::RunRecord run;
  core::Task task;
  std::string attempt_uid;
  Time deadline;
  std::string state_blob;
  exec::SteadyTime leased_at;
  std::string stop_reason;  // why another host asked it to stop ('': it did not)
  core::TaskState before_start;  // the task's state before this attempt started
};

// One instant on both clocks: the (server's) time, and this process's
// monotonic clock, which leases are kept by.
struct Instant {
  Time now;
  exec::SteadyTime steady;
};

// A child started and not yet recorded in its run.
struct Spawned {
  std::int64_t run_id;
  exec::StartedProcess child;
};

struct InFlight {
  Claimed claimed;
  exec::RunFiles files;
  std::size_t output_written = 0;  // bytes its child had written when its output was last stored
};

// What a child's ending means for the policy, and the words for history.
struct Verdict {
  core::AttemptOutcome outcome;
  std::string reason;
  std::optional<int> exit_code;
  std::optional<int> signal;
};

std::string signal_name(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signal);
}

std::string joined(std::string_view head, const std::string& detail) {
  return detail.empty() ? std::string(head) : fmt::format("{}: {}", head, detail);
}

Verdict judge(const exec::ChildResult& result, const Claimed& claimed, const std::string& status_line) {
  const auto& definition = claimed.task.definition;
  Time started = claimed.task.state.attempt_started_at.value_or(claimed.deadline);
  std::string detail = status_line.empty() ? exec::last_line(result.output) : status_line;
  Verdict verdict{core::AttemptOutcome::failed, "", std::nullopt, std::nullopt};
  if (result.exit_code >= 0) verdict.exit_code = result.exit_code;
  if (result.signal > 0) verdict.signal = result.signal;
  if (result.fenced && !claimed.stop_reason.empty()) {
    verdict.reason = claimed.stop_reason;
  } else if (result.fenced) {
    verdict.outcome = core::AttemptOutcome::lost;
    verdict.reason = "lost: the run's lease was not renewed in time (the database out of reach, or the run taken "
                     "for lost by another host), so its worker ended it";
  } else if (result.timed_out) {
    verdict.outcome = core::AttemptOutcome::timed_out;
    verdict.reason = fmt::format("timed out after {} ({} sent to its processes)",
                                 core::format_duration(std::chrono::round<core::Seconds>(claimed.deadline - started)),
                                 result.signal == SIGKILL ? "SIGTERM, then SIGKILL" : "SIGTERM");
  } else if (result.exit_code == 0) {
    verdict.outcome = core::AttemptOutcome::succeeded;
    verdict.reason = status_line;
  } else if (result.signal > 0) {
    verdict.reason = joined(fmt::format("killed by {}", signal_name(result.signal)), detail);
  } else if (std::ranges::find(definition.permanent_exit, result.exit_code) != definition.permanent_exit.end()) {
    verdict.outcome = core::AttemptOutcome::permanent_failure;
    verdict.reason = detail.empty() ? fmt::format("exit code {} (a permanent failure)", result.exit_code) : detail;
  } else {
    verdict.reason = joined(fmt::format("exit code {}", result.exit_code), detail);
  }
  if (result.stopped && verdict.outcome != core::AttemptOutcome::succeeded)
    verdict.reason = joined("stopped as taskd shut down", verdict.reason);
  return verdict;
}

// Whether taskd's shutdown ended the attempt before it was done (its own
// success stands, and a fenced run is no longer this worker's to judge).
bool ended_by_shutdown(const exec::ChildResult& result, const Verdict& verdict) {
  return result.stopped && !result.fenced && verdict.outcome != core::AttemptOutcome::succeeded;
}

bool has_own_ladder(const store::RunRecord& run) {
  return core::has_own_ladder(run.trigger, run.scheduled_at, run.enqueued_at, run.upstream_run_id.has_value());
}

// The attempt number of a run that starts with the task in `state`: a run
// with its own ladder counts its own attempts (queued with it; the first
// run a chain queues is its first).
int attempt_no_of(const store::RunRecord& run, const core::TaskState& state) {
  return has_own_ladder(run) ? std::max(run.attempt_no, 1) : state.attempt_no;
}

// How a claimed run starts: as a run with its own ladder, a manual or a scheduled run.
core::StartDecision start_decision(const store::RunRecord& run, const core::Task& task,
                                   const core::Schedule& schedule, Time now) {
  if (has_own_ladder(run)) return core::on_backfill_start(task.definition, schedule, task.state, now, new_attempt_uid());
  if (run.trigger == core::Trigger::manual)
    return core::on_manual_start(task.definition, schedule, task.state, now, new_attempt_uid());
  return core::on_start(task.definition, schedule, task.state, run.scheduled_at, now, new_attempt_uid());
}

// Whom the task's runs switch to (--user), as the databases have them now;
// none when they run as taskd does.
Result<std::optional<exec::RunAsUser>> run_as_user(const core::TaskDefinition& definition) {
  if (definition.user.empty()) return std::nullopt;
  return TRY(exec::resolve_run_as(TRY(core::parse_run_as(definition.user))));
}

// What cron tells a command of the user it runs as.
std::vector<core::EnvVar> account_variables(const exec::RunAsUser& user) {
  return {{"HOME", user.home}, {"USER", user.name}, {"LOGNAME", user.name}, {"SHELL", user.shell}};
}

// The variables of the task's --env-file, read now (none without one).
Result<std::vector<core::EnvVar>> env_file_variables(const core::TaskDefinition& definition,
                                                     const exec::Credentials* credentials) {
  if (definition.env_file.empty()) return std::vector<core::EnvVar>{};
  return exec::read_env_file(definition.env_file, credentials ? std::optional<uid_t>(credentials->uid) : std::nullopt);
}

// `shared_host`: the host id, on a store that several hosts may share;
// `user`: whom the run switches to; `from_file`: its --env-file's variables.
std::vector<std::string> child_environment(const Claimed& claimed, const exec::RunFiles& files,
                                           const std::optional<std::string>& shared_host,
                                           const std::optional<exec::RunAsUser>& user,
                                           const std::vector<core::EnvVar>& from_file) {
  const auto& state = claimed.task.state;
  auto deadline = std::chrono::floor<std::chrono::seconds>(claimed.deadline).time_since_epoch().count();
  std::vector<core::EnvVar> taskd_variables{
      {"TASKD_TASK", claimed.task.definition.name},
      {"TASKD_RUN_ID", std::to_string(claimed.run.id)},
      {"TASKD_ATTEMPT_UID", claimed.attempt_uid},
      {"TASKD_ATTEMPT_NO", std::to_string(attempt_no_of(claimed.run, state))},
      {"TASKD_RUN_INDEX", std::to_string(state.run_index)},
      {"TASKD_SCHEDULED_AT", core::format_rfc3339(claimed.run.scheduled_at)},
      {"TASKD_DEADLINE", std::to_string(deadline)},
      {"TASKD_STATE", files.state_path()},
      {"TASKD_STATUS", files.status_path()}};
  if (shared_host) taskd_variables.emplace_back("TASKD_HOST", *shared_host);
  if (claimed.run.upstream_run_id)
    taskd_variables.emplace_back("TASKD_UPSTREAM_RUN_ID", std::to_string(*claimed.run.upstream_run_id));
  if (user) return user_environment(claimed.task.definition, taskd_variables, account_variables(*user), from_file);
  return command_environment(claimed.task.definition, taskd_variables, from_file);
}

std::vector<std::string> child_argv(const core::Command& command) {
  if (!command.shell) return command.argv;
  return {"/bin/sh", "-c", command.argv.empty() ? std::string() : command.argv.front()};
}

// Claims per Worker::fill, so that a loop looks at its signals and children
// between them.
constexpr int batches_per_fill = 16;

// How often a lease whose run's row another transaction held is tried
// again, in parts of the lease: the holder, ended by the server a quarter
// lease after it stopped, lets go well before the lease's fencing point.
constexpr int held_lease_retries_per_lease = 16;

// How often the output so far of a run in flight is stored, and how long a
// run goes before it is first: a run shorter than this costs no write.
constexpr std::chrono::seconds output_write_period{1};

std::optional<std::int64_t> ms_of(const std::optional<Time>& at) {
  if (!at) return std::nullopt;
  return at->time_since_epoch().count();
}

Time time_of(std::int64_t ms) { return Time(core::Millis(ms)); }

void put_time(exec::RecordWriter& record, const std::optional<Time>& at) { record.optional(ms_of(at)); }

Result<std::optional<Time>> get_time(exec::RecordReader& record, std::string_view what) {
  auto ms = TRY(record.optional(what));
  return ms ? std::optional<Time>(time_of(*ms)) : std::nullopt;
}

// A run in flight as the hand-over record holds it: what its end needs of
// its run and its task (the task's name, permanent exit codes and kill
// grace, and when the attempt started; the rest of the definition is the
// database's), and of the task's state before it started (what a shutdown
// puts back).
void write_claimed(exec::RecordWriter& record, const Claimed& claimed, std::size_t output_written) {
  const auto& run = claimed.run;
  record.number(run.id);
  record.number(run.task_id);
  record.text(run.task);
  record.number(static_cast<std::int64_t>(run.trigger));
  put_time(record, run.scheduled_at);
  put_time(record, run.enqueued_at);
  record.number(run.attempt_no);
  record.number(run.run_index);
  record.flag(run.upstream_run_id.has_value());
  if (run.upstream_run_id) record.number(*run.upstream_run_id);
  const auto& definition = claimed.task.definition;
  record.number(claimed.task.id);
  record.text(definition.name);
  record.number(static_cast<std::int64_t>(definition.permanent_exit.size()));
  for (int code : definition.permanent_exit) record.number(code);
  record.number(definition.kill_grace.count());
  put_time(record, claimed.task.state.attempt_started_at);
  record.text(claimed.attempt_uid);
  put_time(record, claimed.deadline);
  record.text(claimed.state_blob);
  record.steady(claimed.leased_at);
  record.text(claimed.stop_reason);
  record.number(claimed.before_start.attempt_no);
  record.number(claimed.before_start.run_index);
  put_time(record, claimed.before_start.last_run_at);
  record.number(static_cast<std::int64_t>(output_written));
}

Result<Claimed> read_claimed(exec::RecordReader& record, std::size_t& output_written) {
  constexpr auto most = std::numeric_limits<std::int64_t>::max();
  Claimed claimed;
  auto& run = claimed.run;
  run.id = TRY(record.number_in("run id", 1, most));
  run.task_id = TRY(record.number_in("run's task", 1, most));
  run.task = TRY(record.text("run's task name"));
  run.status = core::RunStatus::running;
  run.trigger = static_cast<core::Trigger>(TRY(record.number_in("trigger", 0, 2)));
  auto scheduled = TRY(get_time(record, "slot"));
  auto enqueued = TRY(get_time(record, "queued time"));
  if (!scheduled || !enqueued) return core::fail(core::ErrorKind::bad_input, "the hand-over record's run has no slot");
  run.scheduled_at = *scheduled;
  run.enqueued_at = *enqueued;
  run.attempt_no = static_cast<int>(TRY(record.number_in("run's attempt", 0, std::numeric_limits<int>::max())));
  run.run_index = TRY(record.number("run index"));
  if (TRY(record.flag("upstream run"))) run.upstream_run_id = TRY(record.number("upstream run"));
  auto& task = claimed.task;
  task.id = TRY(record.number_in("task id", 1, most));
  task.definition.name = TRY(record.text("task name"));
  task.definition.permanent_exit.clear();
  auto codes = TRY(record.number_in("count of permanent exit codes", 0, 256));
  for (std::int64_t i = 0; i < codes; ++i)
    task.definition.permanent_exit.push_back(static_cast<int>(TRY(record.number_in("permanent exit code", 0, 255))));
  task.definition.kill_grace = core::Seconds(TRY(record.number_in("kill grace", 0, most / 1000)));
  task.state.attempt_started_at = TRY(get_time(record, "attempt's start"));
  claimed.attempt_uid = TRY(record.text("attempt token"));
  task.state.attempt_uid = claimed.attempt_uid;
  auto deadline = TRY(get_time(record, "deadline"));
  if (!deadline) return core::fail(core::ErrorKind::bad_input, "the hand-over record's run has no deadline");
  claimed.deadline = *deadline;
  claimed.state_blob = TRY(record.text("kept state"));
  claimed.leased_at = TRY(record.steady("lease"));
  claimed.stop_reason = TRY(record.text("stop request"));
  claimed.before_start.attempt_no = static_cast<int>(TRY(record.number_in("task's attempt", 0, std::numeric_limits<int>::max())));
  claimed.before_start.run_index = TRY(record.number("task's run index"));
  claimed.before_start.last_run_at = TRY(get_time(record, "task's last run"));
  output_written = static_cast<std::size_t>(TRY(record.number_in("output stored", 0, most)));
  return claimed;
}

}  // namespace

struct HandedRun {
  Claimed claimed;
  std::size_t output_written = 0;
};

class WorkerImpl {
 public:
  WorkerImpl(store::Database& db, const Clock& clock, exec::Runner& runner, const WorkerOptions& options)
      : db_(db), clock_(clock), runner_(runner), options_(options),
        identity_(current_worker(options.host_id)) {
    // No wait on the server past the moment a lease must be acted on.
    if (options_.lease) {
      store::limit_waits(db_, [this] { return runner_.next_lease_action(); });
      store::bound_session(db_, session_bounds(*options_.lease));
    }
  }
  ~WorkerImpl() {
    if (options_.lease) store::limit_waits(db_, {});
  }
  WorkerImpl(const WorkerImpl&) = delete;
  WorkerImpl& operator=(const WorkerImpl&) = delete;

  void stop_claiming() { claiming_ = false; }
  void resume_claiming() { claiming_ = true; }
  std::size_t running() const { return runner_.running(); }
  bool has_unwritten_ends() const { return !unrecorded_ends_.empty(); }
  bool runs_as_a_user() const {
    return std::ranges::any_of(in_flight_, [](const auto& entry) { return entry.second.files.owned_by_a_user(); });
  }
  std::vector<RunReport> take_reports() { return std::exchange(reports_, {}); }

  void hand_over(exec::RecordWriter& record) {
    record.flag(run_directory_.has_value());
    if (run_directory_) {
      run_directory_->remove_users_directories();
      auto directory = run_directory_->handed();
      record.text(directory.path);
      record.number(static_cast<std::int64_t>(directory.spares.size()));
      for (const auto& spare : directory.spares) record.text(spare);
      record.number(static_cast<std::int64_t>(directory.spares_named));
    }
    record.steady(renewed_at_);
    record.steady(output_written_at_);
    record.number(static_cast<std::int64_t>(in_flight_.size()));
    for (const auto& [key, flight] : in_flight_) write_claimed(record, flight.claimed, flight.output_written);
  }

  std::vector<exec::ShutdownEntry> shutdown_entries() const {
    std::vector<exec::ShutdownEntry> entries;
    for (const auto& [key, flight] : in_flight_) {
      const auto& claimed = flight.claimed;
      entries.push_back({.run_id = claimed.run.id,
                         .task_id = claimed.task.id,
                         .task = claimed.task.definition.name,
                         .attempt_uid = claimed.attempt_uid,
                         .trigger = static_cast<std::int64_t>(claimed.run.trigger),
                         .kill_grace_seconds = claimed.task.definition.kill_grace.count(),
                         .run_attempt_no = claimed.run.attempt_no,
                         .run_index = claimed.run.run_index,
                         .before_attempt_no = claimed.before_start.attempt_no,
                         .before_run_index = claimed.before_start.run_index,
                         .before_last_run_at_ms = ms_of(claimed.before_start.last_run_at)});
    }
    return entries;
  }

  void adopt(WorkerHandover handover) {
    if (handover.run_directory) run_directory_.emplace(std::move(*handover.run_directory));
    renewed_at_ = handover.renewed_at;
    output_written_at_ = handover.output_written_at;
    for (auto& run : handover.runs) {
      auto key = static_cast<std::uint64_t>(run.claimed.run.id);
      auto files = run_directory_->files_of(run.claimed.run.id);
      in_flight_.emplace(key, InFlight{std::move(run.claimed), std::move(files), run.output_written});
    }
  }

  // Claims and launches runs until every slot is busy, the queue is empty or
  // `max_batches` claims were made; `more` in the last case, when the queue
  // may hold more for free slots (drops take no slot: a long queue of them
  // is taken a bounded piece at a time).
  Result<Filled> fill(int max_batches) {
    for (int round = 0; round < max_batches; ++round) {
      // A claim may wait for locks: the leases are not left to wait with it.
      TRY(keep_leases());
      int slots = free_slots();
      if (slots <= 0) return Filled::done;
      auto batch = TRY(store::write(db_, [&]() { return claim(slots, instant()); }, store::WriteScope::rows));
      if (batch.queued_seen == 0) {
        auto held = store::wait_for_held_claimable_run(db_, clock_.now(), identity_.host);
        if (held && *held) continue;  // another host's transaction held it: it has ended
        if (!held && held.error().kind != core::ErrorKind::busy) return std::unexpected(held.error());
        return held ? Filled::done : Filled::held;
      }
      TRY(launch_all(std::move(batch)));
    }
    return Filled::more;
  }

  // Records the ends of the children in `results` and, in the same
  // transaction, claims runs for the slots they freed; then starts those.
  Result<void> record(const std::vector<exec::ChildResult>& results) {
    for (const auto& result : results) {
      auto node = in_flight_.extract(result.key);
      if (node.empty()) continue;
      options_.crash.reached(CrashPoint::after_exit);
      auto& claimed = node.mapped().claimed;
      auto& files = node.mapped().files;
      auto left = run_directory_->collect(std::move(files), options_.state_limit);
      auto verdict = judge(result, claimed, left.status_line);
      auto end = attempt_end(claimed, verdict, result, &left.state);
      // A run that taskd's shutdown ended goes back to the queue for its slot.
      if (ended_by_shutdown(result, verdict)) requeue(end, claimed);
      unrecorded_ends_.push_back(std::move(end));
      unrecorded_runs_.push_back(std::move(claimed));
    }
    if (unrecorded_ends_.empty()) return {};
    // The ends' write may wait for a task's row: a renewal due goes first.
    TRY(keep_leases());
    auto at = instant();
    struct Written {
      RecordedEnds ends;
      ClaimBatch refill;
    };
    auto written = TRY(store::write(db_, [&]() -> Result<Written> {
      auto recorded = TRY(record_attempt_ends_within(db_, unrecorded_ends_, at.now));
      auto refill = TRY(claim(free_slots(), at));
      return Written{std::move(recorded), std::move(refill)};
    }, store::WriteScope::rows));
    after_commit(written.ends, at.now);
    auto ends = std::exchange(unrecorded_ends_, {});
    auto runs = std::exchange(unrecorded_runs_, {});
    for (std::size_t i = 0; i < ends.size(); ++i) report_end(runs[i], ends[i], written.ends.current[i], at.now);
    return launch_all(std::move(written.refill));
  }

  Result<void> keep_leases() {
    auto due = next_renewal_at();
    if (!due || std::chrono::steady_clock::now() < *due) return {};
    return renew_leases();
  }

  Result<void> renew_leases() {
    if (!options_.lease || (in_flight_.empty() && unrecorded_runs_.empty())) return {};
    auto at = instant();
    std::vector<store::HeldLease> held;
    for (const auto& [key, flight] : in_flight_) held.push_back({flight.claimed.run.id, flight.claimed.attempt_uid});
    // A run whose child ended keeps its lease until its end is written (its
    // task's row held by another transaction meanwhile): another host would
    // take it for lost.
    for (const auto& run : unrecorded_runs_) held.push_back({run.run.id, run.attempt_uid});
    auto renewed = TRY(store::renew_leases(db_, held, at.now + *options_.lease));
    lease_held_ = false;
    for (auto& [key, flight] : in_flight_) {
      auto kept = std::ranges::find(renewed, flight.claimed.run.id, &store::RenewedLease::run_id);
      if (kept != renewed.end() && kept->held) {
        lease_held_ = true;  // its fencing point stays that of its last renewal
        continue;
      }
      if (kept != renewed.end()) flight.claimed.stop_reason = kept->stop_reason;
      bool ends_now = kept == renewed.end() || !kept->stop_reason.empty();
      runner_.hold_lease(key, ends_now ? at.steady : fencing_point(at.steady));
    }
    renewed_at_ = at.steady;
    stop_asked_ = false;
    return {};
  }

  std::optional<exec::SteadyTime> next_renewal_at() const {
    if (!options_.lease || (in_flight_.empty() && unrecorded_runs_.empty())) return std::nullopt;
    exec::SteadyTime::duration interval = *options_.lease / 4;
    if (stop_asked_) interval = std::min<exec::SteadyTime::duration>(interval, stop_request_delay);
    if (lease_held_)
      interval = std::min<exec::SteadyTime::duration>(interval, *options_.lease / held_lease_retries_per_lease);
    return renewed_at_ + interval;
  }

  void look_for_stop_requests() { stop_asked_ = true; }

  // Stores the output so far of each run in flight for a period or more
  // whose child wrote more since, once a period at most. Worth nothing late
  // and never waited for: when the database is busy or out of reach, the
  // rest waits for the next time.
  void write_output_so_far() {
    auto due = next_output_write_at();
    auto now = std::chrono::steady_clock::now();
    if (!due || now < *due) return;
    output_written_at_ = now;
    for (auto& [key, flight] : in_flight_) {
      if (now < flight.claimed.leased_at + output_write_period) continue;
      auto so_far = runner_.output_so_far(key);
      if (!so_far || so_far->total_bytes == flight.output_written) continue;
      store::HeldLease attempt{flight.claimed.run.id, flight.claimed.attempt_uid};
      auto written = store::write_output_so_far(db_, attempt, so_far->output, so_far->truncated);
      if (!written || !*written) return;
      flight.output_written = so_far->total_bytes;
    }
  }

  std::optional<exec::SteadyTime> next_output_write_at() const {
    if (in_flight_.empty()) return std::nullopt;
    auto oldest = std::ranges::min(in_flight_ | std::views::values |
                                   std::views::transform([](const InFlight& flight) { return flight.claimed.leased_at; }));
    return std::max(output_written_at_, oldest) + output_write_period;
  }

 private:
  Instant instant() const { return {clock_.now(), std::chrono::steady_clock::now()}; }

  // Where a lease taken or renewed at `leased_at` is given up: half of it
  // later, so that the child is dead (a kill grace later at the most, and a
  // wait on the server cut short at this point) long before the lease ends
  // on the database.
  exec::SteadyTime fencing_point(exec::SteadyTime leased_at) const { return leased_at + *options_.lease / 2; }

  bool may_claim() const {
    return claiming_ && (!options_.claim_until || clock_.now() < *options_.claim_until);
  }

  struct ClaimBatch {
    std::vector<Claimed> claimed;  // in the order claimed; their tasks and groups count for the later ones
    std::vector<RunReport> dropped;
    std::size_t queued_seen = 0;  // claimed, dropped, or taken by another worker
  };

  // The slots free for a claim now: none once claiming has stopped.
  int free_slots() const {
    return may_claim() ? options_.concurrency - static_cast<int>(runner_.running()) : 0;
  }

  // Claims up to `limit` queued runs inside the caller's transaction: each is
  // dropped by the drop rule or becomes a RUNNING attempt with a new token.
  Result<ClaimBatch> claim(int limit, Instant at) {
    ClaimBatch batch;
    if (limit <= 0) return batch;
    auto queued = TRY(store::next_queued_runs(db_, at.now, limit, identity_.host));
    batch.queued_seen = queued.size();
    std::vector<std::int64_t> task_ids;
    for (const auto& run : queued) task_ids.push_back(run.task_id);
    TRY(store::lock_groups_of(db_, task_ids));
    for (const auto& run : queued) {
      TRY(start_run(run, at, batch));
    }
    return batch;
  }

  // Reports the drops of a committed claim and starts the children of its
  // runs, then records them in their runs.
  Result<void> launch_all(ClaimBatch batch) {
    std::ranges::move(batch.dropped, std::back_inserter(reports_));
    if (batch.claimed.empty()) return {};
    options_.crash.reached(CrashPoint::after_claim);
    std::vector<Spawned> spawned;
    for (auto& run : batch.claimed) {
      auto launched = TRY(launch(std::move(run)));
      if (launched) spawned.push_back(*launched);
    }
    return note_children(spawned);
  }

  // Starts `run`, found claimable by this transaction's query, or drops it;
  // adds it to `batch`.
  Result<void> start_run(const store::RunRecord& run, Instant at, ClaimBatch& batch) {
    Time now = at.now;
    auto found = TRY(store::find_task_to_claim(db_, run.id, run.task_id, now, identity_.host));
    if (!found || !found->claimable) return {};  // removed since, or filled by a run claimed before it
    if (!found->task) return drop_malformed(run, found->task.error(), now, batch);
    core::Task task = std::move(*found->task);
    const auto& schedule = task.schedule.value();
    std::optional<std::string> dropped = core::drop_reason(task.definition, schedule, task.state, run.trigger, now);
    if (task.state.disabled_until_update) dropped = "dropped: the task is disabled: " + task.state.disabled_reason;
    if (dropped) {
      TRY(store::mark_dropped(db_, run.id, *dropped, now));
      batch.dropped.push_back({run.id, run.task, core::RunStatus::dropped, *dropped});
      return {};
    }
    auto decision = start_decision(run, task, schedule, now);
    Time lease_base = options_.lease ? now + *options_.lease : decision.deadline;
    store::StartRecord start{run.id, decision.state.attempt_uid, attempt_no_of(run, decision.state),
                             decision.state.run_index, now, decision.deadline,
                             lease_base + task.definition.kill_grace, identity_};
    if (!TRY(store::mark_running(db_, start, task.id, decision.state, now))) return {};
    if (decision.skipped) TRY(store::insert_skipped_run(db_, task.id, *decision.skipped, now));
    auto before_start = std::exchange(task.state, decision.state);
    batch.claimed.push_back({run, std::move(task), decision.state.attempt_uid, decision.deadline,
                             std::move(found->state_blob), at.steady, "", std::move(before_start)});
    return {};
  }

  // Drops `run`, whose task's row is malformed, and disables the task: taskd
  // runs no malformed task.
  Result<void> drop_malformed(const store::RunRecord& run, const store::MalformedTask& task, Time now,
                              ClaimBatch& batch) {
    auto disabled = TRY(disable_malformed(db_, task, now));
    auto reason = "dropped: the task is malformed in the database: " + disabled.problem;
    TRY(store::mark_dropped(db_, run.id, reason, now));
    batch.dropped.push_back({run.id, run.task, core::RunStatus::dropped, std::move(reason)});
    return {};
  }

  // Starts the claimed run's child; the child to record in the run, or
  // nothing when it could not start (and that is recorded as its end).
  Result<std::optional<Spawned>> launch(Claimed claimed) {
    const auto& definition = claimed.task.definition;
    auto user = run_as_user(definition);
    if (!user) return not_started(claimed, user.error().message, nullptr);
    const exec::Credentials* credentials = *user ? &(*user)->credentials : nullptr;
    auto from_file = env_file_variables(definition, credentials);
    if (!from_file) return not_started(claimed, from_file.error().message, nullptr);
    auto files = run_files_for(claimed.run.id, claimed.state_blob, credentials);
    if (!files) return not_started(claimed, files.error().message, nullptr);
    auto ledger = spawn_ledger();
    if (!ledger) return not_started(claimed, ledger.error().message, &*files);
    auto shared_host = db_.file() ? std::nullopt : std::optional<std::string>(identity_.host);
    exec::SpawnRequest request{child_argv(definition.command),
                               child_environment(claimed, *files, shared_host, *user, *from_file), definition.cwd,
                               *ledger, claimed.attempt_uid};
    if (credentials) {
      request.credentials = *credentials;
      request.home = (*user)->home;
    }
    exec::ChildLimits limits{std::chrono::ceil<std::chrono::milliseconds>(claimed.deadline - clock_.now()),
                             definition.kill_grace, static_cast<std::size_t>(definition.keep_output),
                             definition.limits};
    auto key = static_cast<std::uint64_t>(claimed.run.id);
    auto child = runner_.start(key, request, limits);
    if (!child) return not_started(claimed, child.error().message, &*files);
    options_.crash.reached(CrashPoint::after_spawn);
    if (options_.lease) {
      runner_.hold_lease(key, fencing_point(claimed.leased_at));
      // The first run in flight: the claim took its lease, renewed a
      // quarter of the lease later.
      if (in_flight_.empty()) renewed_at_ = claimed.leased_at;
    }
    Spawned spawned{claimed.run.id, *child};
    reports_.emplace_back(claimed.run.id, definition.name, core::RunStatus::running, "");
    if (!definition.ping_url.empty())
      ping_run(definition.ping_url, definition.name, claimed.run.id, core::Ping::start, "");
    in_flight_.emplace(key, InFlight{std::move(claimed), std::move(*files)});
    return std::optional<Spawned>(spawned);
  }

  // Records as failed a claimed run whose child could not start, and why;
  // its files, if it has them yet, are collected first.
  Result<std::optional<Spawned>> not_started(const Claimed& claimed, const std::string& why, exec::RunFiles* files) {
    Verdict verdict{core::AttemptOutcome::failed, why, std::nullopt, std::nullopt};
    std::optional<exec::RunLeftovers> left;
    if (files) left = run_directory_->collect(std::move(*files), options_.state_limit);
    auto end = attempt_end(claimed, verdict, exec::ChildResult{}, left ? &left->state : nullptr);
    Time now = clock_.now();
    auto recorded = TRY(record_attempt_end(db_, end, now));
    report_end(claimed, end, recorded.current, now);
    return std::optional<Spawned>();
  }

  // Records the children just started in their runs, so that a recovery
  // after this worker dies kills their process groups; then the spawn
  // ledger, which told their pids until now, is emptied.
  Result<void> note_children(const std::vector<Spawned>& spawned) {
    if (spawned.empty()) return {};
    std::vector<store::ChildRecord> children;
    for (const auto& [run_id, child] : spawned) children.push_back({run_id, child.pid, child.start_ticks});
    auto noted = store::set_children(db_, children);
    if (noted) spawn_ledger_->clear();
    return noted;
  }

  // The descriptor of this worker's spawn ledger (made at its first run).
  Result<int> spawn_ledger() {
    if (!spawn_ledger_) {
      auto made = TRY(
          exec::SpawnLedger::create(exec::spawn_ledger_path(db_.local_stem(), identity_.pid, identity_.started_at)));
      spawn_ledger_.emplace(std::move(made));
    }
    return spawn_ledger_->fd();
  }

  // The files of a run, in this worker's run directory (made at its first
  // run); `owner`'s when given.
  Result<exec::RunFiles> run_files_for(std::int64_t run_id, std::string_view state,
                                       const exec::Credentials* owner) {
    if (!run_directory_) {
      auto made = TRY(exec::RunDirectory::create());
      run_directory_.emplace(std::move(made));
    }
    return run_directory_->files_for(run_id, state, owner);
  }

  // An attempt's end as history records it; `state_left`: what the run left
  // in its state file, nullptr when it had none.
  AttemptEnd attempt_end(const Claimed& claimed, const Verdict& verdict, const exec::ChildResult& result,
                         const Result<std::string>* state_left) const {
    AttemptEnd end{claimed.run.id,        claimed.task.id,   claimed.attempt_uid, claimed.run.trigger,
                   verdict.outcome,       verdict.reason,    verdict.exit_code,   verdict.signal,
                   result.output,         result.output_truncated, std::nullopt,       result.usage};
    // Without run files (they could not be made) the kept state stays as it
    // is; a state the run left unchanged need not be written again.
    if (state_left) {
      if (!*state_left) end.reason = joined(end.reason, state_left->error().message);
      else if (**state_left != claimed.state_blob) end.state_blob = **state_left;
    }
    return end;
  }

  // The end of an attempt that taskd's shutdown ended: its run goes back to
  // the queue for its slot, as `claimed` found it queued.
  static void requeue(AttemptEnd& end, const Claimed& claimed) {
    end.reason += "; queued again for its slot";
    end.shutdown = ShutdownEnd{claimed.run.attempt_no, claimed.run.run_index, claimed.before_start};
  }

  // Reports a recorded end; a stale attempt is recorded in history only, and
  // its report says so.
  void report_end(const Claimed& claimed, const AttemptEnd& end, bool current, Time now) {
    std::string reason = current ? end.reason
                                 : joined("outcome ignored: the attempt is no longer the task's current one", end.reason);
    Time started = claimed.task.state.attempt_started_at.value_or(now);
    auto status = end.shutdown && current ? core::RunStatus::queued : core::run_status_of(end.outcome);
    reports_.push_back({claimed.run.id, claimed.task.definition.name, status, std::move(reason), now - started,
                        !current});
  }

  store::Database& db_;
  const Clock& clock_;
  exec::Runner& runner_;
  WorkerOptions options_;
  store::WorkerIdentity identity_;
  std::optional<exec::RunDirectory> run_directory_;  // outlives the run files in in_flight_
  std::optional<exec::SpawnLedger> spawn_ledger_;
  std::map<std::uint64_t, InFlight> in_flight_;
  // Ends not yet written (the database was out of reach), and their runs in
  // the same order.
  std::vector<AttemptEnd> unrecorded_ends_;
  std::vector<Claimed> unrecorded_runs_;
  exec::SteadyTime renewed_at_{};  // the last renewal of the leases in flight
  exec::SteadyTime output_written_at_{};  // the last pass of write_output_so_far that was due
  bool stop_asked_ = false;        // see look_for_stop_requests
  bool lease_held_ = false;        // the last renewal found a run's row held by another transaction
  std::vector<RunReport> reports_;
  bool claiming_ = true;
};

Worker::Worker(store::Database& db, const Clock& clock, exec::Runner& runner, const WorkerOptions& options)
    : impl_(std::make_unique<WorkerImpl>(db, clock, runner, options)) {}

Worker::~Worker() = default;

Result<Filled> Worker::fill() { return impl_->fill(batches_per_fill); }

Result<void> Worker::record(const std::vector<exec::ChildResult>& results) { return impl_->record(results); }

Result<void> Worker::keep_leases() { return impl_->keep_leases(); }

Result<void> Worker::renew_leases() { return impl_->renew_leases(); }

std::optional<exec::SteadyTime> Worker::next_renewal_at() const { return impl_->next_renewal_at(); }

void Worker::write_output_so_far() { impl_->write_output_so_far(); }

std::optional<exec::SteadyTime> Worker::next_output_write_at() const { return impl_->next_output_write_at(); }

void Worker::look_for_stop_requests() { impl_->look_for_stop_requests(); }

void Worker::stop_claiming() { impl_->stop_claiming(); }

void Worker::resume_claiming() { impl_->resume_claiming(); }

std::size_t Worker::running() const { return impl_->running(); }

bool Worker::has_unwritten_ends() const { return impl_->has_unwritten_ends(); }

bool Worker::runs_as_a_user() const { return impl_->runs_as_a_user(); }

std::vector<RunReport> Worker::take_reports() { return impl_->take_reports(); }

void Worker::hand_over(exec::RecordWriter& record) { impl_->hand_over(record); }

std::vector<exec::ShutdownEntry> Worker::shutdown_entries() const { return impl_->shutdown_entries(); }

void Worker::adopt(WorkerHandover handover) { impl_->adopt(std::move(handover)); }

WorkerHandover::WorkerHandover() = default;
WorkerHandover::WorkerHandover(WorkerHandover&&) noexcept = default;
WorkerHandover::~WorkerHandover() = default;

std::vector<std::uint64_t> WorkerHandover::keys() const {
  std::vector<std::uint64_t> keys;
  for (const auto& run : runs) keys.push_back(static_cast<std::uint64_t>(run.claimed.run.id));
  return keys;
}

Result<WorkerHandover> read_worker(exec::RecordReader& record) {
  WorkerHandover handover;
  if (TRY(record.flag("run directory"))) {
    exec::RunDirectory::Handed directory;
    directory.path = TRY(record.text("run directory"));
    auto spares = TRY(record.number_in("count of spare files", 0, 1 << 20));
    for (std::int64_t i = 0; i < spares; ++i) directory.spares.push_back(TRY(record.text("spare file")));
    directory.spares_named =
        static_cast<std::uint64_t>(TRY(record.number_in("spare files named", 0, std::numeric_limits<std::int64_t>::max())));
    handover.run_directory.emplace(TRY(exec::RunDirectory::adopt(std::move(directory))));
  }
  handover.renewed_at = TRY(record.steady("renewal"));
  handover.output_written_at = TRY(record.steady("output's write"));
  auto runs = TRY(record.number_in("count of runs", 0, 1 << 20));
  if (runs > 0 && !handover.run_directory)
    return core::fail(core::ErrorKind::bad_input, "the hand-over record's runs have no run directory");
  for (std::int64_t i = 0; i < runs; ++i) {
    HandedRun run;
    run.claimed = TRY(read_claimed(record, run.output_written));
    handover.runs.push_back(std::move(run));
  }
  return handover;
}

namespace {

// A lock another session of a server held past the lock wait: no failure.
// The ends wait in memory and the claim waits; both are tried again soon.
bool look_again(const store::Database& db, const core::Error& error) {
  return !db.file() && error.kind == core::ErrorKind::busy;
}

}  // namespace

Result<std::vector<RunReport>> work_until_idle(store::Database& db, const Clock& clock, exec::Runner& runner,
                                               const WorkerOptions& options) {
  Worker worker(db, clock, runner, options);
  auto lock_wait = options.lease ? session_bounds(*options.lease).lock_wait : core::Millis{0};
  while (true) {
    auto filled = worker.fill();
    if (!filled && !look_again(db, filled.error())) return std::unexpected(filled.error());
    if (filled && *filled == Filled::more) continue;
    if (worker.running() == 0 && !worker.has_unwritten_ends()) break;
    auto until = std::min(worker.next_renewal_at().value_or(exec::SteadyTime::max()),
                          worker.next_output_write_at().value_or(exec::SteadyTime::max()));
    if (!filled || worker.has_unwritten_ends()) until = std::min(until, std::chrono::steady_clock::now() + lock_wait);
    auto ended = runner.wait_for_exits(until);
    if (auto recorded = worker.record(ended); !recorded && !look_again(db, recorded.error()))
      return std::unexpected(recorded.error());
    TRY(worker.keep_leases());
    worker.write_output_so_far();
  }
  runner.finish_lingering();
  auto reports = worker.take_reports();
  std::erase_if(reports, [](const RunReport& report) { return report.status == core::RunStatus::running; });
  return reports;
}

store::SessionBounds session_bounds(core::Millis lease) {
  using namespace std::chrono_literals;
  return {.lock_wait = std::min<core::Millis>(lease / 16, 1s), .idle_in_transaction = lease / 4, .unacknowledged = 10s};
}

store::WorkerIdentity current_worker(std::string_view host_id) {
  std::string host = host_id.empty() ? exec::host_name() : std::string(host_id);
  return {std::move(host), exec::boot_id(), ::getpid(), exec::process_start_ticks(::getpid()), ::geteuid()};
}

std::string new_attempt_uid() {
  static std::random_device device;
  std::uint64_t high = (std::uint64_t{device()} << 32) | device();
  std::uint64_t low = (std::uint64_t{device()} << 32) | device();
  return fmt::format("{:016x}{:016x}", high, low);
}

}  // namespace taskd::sched
