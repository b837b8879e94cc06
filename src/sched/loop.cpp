#include "sched/loop.hpp"

#include <algorithm>
#include <array>
#include <csignal>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <poll.h>
#include <set>

#include "core/duration.hpp"
#include "exec/handover.hpp"
#include "exec/process_identity.hpp"
#include "exec/service_manager.hpp"
#include "exec/signal_watch.hpp"
#include "exec/supervisor.hpp"
#include "sched/change_watch.hpp"
#include "sched/outcome.hpp"
#include "sched/presence.hpp"
#include "sched/recovery.hpp"
#include "sched/tick.hpp"

namespace taskd::sched {
namespace {

using core::Result;
using core::Time;
using exec::SteadyTime;
using namespace std::chrono_literals;

// An inotify event without a new data_version may be a commit still being
// written: look at data_version once more after this delay.
constexpr auto settle_delay = 50ms;
// After another process's commit woke the loop, the change watch rests this
// long (its events wait, and are looked at together as it ends), so that a
// storm of them (on a server, any role that can connect may send NOTIFY
// taskd) costs at most a pass per rest; a lone change is seen at once.
constexpr auto change_rest = 100ms;

// A server out of reach is tried again after this, doubled at each failed
// try up to a quarter of the lease (so that a renewal is never far behind
// the server's return) and to max_retry_delay.
constexpr core::Millis first_retry_delay = 100ms;
constexpr core::Millis max_retry_delay = 5s;

// How long a hand-over given up waits for the previous image's watchdog
// (and the runs it ends) to exit.
constexpr core::Millis watchdog_wait = 5s;

void log_reports(Logger& log, const std::vector<RunReport>& reports) {
  for (const auto& report : reports) log_report(log, report);
}

core::Result<void> recover(store::Database& db, Time now, Logger& log, const store::WorkerIdentity& self) {
  auto lost = TRY(recover_lost_runs(db, now, self, SystemProcessTable{}));
  log_reports(log, lost);
  return {};
}

core::Result<TickResult> enqueue(store::Database& db, Time now, Logger& log,
                                 const std::function<void()>& before_commit = {},
                                 const std::function<core::Result<void>()>& between_batches = {}) {
  auto ticked = TRY(enqueue_due(
      db, now, 500, [&log](const RunReport& report) { log_report(log, report); }, system_processes(),
      before_commit, between_batches));
  for (const auto& [task, problem] : ticked.disabled)
    log.log(LogLevel::error, "task.malformed", {{"task", task}, {"problem", problem}, {"action", "disabled"}});
  return ticked;
}

// Deletes every run the retention expired, logging how many when any.
core::Result<void> prune(store::Database& db, Time now, Logger& log, const Retention& retention) {
  auto pruned = TRY(prune_expired(db, now, retention));
  if (pruned > 0) log.log(LogLevel::info, "history.pruned", {{"runs", std::to_string(pruned)}});
  return {};
}

std::string role_name(Role role) { return role == Role::work ? "work" : "run"; }

std::string signal_name(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev ? fmt::format("SIG{}", abbrev) : std::to_string(signal);
}

// Why the loop woke: any of these, or none (another file of the database's
// directory changed, or a recheck found no commit).
struct Wake {
  bool child_exit = false;
  bool db_change = false;
  bool timer = false;
  bool signal = false;

  bool needs_pass() const { return child_exit || db_change || timer; }
  bool has_cause() const { return needs_pass() || signal; }
  std::string describe() const {
    std::string reasons;
    auto add = [&](bool set, std::string_view name) {
      if (set) reasons += reasons.empty() ? std::string(name) : "," + std::string(name);
    };
    add(child_exit, "child_exit");
    add(db_change, "db_change");
    add(timer, "timer");
    add(signal, "signal");
    return reasons;
  }
};

class Loop {
 public:
  Loop(store::Database& db, const Clock& clock, Logger& log, const LoopOptions& options, exec::Supervisor& supervisor,
       exec::SignalWatch& signals, ChangeWatch& changes, Presence& presence, exec::ServiceManager& service,
       std::optional<WorkerHandover> adopted)
      : db_(db), clock_(clock), log_(log), options_(options), supervisor_(supervisor), signals_(signals),
        changes_(changes), presence_(presence), service_(service), self_(presence.identity()),
        worker_(db, clock, supervisor, options.worker),
        crash_(options.worker.crash) {
    if (adopted) worker_.adopt(std::move(*adopted));
    adopted_ = adopted.has_value();
  }

  Result<LoopEnd> run() {
    seen_version_ = TRY(store::data_version(db_));
    note_clock_offset();
    // Adopted runs' leases are renewed first thing (see hand_over_and_execute).
    if (adopted_) {
      if (auto renewed = worker_.renew_leases(); !renewed) TRY(wait_out(renewed.error()));
    }
    Wake wake{.timer = true};
    while (true) {
      if (wake.needs_pass()) {
        if (auto passed = stopping_ ? keep_up_stopping() : pass(); !passed) {
          TRY(wait_out(passed.error()));
        } else {
          end_outage();
          tell_service_manager();
        }
      }
      service_.keep_alive(std::chrono::steady_clock::now());
      // Not while the server is out of reach (the new image could not take
      // the runs over), nor while a group a run left lingers (waited for by
      // this loop, which meanwhile renews leases and heeds signals).
      if (upgrading_ && !stopping_ && !outage_ && !supervisor_.lingers() && !worker_.has_unwritten_ends() &&
          execute_again() == Upgrade::without_handover)
        return LoopEnd::upgrade;
      if (stopping_ && worker_.running() == 0) {
        supervisor_.finish_lingering();
        if (auto recorded = keep_up(); !recorded)
          log_.log(LogLevel::error, "loop.unrecorded",
                   {{"error", recorded.error().message},
                    {"note", "the runs that ended are recorded as lost once their leases expire"}});
        return LoopEnd::stopped;
      }
      auto woke = TRY(wait());
      if (aborted_) return LoopEnd::aborted;
      wake = woke;
      // Not a wake without a cause: the log file may be in the database's
      // directory, and its own line would wake the loop again, and again.
      if (wake.has_cause())
        log_.log(LogLevel::debug, "loop.wake",
                 {{"reason", wake.describe()}, {"running", std::to_string(worker_.running())}});
    }
  }

 private:
  // One pass at one `now`: what is due or claimable at it is enqueued or
  // claimed, what comes after it is in the upcoming times the loop wakes for.
  // The probe spares the write transactions of the enqueue and the claim
  // when they would find nothing.
  Result<void> pass() {
    held_ = false;
    TRY(keep_up());
    Time now = clock_.now();
    TRY(presence_.beat_if_due(now));
    note_clock_offset();
    auto steady_now = std::chrono::steady_clock::now();
    if (steady_now >= next_recovery_ || (recover_at_ && now >= *recover_at_)) {
      TRY(recover(db_, now, log_, self_));
      // The boot does not change while taskd runs: the first pass makes the
      // tasks of @reboot due, later ones (a tick apart) find those whose
      // boot their host had not seen yet.
      if (options_.role == Role::tick_and_work) TRY(store::make_due_at_boot(db_, self_.host, self_.boot_id, now));
      next_recovery_ = steady_now + options_.tick;
    }
    auto work = TRY(store::tick_work(db_, now));
    bool enqueues = options_.role == Role::tick_and_work && work.due;
    if (enqueues) {
      auto before_commit = [this] { crash_.reached(CrashPoint::enqueue); };
      auto keep_leases = [this] { return worker_.keep_leases(); };
      auto enqueued = TRY(enqueue(db_, now, log_, before_commit, keep_leases));
      held_ = enqueued.held;
    }
    TRY(fill_if(enqueues || work.claimable));
    TRY(prune_batch(now));
    auto upcoming = TRY(store::upcoming_after(db_, now, self_.host));
    next_due_ = upcoming.next_due;
    next_pass_at_ = next_pass_at(now, upcoming, presence_.next_heartbeat_at(), options_.tick, options_.role);
    if (held_) next_pass_at_ = std::min(next_pass_at_, clock_.now() + lock_wait());
    // A lease that ends is looked at a margin after: its run may be lost.
    recover_at_.reset();
    if (upcoming.earliest_lease_end && *upcoming.earliest_lease_end + lease_margin(db_) > now) {
      recover_at_ = *upcoming.earliest_lease_end + lease_margin(db_);
      next_pass_at_ = std::min(next_pass_at_, *recover_at_);
    }
    log_.log(LogLevel::debug, "loop.sleep",
             {{"until", core::format_rfc3339(next_pass_at_, core::Precision::milliseconds)},
              {"running", std::to_string(worker_.running())}});
    return {};
  }

  // What is owed to the runs in flight, stopping or not: their leases
  // renewed when due, and the ends not yet written.
  Result<void> keep_up() {
    TRY(worker_.keep_leases());
    auto recorded = worker_.record({});
    log_reports();
    return recorded;
  }

  // systemd, under a unit of Type=notify: ready once a pass went through,
  // then a status line after each (its count of tasks read once a tick bound).
  void tell_service_manager() {
    if (!service_.notifying() || stopping_) return;
    auto now = std::chrono::steady_clock::now();
    if (!task_count_ || now >= counted_at_ + options_.tick) {
      if (auto count = store::count_tasks(db_, {})) task_count_ = *count;
      counted_at_ = now;
    }
    auto tasks = task_count_.value_or(0);
    std::string status = fmt::format("{} running, {} task{}", worker_.running(), tasks, tasks == 1 ? "" : "s");
    if (options_.role == Role::tick_and_work)
      status += next_due_ ? ", next run in " + core::format_duration(std::chrono::ceil<core::Seconds>(
                                                   std::max(*next_due_ - clock_.now(), core::Millis{0})))
                          : ", no run planned";
    if (ready_) return service_.status(status);
    service_.ready(status);
    ready_ = true;
  }

  // While stopping: what is owed to the runs in flight and, while they may
  // finish within the drain, the heartbeat that tells this process lives.
  Result<void> keep_up_stopping() {
    TRY(keep_up());
    if (!draining_until_) return {};
    TRY(presence_.beat_if_due(clock_.now()));
    next_pass_at_ = presence_.next_heartbeat_at();
    return {};
  }

  // A server out of reach (down, restarting, cut off, or slower than a
  // lease allows) is waited out: the children go on, or are fenced by their
  // leases; the ends wait in memory; the loop tries again after a delay
  // that doubles. Logged once, at the start. A lock another session held
  // past the lock wait (a host frozen in a transaction, until the server
  // ends its session) is no outage: the loop looks again soon. Anything
  // else ends the loop.
  Result<void> wait_out(const core::Error& error) {
    if (!db_.file() && error.kind == core::ErrorKind::busy) return look_again_soon(error);
    if (db_.file() || error.kind != core::ErrorKind::unavailable) return std::unexpected(error);
    if (!outage_) {
      outage_ = Outage{std::chrono::steady_clock::now(), 0};
      log_.log(LogLevel::warn, "database.unreachable",
               {{"error", error.message}, {"running", std::to_string(worker_.running())}});
    }
    auto longest = std::clamp(options_.worker.lease.value_or(max_retry_delay) / 4, first_retry_delay, max_retry_delay);
    auto delay = std::min(first_retry_delay * (1 << std::min(outage_->tries, 10)), longest);
    ++outage_->tries;
    next_pass_at_ = clock_.now() + delay;
    queue_left_ = prune_left_ = false;
    return {};
  }

  Result<void> look_again_soon(const core::Error& busy) {
    end_outage();  // the server answered
    log_.log(LogLevel::debug, "database.busy", {{"error", busy.message}});
    next_pass_at_ = clock_.now() + lock_wait();
    queue_left_ = prune_left_ = false;
    return {};
  }

  // How long a statement of this loop waits for a lock another session holds.
  core::Millis lock_wait() const {
    return options_.worker.lease ? session_bounds(*options_.worker.lease).lock_wait : first_retry_delay;
  }

  void end_outage() {
    if (!outage_) return;
    auto lasted = std::chrono::duration_cast<core::Millis>(std::chrono::steady_clock::now() - outage_->since);
    log_.log(LogLevel::info, "database.reachable",
             {{"after", core::format_duration_ms(lasted)}, {"tries", std::to_string(outage_->tries)}});
    outage_.reset();
  }

  // Logs when this host's clock goes further from the server's than the
  // tolerance, and when it comes back.
  void note_clock_offset() {
    auto offset = presence_.clock_offset();
    bool off = clock_is_off(offset);
    if (off == clock_off_) return;
    clock_off_ = off;
    log_.log(off ? LogLevel::warn : LogLevel::info, "clock.offset",
             {{"offset_ms", std::to_string(offset.count())},
              {"note", off ? "this host's clock is off the database server's; taskd keeps the server's time"
                           : "within 1 s of the database server's again"}});
  }

  // Claims and launches queued runs when some may be claimable.
  Result<void> fill_if(bool claimable) {
    queue_left_ = false;
    if (!claimable) return {};
    auto filled = worker_.fill();
    log_reports();
    if (!filled) return std::unexpected(filled.error());
    queue_left_ = *filled == Filled::more;
    held_ = held_ || *filled == Filled::held;
    return {};
  }

  // One batch of the runs the retention expired, when the loop ticks;
  // the loop passes again at once while more are left.
  Result<void> prune_batch(Time now) {
    prune_left_ = false;
    if (options_.role != Role::tick_and_work || !options_.retention) return {};
    auto deleted = TRY(prune_expired_batch(db_, now, *options_.retention));
    prune_left_ = deleted == options_.retention->batch;
    if (deleted > 0) log_.log(LogLevel::info, "history.pruned", {{"runs", std::to_string(deleted)}});
    return {};
  }

  // When the loop passes again: while stopping, only to keep its runs'
  // leases, its heartbeat while they drain, and, in an outage, to try the
  // server again; and it wakes when the drain ends.
  SteadyTime wake_deadline() const {
    auto now = std::chrono::steady_clock::now();
    if (!stopping_ && (queue_left_ || prune_left_)) return now;
    auto until = now + std::max(next_pass_at_ - clock_.now(), core::Millis{0});
    if (stopping_ && !outage_ && !draining_until_) until = SteadyTime::max();
    if (draining_until_) until = std::min(until, *draining_until_);
    if (recheck_at_) until = std::min(until, *recheck_at_);
    if (auto renewal = worker_.next_renewal_at()) until = std::min(until, *renewal);
    if (auto output = worker_.next_output_write_at()) until = std::min(until, *output);
    if (auto ping = service_.next_ping_at()) until = std::min(until, *ping);
    return until;
  }

  bool renewal_due() const {
    auto renewal = worker_.next_renewal_at();
    return renewal && std::chrono::steady_clock::now() >= *renewal;
  }

  // A run asked to stop, by this process or another (overlap=replace on a
  // server): the worker renews soon, which tells it which.
  void follow_stop_announcements() {
    auto stops = store::stop_announcements(db_);
    if (stops == stop_announcements_seen_) return;
    stop_announcements_seen_ = stops;
    worker_.look_for_stop_requests();
  }

  bool changes_rest() const {
    return changes_rest_until_ && std::chrono::steady_clock::now() < *changes_rest_until_;
  }

  Result<Wake> wait() {
    follow_stop_announcements();
    int changes_fd = changes_rest() ? -1 : changes_.fd();  // poll() passes over a negative one
    std::array<pollfd, 2> watched{{{signals_.fd(), POLLIN, 0}, {changes_fd, POLLIN, 0}}};
    auto ended = supervisor_.wait_until(wake_deadline(), watched);
    Wake wake;
    wake.child_exit = !ended.empty();
    auto recorded = worker_.record(ended);
    log_reports();
    worker_.write_output_so_far();
    if (!recorded) {
      TRY(wait_out(recorded.error()));
    }
    // Both are read even when poll() did not report them: wait_until()
    // returns on a child's exit without polling, and under load that may
    // be every time.
    auto signals = signals_.take();
    wake.signal = !signals.empty();
    obey(signals);
    if (draining_until_ && std::chrono::steady_clock::now() >= *draining_until_)
      end_runs(fmt::format("the drain of {} ended", core::format_duration_ms(options_.drain)));
    auto changed = noticed_change();
    if (!changed) {
      TRY(wait_out(changed.error()));
    }
    wake.db_change = changed.value_or(false);
    follow_stop_announcements();
    wake.timer = (!stopping_ && (queue_left_ || prune_left_)) || clock_.now() >= next_pass_at_ || renewal_due();
    return wake;
  }

  // Whether another process committed: after an inotify event or a notice,
  // or when a recheck is due (after an event without a new data_version, or
  // as the change watch's rest ends); never while it rests.
  Result<bool> noticed_change() {
    if (changes_rest()) return false;
    bool about_database = changes_.drain();
    auto now = std::chrono::steady_clock::now();
    bool recheck_due = recheck_at_ && now >= *recheck_at_;
    if (!about_database && !recheck_due) return false;
    if (recheck_due) recheck_at_.reset();
    auto version = TRY(store::data_version(db_));
    bool changed = version != seen_version_;
    seen_version_ = version;
    if (changed) {
      changes_rest_until_ = now + change_rest;
      recheck_at_ = changes_rest_until_;  // what came meanwhile
    } else if (about_database && !recheck_at_) {
      recheck_at_ = now + settle_delay;
    }
    return changed;
  }

  void obey(const std::vector<int>& signals) {
    for (int signal : signals) {
      if (signal == SIGUSR2) {
        upgrade();
      } else if (signal == SIGHUP) {
        auto reopened = log_.reopen();
        log_.log(reopened ? LogLevel::info : LogLevel::error, "log.reopened",
                 reopened ? std::vector<LogField>{} : std::vector<LogField>{{"error", reopened.error().message}});
      } else if (!stopping_) {
        stop(signal);
      } else if (draining_until_) {
        end_runs(signal_name(signal) + " during the drain");
      } else if (signal == SIGINT) {
        aborted_ = true;
        log_.log(LogLevel::warn, "loop.aborted",
                 {{"signal", signal_name(signal)}, {"running", std::to_string(worker_.running())}});
      }
    }
  }

  // The first SIGTERM or SIGINT: nothing more is claimed (nor queued). On
  // SIGTERM the runs in flight may finish for the drain; on SIGINT, or with
  // no drain, they are ended at once.
  void stop(int signal) {
    stopping_ = true;
    worker_.stop_claiming();
    service_.stopping(fmt::format("stopping on {}, {} running", signal_name(signal), worker_.running()));
    log_.log(LogLevel::info, "loop.stopping",
             {{"signal", signal_name(signal)}, {"running", std::to_string(worker_.running())},
              {"drain", core::format_duration_ms(options_.drain)}});
    if (signal == SIGTERM && options_.drain > core::Millis{0} && worker_.running() > 0) {
      draining_until_ = std::chrono::steady_clock::now() + options_.drain;
      next_pass_at_ = clock_.now();  // the heartbeat goes on meanwhile
    } else {
      end_runs(signal_name(signal));
    }
  }

  // SIGUSR2: nothing more is claimed (what is due is still queued), and once
  // no end of a run waits to be written, taskd executes its binary again.
  // Nothing while stopping, or already upgrading.
  void upgrade() {
    if (stopping_ || upgrading_ || !options_.image) return;
    upgrading_ = true;
    worker_.stop_claiming();
    log_.log(LogLevel::info, "loop.upgrading", {{"running", std::to_string(worker_.running())}});
  }

  // Executes the binary again, handing over the runs in flight; back only
  // when that failed, and then the loop goes on as it was, claiming again.
  // A binary that cannot take runs over (one from before hand-overs, a
  // downgrade, or of another format) is executed once the runs in flight
  // have finished, by the caller of run_loop, with no record: the loop
  // ends first, as a stop ends it.
  enum class Upgrade { not_yet, failed, without_handover };
  Upgrade execute_again() {
    if (!takes_handover_) {
      auto takes = exec::takes_handover(*options_.image);
      if (!takes) return upgrade_failed(takes.error());
      takes_handover_ = *takes;
      if (!*takes)
        log_.log(LogLevel::warn, "loop.upgrade_waits",
                 {{"running", std::to_string(worker_.running())},
                  {"note", "the binary cannot take runs over: it is executed once the runs in flight have finished"}});
    }
    if (!*takes_handover_) return worker_.running() > 0 ? Upgrade::not_yet : Upgrade::without_handover;
    // A run as another user keeps its files in that user's directory, which
    // the record does not carry: the hand-over waits for such runs to end.
    if (worker_.runs_as_a_user()) {
      if (!waiting_for_users_) log_.log(LogLevel::info, "loop.upgrade_waits", {{"note", "for the runs as other users"}});
      waiting_for_users_ = true;
      return Upgrade::not_yet;
    }
    return upgrade_failed(hand_over_and_execute());
  }

  Upgrade upgrade_failed(const core::Error& error) {
    log_.log(LogLevel::error, "loop.upgrade_failed",
             {{"error", error.message}, {"note", "this binary goes on running"}});
    upgrading_ = false;
    waiting_for_users_ = false;
    takes_handover_.reset();
    worker_.resume_claiming();
    next_pass_at_ = clock_.now();
    return Upgrade::failed;
  }

  core::Error hand_over_and_execute() {
    // Renewed last thing before the execve: the new image connects before
    // it renews them again.
    if (auto renewed = worker_.renew_leases(); !renewed) return renewed.error();
    auto supervised = supervisor_.hand_over();
    exec::RecordWriter record;
    record.text(exec::handover_magic);
    exec::write_shutdown_list(record, shutdown_list(supervised));
    record.number(exec::handover_version);
    record.number(presence_.id());
    exec::write_supervisor(record, supervised);
    worker_.hand_over(record);
    auto sealed = exec::seal_record(record.record());
    if (!sealed) return sealed.error();
    log_.log(LogLevel::info, "loop.executing",
             {{"command", role_name(options_.role)}, {"path", options_.image->path},
              {"running", std::to_string(worker_.running())}});
    return exec::execute_again(*options_.image, *sealed, exec::kept_descriptors(supervised));
  }

  exec::ShutdownList shutdown_list(const exec::SupervisorHandover& supervised) const {
    exec::ShutdownList list{worker_.shutdown_entries(), {}, "", ""};
    for (auto& run : list.runs) {
      auto child = std::ranges::find(supervised.children, static_cast<std::uint64_t>(run.run_id), &exec::HandedChild::key);
      if (child == supervised.children.end()) continue;
      run.pid = child->pid;
      run.output_fd = child->output_fd;
    }
    if (supervised.watchdog) list.other_fds = {supervised.watchdog->taskd_end, supervised.watchdog->table};
    if (supervised.cgroups) {
      list.cgroup_tree = supervised.cgroups->path.native();
      list.cgroup_home = supervised.cgroups->home.native();
    }
    return list;
  }

  // Ends the runs in flight: SIGTERM to each, SIGKILL after its grace.
  void end_runs(const std::string& why) {
    draining_until_.reset();
    if (worker_.running() > 0)
      log_.log(LogLevel::info, "loop.ending_runs", {{"why", why}, {"running", std::to_string(worker_.running())}});
    supervisor_.stop_all();
  }

  void log_reports() { sched::log_reports(log_, worker_.take_reports()); }

  store::Database& db_;
  const Clock& clock_;
  Logger& log_;
  const LoopOptions& options_;
  exec::Supervisor& supervisor_;
  exec::SignalWatch& signals_;
  ChangeWatch& changes_;
  Presence& presence_;
  exec::ServiceManager& service_;
  store::WorkerIdentity self_;
  Worker worker_;
  CrashSwitch crash_;  // the enqueue point's; the worker counts the others
  std::int64_t seen_version_ = 0;
  Time next_pass_at_{};
  SteadyTime next_recovery_{};
  std::optional<Time> recover_at_;  // a lease's end plus the margin: its run may be lost then
  std::optional<SteadyTime> recheck_at_;
  std::optional<SteadyTime> changes_rest_until_;  // see change_rest
  struct Outage {
    SteadyTime since;
    int tries;
  };
  std::optional<Outage> outage_;  // the server is out of reach
  bool clock_off_ = false;        // the clock offset is over the tolerance (and was logged)
  std::int64_t stop_announcements_seen_ = 0;  // see store::stop_announcements
  bool queue_left_ = false;  // the last fill stopped with queued runs left to look at
  // This pass left a due task or a claimable run that another session held
  // past the lock wait: the next pass comes a lock wait later.
  bool held_ = false;
  bool prune_left_ = false;  // the last prune left expired runs
  bool stopping_ = false;
  bool upgrading_ = false;  // SIGUSR2 came: see upgrade()
  std::optional<bool> takes_handover_;        // whether the binary takes runs over, once asked
  bool adopted_ = false;                      // the runs in flight at the start were handed over
  std::optional<SteadyTime> draining_until_;  // stopping, the runs in flight may finish until then
  bool aborted_ = false;
  bool ready_ = false;                        // systemd was told READY=1
  bool waiting_for_users_ = false;            // an upgrade waits for runs as other users (logged once)
  std::optional<Time> next_due_;              // the last pass's earliest due task
  std::optional<std::int64_t> task_count_;    // for the status line
  SteadyTime counted_at_{};
};

}  // namespace

Time next_pass_at(Time now, const store::Upcoming& upcoming, Time heartbeat_due, core::Millis tick, Role role) {
  Time next = std::min(now + tick, std::max(heartbeat_due, now));
  auto consider = [&](const std::optional<Time>& time) {
    if (time && *time > now) next = std::min(next, *time);
  };
  if (role == Role::tick_and_work) consider(upcoming.next_due);
  consider(upcoming.next_claimable);
  return next;
}

Result<void> tick_once(store::Database& db, const Clock& clock, Logger& log, const std::optional<Retention>& retention,
                       std::string_view host_id) {
  Time now = clock.now();
  auto self = current_worker(host_id);
  TRY(check_host_id_free(db, self, now));
  TRY(store::make_due_at_boot(db, self.host, self.boot_id, now));
  auto work = TRY(store::tick_work(db, now));
  auto lost = TRY(recover_as_probed(db, work, now, self, SystemProcessTable{}));
  log_reports(log, lost);
  if (enqueue_needed(work)) {
    TRY(enqueue(db, now, log));
  }
  if (!retention) return {};
  return prune(db, now, log, *retention);
}

namespace {

// What a previous image handed over, taken over.
struct Adoption {
  Presence presence;
  exec::Supervisor::Adopted supervisor;
  WorkerHandover worker;
};

// The part of a record only the same version reads: the workers row, the
// supervisor's part and the worker's, whose runs must be the same.
struct HandedBody {
  std::int64_t presence_id;
  exec::SupervisorHandover supervisor;
  WorkerHandover worker;
};

Result<HandedBody> read_body(exec::RecordReader& record) {
  auto version = TRY(record.number("version"));
  if (version != exec::handover_version)
    return core::fail(core::ErrorKind::bad_input,
                      fmt::format("the hand-over record is of format {}, and this taskd reads format {}", version,
                                  exec::handover_version));
  auto presence_id = TRY(record.number_in("workers row", 1, std::numeric_limits<std::int64_t>::max()));
  auto supervisor = TRY(exec::read_supervisor(record));
  auto worker = TRY(read_worker(record));
  std::vector<std::uint64_t> children;
  for (const auto& child : supervisor.children) children.push_back(child.key);
  auto runs = worker.keys();
  std::ranges::sort(children);
  std::ranges::sort(runs);
  if (children != runs) return core::fail(core::ErrorKind::bad_input, "the hand-over record's runs and children differ");
  if (!record.at_end()) return core::fail(core::ErrorKind::bad_input, "the hand-over record goes on past its end");
  return HandedBody{presence_id, std::move(supervisor), std::move(worker)};
}

// Ends the runs of a record that cannot be taken over as taskd's shutdown
// ends runs: each goes back to the queue for its slot, no failure (recorded
// when `db` is open; otherwise the next start finds them lost).
Result<void> end_handed_runs(store::Database* db, const Clock& clock, Logger& log, const exec::ShutdownList& list,
                             const std::string& why) {
  log.log(LogLevel::error, "loop.adoption_failed",
          {{"error", why}, {"runs", std::to_string(list.runs.size())}, {"action", "their runs are ended and queued again"}});
  exec::end_children(list);
  std::vector<AttemptEnd> ends;
  for (const auto& run : list.runs) {
    AttemptEnd end;
    end.run_id = run.run_id;
    end.task_id = run.task_id;
    end.attempt_uid = run.attempt_uid;
    end.trigger = static_cast<core::Trigger>(run.trigger);
    end.reason = "stopped as taskd shut down: its new image could not take the run over; queued again for its slot";
    core::TaskState before;
    before.attempt_no = static_cast<int>(run.before_attempt_no);
    before.run_index = run.before_run_index;
    if (run.before_last_run_at_ms) before.last_run_at = Time(core::Millis(*run.before_last_run_at_ms));
    end.shutdown = ShutdownEnd{static_cast<int>(run.run_attempt_no), run.run_index, before};
    ends.push_back(std::move(end));
  }
  if (ends.empty() || !db) return {};
  auto recorded = TRY(record_attempt_ends(*db, ends, clock.now()));
  for (std::size_t i = 0; i < ends.size(); ++i)
    log_report(log, {list.runs[i].run_id, list.runs[i].task,
                     recorded[i].current ? core::RunStatus::queued : core::RunStatus::failed, ends[i].reason});
  return {};
}

// The shutdown list of a hand-over, whatever its version; an error (logged)
// when it has none: its runs are then found among this process's rows by
// recover_unadopted.
std::optional<exec::ShutdownList> shutdown_list_of(const exec::Handover& handover, Logger& log,
                                                   exec::RecordReader& reader) {
  auto magic = handover.record ? reader.text("mark") : std::unexpected(handover.record.error());
  auto list = !magic                           ? std::unexpected(magic.error())
              : *magic == exec::handover_magic ? exec::read_shutdown_list(reader)
                                               : core::fail(core::ErrorKind::bad_input, "it is no hand-over record");
  if (list) return std::move(*list);
  log.log(LogLevel::error, "loop.adoption_failed", {{"error", list.error().message}});
  return std::nullopt;
}

// Ends the runs of `handover` (see end_handed_runs) and closes what it
// kept open.
Result<void> refuse(store::Database* db, const Clock& clock, Logger& log, const exec::Handover& handover,
                    const std::optional<exec::ShutdownList>& list, const std::string& why) {
  auto ended = list ? end_handed_runs(db, clock, log, *list, why) : Result<void>();
  exec::give_up_inherited(handover.inherited, watchdog_wait);
  return ended;
}

// Takes over what `handover` hands over, the workers row `worker` with it;
// none (after logging why, and ending its runs when it names them) when it
// cannot. Everything that can fail comes before anything is built that
// would end the runs at once if dropped.
Result<std::optional<Adoption>> take_over(store::Database& db, const Clock& clock, Logger& log,
                                          const exec::Handover& handover, store::WorkerRow worker) {
  exec::RecordReader reader(handover.record ? *handover.record : std::string_view());
  auto list = shutdown_list_of(handover, log, reader);
  if (!list) {
    exec::give_up_inherited(handover.inherited, watchdog_wait);
    return std::optional<Adoption>();
  }
  auto body = read_body(reader);
  if (!body) {
    TRY(refuse(&db, clock, log, handover, list, body.error().message));
    return std::optional<Adoption>();
  }
  worker.containment = body->supervisor.containment;
  auto presence = Presence::adopt(db, std::move(worker), clock, body->presence_id);
  if (!presence) {
    TRY(refuse(&db, clock, log, handover, list, presence.error().message));
    return std::unexpected(presence.error());
  }
  auto kept = exec::kept_descriptors(body->supervisor);
  auto supervisor = exec::Supervisor::adopt(std::move(body->supervisor), handover);
  if (!supervisor) {
    TRY(presence->leave());
    TRY(refuse(&db, clock, log, handover, list, supervisor.error().message));
    return std::optional<Adoption>();
  }
  exec::close_inherited(handover.inherited, kept);
  return std::optional<Adoption>(Adoption{std::move(*presence), std::move(*supervisor), std::move(body->worker)});
}

}  // namespace

void refuse_handover(store::Database* db, const Clock& clock, Logger& log, const exec::Handover& handover,
                     const core::Error& why) {
  exec::RecordReader reader(handover.record ? *handover.record : std::string_view());
  auto list = shutdown_list_of(handover, log, reader);
  if (auto refused = refuse(db, clock, log, handover, list, why.message); !refused)
    log.log(
        LogLevel::error, "loop.unrecorded",
        {{"error", refused.error().message}, {"note", "the runs that ended are recorded as lost at the next start"}});
}

Result<LoopEnd> run_loop(store::Database& db, const Clock& clock, Logger& log, const LoopOptions& options,
                         exec::Containment containment, std::optional<exec::Handover>& handed) {
  auto signals = TRY(exec::SignalWatch::open());
  auto changes = TRY(ChangeWatch::open(db));
  // From here on, the hand-over's runs are this function's to take over or end.
  auto handover = std::exchange(handed, std::nullopt);
  store::WorkerRow worker{0, role_name(options.role), current_worker(options.worker.host_id),
                          options.worker.concurrency, {}, {}, exec::machine_id(), {}, {}};
  auto adoption = handover ? TRY(take_over(db, clock, log, *handover, worker)) : std::optional<Adoption>();
  std::optional<exec::Supervisor> supervisor;
  std::optional<Presence> presence;
  std::optional<WorkerHandover> adopted_runs;
  if (adoption) {
    supervisor.emplace(std::move(adoption->supervisor), options.worker.lease);
    presence.emplace(std::move(adoption->presence));
    adopted_runs.emplace(std::move(adoption->worker));
  } else {
    auto contained = TRY(exec::choose_containment(containment));
    worker.containment = contained.description;
    // Started before its row is written, which may wait for a peer's lock.
    if (options.on_start) options.on_start(contained.description);
    presence.emplace(TRY(Presence::enter(db, std::move(worker), clock)));
    supervisor.emplace(std::move(contained), options.worker.lease);
  }
  if (handover) {
    auto keys = adopted_runs ? adopted_runs->keys() : std::vector<std::uint64_t>{};
    std::set<std::int64_t> adopted(keys.begin(), keys.end());
    log_reports(log, TRY(recover_unadopted_runs(db, clock.now(), presence->identity(), adopted, SystemProcessTable{})));
  }
  if (adoption && options.on_start) options.on_start(supervisor->containment());
  if (adopted_runs) log.log(LogLevel::info, "loop.adopted", {{"runs", std::to_string(supervisor->running())}});
  auto service = exec::ServiceManager::from_environment();
  Loop loop(db, clock, log, options, *supervisor, signals, changes, *presence, service, std::move(adopted_runs));
  auto ended = loop.run();
  auto left = presence->leave();
  if (!ended) return ended;
  if (!left) return std::unexpected(left.error());
  return ended;
}

}  // namespace taskd::sched
