#include "exec/supervisor.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <fmt/format.h>
#include <limits>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "core/duration.hpp"
#include "exec/handover.hpp"
#include "exec/process_identity.hpp"
#include "exec/scheduling.hpp"

namespace taskd::exec {
namespace {

using namespace std::chrono_literals;

// Without a pidfd, exits are noticed by polling at this period.
constexpr auto fallback_poll_period = 20ms;
// How long a run's cgroup is waited for to empty after its SIGKILL.
constexpr auto unkillable_wait = 5s;

// The environment entry that marks a run's processes (see THE CHILD PROCESS in taskd(1)).
constexpr std::string_view attempt_token_name = "TASKD_ATTEMPT_UID=";

// The child's peak by wait4, when it is the child's own. Linux carries the
// peak of the image a process leaves at exec into its ru_maxrss, and a
// child leaves taskd's (vfork shares it): a peak no higher than taskd's
// own may be taskd's, so it is not known.
std::optional<std::int64_t> own_peak_bytes(const struct rusage& used) {
  struct rusage self {};
  if (::getrusage(RUSAGE_SELF, &self) != 0 || used.ru_maxrss <= self.ru_maxrss) return std::nullopt;
  return std::int64_t{used.ru_maxrss} * 1024;
}

// What a child used: by its cgroup where it has one (every descendant,
// escaped or not), else (and for memory without the memory controller) by
// wait4's account of it and the children it waited for.
core::ResourceUsage usage_of(const struct rusage& used, const RunCgroup* cgroup) {
  auto micros = [](const timeval& time) { return std::chrono::seconds(time.tv_sec) + std::chrono::microseconds(time.tv_usec); };
  core::ResourceUsage usage{.cpu = micros(used.ru_utime) + micros(used.ru_stime),
                            .peak_memory_bytes = own_peak_bytes(used)};
  if (!cgroup) return usage;
  auto counted = cgroup->usage();
  return {.cpu = counted.cpu.value_or(*usage.cpu),
          .peak_memory_bytes = counted.peak_memory_bytes ? counted.peak_memory_bytes : usage.peak_memory_bytes};
}

// `request` with the child entering `cgroup` first.
SpawnRequest in_cgroup(const SpawnRequest& request, const RunCgroup& cgroup) {
  SpawnRequest entering = request;
  entering.cgroup_fd = cgroup.fd();
  return entering;
}

// A pidfd is close-on-exec from the start.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

// Reaps the group's orphans that ended (taskd is their subreaper), then asks
// whether any member is left.
bool group_exists(pid_t group) {
  while (::waitpid(-group, nullptr, WNOHANG) > 0) {
  }
  return ::kill(-group, 0) == 0 || errno == EPERM;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Reads whatever the pipe holds now; closes it at end of file.
void drain(int& fd, OutputBuffer& output) {
  std::array<char, 65536> buffer;
  while (fd >= 0) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n > 0) {
      output.append(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
    } else if (n == 0) {
      close_fd(fd);
    } else if (errno != EINTR) {
      if (errno != EAGAIN) close_fd(fd);
      return;
    }
  }
}

}  // namespace

Supervisor::Supervisor(ContainmentChoice containment, std::optional<std::chrono::milliseconds> lease)
    : cgroups_(std::move(containment.cgroups)), containment_(std::move(containment.description)) {
  std::optional<std::chrono::milliseconds> scan_every;
  if (lease) {
    backstop_after_ = *lease / 4;
    scan_every = std::clamp<std::chrono::milliseconds>(*lease / 16, min_backstop_scan, max_backstop_scan);
  }
  // Forked first: a subreaper and short slices are taskd's, not the watchdog's.
  if (auto started = Watchdog::start(cgroups_ ? &*cgroups_ : nullptr, scan_every))
    watchdog_.emplace(std::move(*started));
  become_supervisor();
}

Supervisor::Supervisor(Adopted adopted, std::optional<std::chrono::milliseconds> lease)
    : cgroups_(std::move(adopted.cgroups)), containment_(std::move(adopted.containment)),
      children_(std::move(adopted.children)), watchdog_(std::move(adopted.watchdog)) {
  if (lease) backstop_after_ = *lease / 4;
  become_supervisor();
}

void Supervisor::become_supervisor() {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ask_for_short_slices();
}

SupervisorHandover Supervisor::hand_over() const {
  SupervisorHandover handover{containment_, std::nullopt, std::nullopt, {}};
  if (watchdog_) handover.watchdog = watchdog_->handed();
  if (cgroups_) handover.cgroups = cgroups_->handed();
  for (const auto& child : children_) {
    handover.children.push_back(
        HandedChild{.key = child.key,
                    .pid = child.pid,
                    .output_fd = child.output_fd,
                    .deadline = child.deadline,
                    .kill_grace = child.kill_grace,
                    .lease_end = child.lease_end,
                    .terminated = child.terminated,
                    .killed = child.killed,
                    .stopped = child.stopped,
                    .fenced = child.fenced,
                    .output = child.output.kept(),
                    .token = child.token,
                    .cgroup = child.cgroup ? child.cgroup->path().native() : "",
                    .cgroup_cpu_before = child.cgroup ? child.cgroup->cpu_before() : std::nullopt,
                    .watched = child.watched});
  }
  return handover;
}

namespace {

// Whether each descriptor `handover` names is one the previous image left
// open across execve (above 2, never two the same) and of its kind.
core::Result<void> check_descriptors(const SupervisorHandover& handover, const Handover& handed) {
  std::vector<int> named;
  if (handover.watchdog) named.insert(named.end(), {handover.watchdog->taskd_end, handover.watchdog->table});
  for (const auto& child : handover.children)
    if (child.output_fd >= 0) named.push_back(child.output_fd);
  for (int fd : named) {
    struct stat status {};
    bool pipe_end = fd == (handover.watchdog ? handover.watchdog->table : -1) ||
                    (::fstat(fd, &status) == 0 && S_ISFIFO(status.st_mode));
    if (!handed.inherits(fd) || std::ranges::count(named, fd) != 1 || !pipe_end)
      return core::fail(core::ErrorKind::bad_input,
                        fmt::format("the descriptor {} is not one the previous image kept for its runs", fd));
  }
  return {};
}

// Whether `path` is a run's cgroup the tree made: "run-N" in it, N at most
// the count it made.
bool is_run_cgroup(const std::filesystem::path& path, const CgroupTree::Handed& tree) {
  auto name = path.filename().native();
  std::uint64_t number = 0;
  auto digits = std::string_view(name).substr(std::min<std::size_t>(4, name.size()));
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  return path.parent_path() == tree.path && name.starts_with("run-") && error == std::errc{} &&
         end == digits.data() + digits.size() && number >= 1 && number <= tree.made;
}

// Whether `handed` can be taken over: this process's own child (not reaped
// yet: a zombie still answers waitid) and not the watchdog, its cgroup in
// the tree.
core::Result<void> check_child(const HandedChild& handed, const SupervisorHandover& handover) {
  siginfo_t info{};
  bool own = ::waitid(P_PID, static_cast<id_t>(handed.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
             (!handover.watchdog || handover.watchdog->pid != handed.pid);
  bool cgroup_ok = handed.cgroup.empty() || (handover.cgroups && is_run_cgroup(handed.cgroup, *handover.cgroups));
  bool unique = std::ranges::count(handover.children, handed.key, &HandedChild::key) == 1 &&
                std::ranges::count(handover.children, handed.pid, &HandedChild::pid) == 1;
  if (!own || !cgroup_ok || !unique)
    return core::fail(core::ErrorKind::bad_input,
                      fmt::format("the child {} of run {} cannot be taken over", handed.pid, handed.key));
  return {};
}

}  // namespace

core::Result<Supervisor::Adopted> Supervisor::adopt(SupervisorHandover handover, const Handover& handed) {
  // Everything is checked before anything is built: what is built and
  // dropped would end the runs at once (a tree taken down, a watchdog told
  // goodbye), where a failed adoption ends them as a shutdown does.
  TRY(check_descriptors(handover, handed));
  if (handover.cgroups) TRY(CgroupTree::check_handed(*handover.cgroups));
  std::vector<OutputBuffer> outputs;
  for (auto& child : handover.children) {
    TRY(check_child(child, handover));
    auto output = OutputBuffer::from(std::move(child.output));
    if (!output)
      return core::fail(core::ErrorKind::bad_input,
                        fmt::format("the output kept of run {} cannot be taken over", child.key));
    outputs.push_back(std::move(*output));
  }
  Adopted adopted{std::move(handover.containment), std::nullopt, std::nullopt, {}};
  if (handover.watchdog) adopted.watchdog.emplace(TRY(Watchdog::adopt(*handover.watchdog)));
  if (handover.cgroups) adopted.cgroups.emplace(CgroupTree::adopt(std::move(*handover.cgroups)));
  for (std::size_t i = 0; i < handover.children.size(); ++i) {
    auto& handed_child = handover.children[i];
    std::optional<RunCgroup> cgroup;
    if (!handed_child.cgroup.empty())
      cgroup.emplace(RunCgroup::adopted(handed_child.cgroup, handed_child.cgroup_cpu_before));
    adopted.children.push_back(Child{.key = handed_child.key,
                                     .pid = handed_child.pid,
                                     .output_fd = handed_child.output_fd,
                                     .exit_fd = open_pidfd(handed_child.pid),
                                     .deadline = handed_child.deadline,
                                     .kill_grace = handed_child.kill_grace,
                                     .lease_end = handed_child.lease_end,
                                     .terminated = handed_child.terminated,
                                     .killed = handed_child.killed,
                                     .stopped = handed_child.stopped,
                                     .fenced = handed_child.fenced,
                                     .output = std::move(outputs[i]),
                                     .token = std::move(handed_child.token),
                                     .cgroup = std::move(cgroup),
                                     .watched = handed_child.watched});
  }
  return adopted;
}

void write_supervisor(RecordWriter& record, const SupervisorHandover& handover) {
  record.text(handover.containment);
  record.flag(handover.watchdog.has_value());
  if (handover.watchdog) {
    record.number(handover.watchdog->pid);
    record.number(handover.watchdog->taskd_end);
    record.number(handover.watchdog->table);
  }
  record.flag(handover.cgroups.has_value());
  if (handover.cgroups) {
    record.text(handover.cgroups->path.native());
    record.text(handover.cgroups->home.native());
    record.number(static_cast<std::int64_t>(handover.cgroups->made));
  }
  record.number(static_cast<std::int64_t>(handover.children.size()));
  for (const auto& child : handover.children) {
    record.number(static_cast<std::int64_t>(child.key));
    record.number(child.pid);
    record.number(child.output_fd);
    record.steady(child.deadline);
    record.number(child.kill_grace.count());
    record.steady(child.lease_end);
    for (bool flag : {child.terminated, child.killed, child.stopped, child.fenced}) record.flag(flag);
    record.number(static_cast<std::int64_t>(child.output.keep));
    record.text(child.output.head);
    record.text(child.output.tail);
    record.number(static_cast<std::int64_t>(child.output.total));
    record.text(child.token);
    record.text(child.cgroup);
    record.flag(child.cgroup_cpu_before.has_value());
    if (child.cgroup_cpu_before) record.number(child.cgroup_cpu_before->count());
    record.flag(child.watched.has_value());
    if (child.watched) record.number(static_cast<std::int64_t>(*child.watched));
  }
}

core::Result<SupervisorHandover> read_supervisor(RecordReader& record) {
  constexpr auto most = std::numeric_limits<std::int64_t>::max();
  constexpr auto longest_grace_ns = std::chrono::nanoseconds(core::longest_duration).count();
  constexpr std::int64_t max_fd = std::numeric_limits<int>::max();
  constexpr std::int64_t max_pid = std::numeric_limits<pid_t>::max();
  SupervisorHandover handover;
  handover.containment = TRY(record.text("containment"));
  if (TRY(record.flag("watchdog"))) {
    Watchdog::Handed watchdog{};
    watchdog.pid = static_cast<pid_t>(TRY(record.number_in("watchdog's pid", 2, max_pid)));
    watchdog.taskd_end = static_cast<int>(TRY(record.number_in("watchdog's pipe", 0, max_fd)));
    watchdog.table = static_cast<int>(TRY(record.number_in("watchdog's table", 0, max_fd)));
    handover.watchdog = watchdog;
  }
  if (TRY(record.flag("cgroups"))) {
    CgroupTree::Handed tree;
    tree.path = TRY(record.text("cgroup tree"));
    tree.home = TRY(record.text("cgroup home"));
    tree.made = static_cast<std::uint64_t>(TRY(record.number_in("cgroups made", 0, most)));
    handover.cgroups = std::move(tree);
  }
  auto children = TRY(record.number_in("count of children", 0, 1 << 20));
  for (std::int64_t i = 0; i < children; ++i) {
    HandedChild child;
    child.key = static_cast<std::uint64_t>(TRY(record.number_in("child's run", 1, most)));
    child.pid = static_cast<pid_t>(TRY(record.number_in("child's pid", 2, max_pid)));
    child.output_fd = static_cast<int>(TRY(record.number_in("child's output", -1, max_fd)));
    // Bounded so that a deadline plus the longest grace stays a time.
    child.deadline = TRY(record.steady("child's deadline", most - longest_grace_ns));
    child.kill_grace =
        std::chrono::seconds(TRY(record.number_in("child's kill grace", 0, core::longest_duration.count())));
    child.lease_end = TRY(record.steady("child's lease"));
    for (bool* flag : {&child.terminated, &child.killed, &child.stopped, &child.fenced})
      *flag = TRY(record.flag("child's state"));
    child.output.keep = static_cast<std::size_t>(TRY(record.number_in("child's output limit", 0, most)));
    child.output.head = TRY(record.text("child's output head"));
    child.output.tail = TRY(record.text("child's output tail"));
    child.output.total = static_cast<std::size_t>(TRY(record.number_in("child's output size", 0, most)));
    child.token = TRY(record.text("child's token"));
    child.cgroup = TRY(record.text("child's cgroup"));
    if (TRY(record.flag("child's cgroup time")))
      child.cgroup_cpu_before = std::chrono::microseconds(TRY(record.number("child's cgroup time")));
    if (TRY(record.flag("child's watch")))
      child.watched = static_cast<std::size_t>(TRY(record.number_in("child's watch", 0, WatchedRuns::capacity - 1)));
    handover.children.push_back(std::move(child));
  }
  return handover;
}

std::vector<int> kept_descriptors(const SupervisorHandover& handover) {
  std::vector<int> fds;
  if (handover.watchdog) fds.insert(fds.end(), {handover.watchdog->taskd_end, handover.watchdog->table});
  for (const auto& child : handover.children)
    if (child.output_fd >= 0) fds.push_back(child.output_fd);
  return fds;
}

Supervisor::~Supervisor() {
  for (auto& child : children_) {
    kill_child(child);
    ::waitpid(child.pid, nullptr, 0);
    close_fd(child.output_fd);
    close_fd(child.exit_fd);
  }
  for (const auto& group : lingering_) {
    ::kill(-group.group, SIGKILL);
    if (group.cgroup) group.cgroup->kill_all();
  }
}

void Supervisor::kill_child(const Child& child) {
  ::kill(-child.pid, SIGKILL);
  if (child.cgroup) child.cgroup->kill_all();
}

core::Result<StartedProcess> Supervisor::start(std::uint64_t key, const SpawnRequest& request,
                                              const ChildLimits& limits) {
  std::optional<RunCgroup> cgroup = TRY(run_cgroup(limits.resources));
  auto spawned = cgroup ? spawn_child(in_cgroup(request, *cgroup)) : spawn_child(request);
  if (!spawned) {
    // Not back to the pool: it may be why the child could not start.
    if (cgroup) cgroup->remove();
    return std::unexpected(spawned.error());
  }
  pid_t pid = spawned->process.pid;
  auto token = std::ranges::find_if(request.env, [](const std::string& entry) {
    return entry.starts_with(attempt_token_name);
  });
  std::string token_entry = token == request.env.end() ? "" : *token;
  std::optional<std::size_t> watched;
  // With cgroups, the watchdog takes the whole tree down as taskd dies; it
  // needs the run's cgroup only to end the run past its backstop.
  if (watchdog_ && (!cgroup || backstop_after_))
    watched = watchdog_->watch(pid, spawned->process.start_ticks, token_entry,
                               cgroup ? cgroup->path().filename().native() : "");
  children_.push_back(Child{.key = key,
                            .pid = pid,
                            .output_fd = spawned->output_fd,
                            .exit_fd = open_pidfd(pid),
                            .deadline = std::chrono::steady_clock::now() + limits.timeout,
                            .kill_grace = limits.kill_grace,
                            .output = OutputBuffer(limits.output_limit),
                            .token = std::move(token_entry),
                            .cgroup = std::move(cgroup),
                            .watched = watched});
  return spawned->process;
}

core::Result<std::optional<RunCgroup>> Supervisor::run_cgroup(const core::ResourceLimits& resources) {
  if (!cgroups_ && resources.any())
    return core::fail(core::ErrorKind::unavailable,
                      limits_without_cgroup(resources, "this worker contains its runs by " + containment_));
  if (!cgroups_) return std::optional<RunCgroup>();
  auto made = TRY(cgroups_->run_cgroup());
  if (auto limited = made.limit(resources); !limited) {
    // Not back to the pool: a limit may be left half set.
    made.remove();
    return std::unexpected(limited.error());
  }
  return std::optional<RunCgroup>(std::move(made));
}

std::optional<OutputSoFar> Supervisor::output_so_far(std::uint64_t key) const {
  auto child = std::ranges::find(children_, key, &Child::key);
  if (child == children_.end()) return std::nullopt;
  return OutputSoFar{child->output.contents(), child->output.truncated(), child->output.total_bytes()};
}

std::vector<ChildResult> Supervisor::wait_for_exits(SteadyTime until) {
  while (!children_.empty()) {
    auto ended = wait_until(until, {});
    if (!ended.empty() || std::chrono::steady_clock::now() >= until) return ended;
  }
  return {};
}

void Supervisor::hold_lease(std::uint64_t key, SteadyTime until) {
  for (auto& child : children_) {
    if (child.key != key || child.terminated) continue;
    child.lease_end = until;
    if (child.watched && backstop_after_) watchdog_->backstop(*child.watched, until + child.kill_grace + *backstop_after_);
  }
  // A lease that has run out (a run asked to stop ends its lease now) is
  // acted on now: left to the next wait, its past end would bound, and cut
  // short, every wait on the server until then.
  enforce_deadlines(std::chrono::steady_clock::now());
}

std::optional<SteadyTime> Supervisor::next_lease_action() const {
  std::optional<SteadyTime> next;
  for (const auto& child : children_) {
    if (child.killed || (child.terminated && !child.fenced) || child.lease_end == SteadyTime::max()) continue;
    auto at = child.fenced ? child.deadline + child.kill_grace : child.lease_end;
    if (!next || at < *next) next = at;
  }
  return next;
}

std::vector<ChildResult> Supervisor::wait_until(SteadyTime until, std::span<pollfd> watched) {
  for (auto& watch : watched) watch.revents = 0;
  while (true) {
    auto now = std::chrono::steady_clock::now();
    enforce_deadlines(now);
    reap_strays();
    auto ended = reap_exited(now);
    bool ready = std::ranges::any_of(watched, [](const pollfd& watch) { return watch.revents != 0; });
    if (!ended.empty() || ready || now >= until) return ended;
    poll_once(now, until, watched);
  }
}

void Supervisor::stop_all() {
  auto now = std::chrono::steady_clock::now();
  for (auto& child : children_) {
    if (child.terminated) continue;
    child.stopped = true;
    child.deadline = now;
    terminate(child, now);
  }
}

void Supervisor::terminate(Child& child, SteadyTime now) {
  // A grace that went by unseen (taskd was frozen) gets no SIGTERM: the
  // SIGKILL that follows it comes at once.
  bool grace_over = child.kill_grace.count() > 0 && now >= child.deadline + child.kill_grace;
  if (!grace_over) ::kill(-child.pid, SIGTERM);
  child.terminated = true;
  stop_escaped(child, now);
}

void Supervisor::stop_escaped(const Child& child, SteadyTime now) {
  if (child.cgroup) {
    bool grace_over = now >= child.deadline + child.kill_grace;
    grace_over ? child.cgroup->kill_all() : child.cgroup->signal_all(SIGTERM);
    return;
  }
  if (child.token.empty()) return;
  bool grace_over = now >= child.deadline + child.kill_grace;
  for (pid_t group : groups_with_environment(child.token)) {
    if (group == child.pid) continue;
    ::kill(-group, grace_over ? SIGKILL : SIGTERM);
    if (!grace_over)
      lingering_.push_back(Lingering{group, child.deadline + child.kill_grace, std::nullopt, child.watched});
  }
}

void Supervisor::finish_lingering() {
  while (!lingering_.empty()) {
    enforce_deadlines(std::chrono::steady_clock::now());
    if (!lingering_.empty()) std::this_thread::sleep_for(fallback_poll_period);
  }
}

void Supervisor::enforce_deadlines(SteadyTime now) {
  for (auto& child : children_) {
    if (!child.terminated && now >= child.lease_end && child.lease_end < child.deadline) {
      // From the lease's end, not from now: a worker that was frozen past
      // it (SIGSTOP, a paused VM) kills at once what it wakes up to.
      child.fenced = true;
      child.deadline = child.lease_end;
    }
    if (!child.terminated && now >= child.deadline) terminate(child, now);
    if (child.terminated && !child.killed && now >= child.deadline + child.kill_grace) {
      kill_child(child);
      child.killed = true;
    }
  }
  std::vector<std::optional<std::size_t>> finished;
  std::erase_if(lingering_, [&](Lingering& group) {
    if (!finish(group, now)) return false;
    finished.push_back(group.watched);
    return true;
  });
  for (auto watched : finished) forget_if_over(watched);
}

void Supervisor::forget_if_over(std::optional<std::size_t> watched) {
  if (!watched) return;
  auto of_run = [&](const auto& waited_for) { return waited_for.watched == watched; };
  if (std::ranges::none_of(children_, of_run) && std::ranges::none_of(lingering_, of_run)) watchdog_->forget(*watched);
}

bool Supervisor::finish(Lingering& lingering, SteadyTime now) {
  if (lingering.cgroup) {
    // Released once empty: until then killed (again) after the grace; one
    // that does not empty (a process stuck in the kernel) is left to the
    // end of the tree.
    if (cgroups_->release(*lingering.cgroup)) return true;
    if (now >= lingering.kill_at) lingering.cgroup->kill_all();
    return now >= lingering.kill_at + unkillable_wait;
  }
  if (!group_exists(lingering.group)) return true;
  if (now < lingering.kill_at) return false;
  ::kill(-lingering.group, SIGKILL);
  return true;
}

std::vector<ChildResult> Supervisor::reap_exited(SteadyTime now) {
  std::vector<ChildResult> ended;
  std::vector<std::optional<std::size_t>> reaped;
  std::erase_if(children_, [&](Child& child) {
    int status = 0;
    struct rusage used {};
    pid_t rc = ::wait4(child.pid, &status, WNOHANG, &used);
    if (rc == 0 || (rc < 0 && errno == EINTR)) return false;
    drain(child.output_fd, child.output);
    close_fd(child.output_fd);
    close_fd(child.exit_fd);
    ChildResult result;
    result.key = child.key;
    result.timed_out = child.terminated && !child.stopped && !child.fenced;
    result.stopped = child.stopped;
    result.fenced = child.fenced;
    if (rc > 0 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (rc > 0 && WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    result.output = child.output.contents();
    result.output_truncated = child.output.truncated();
    if (rc > 0) result.usage = usage_of(used, child.cgroup ? &*child.cgroup : nullptr);
    // Like systemd's KillMode=control-group: what the run left in its group
    // (or cgroup) is asked to stop now and killed after the grace (the one
    // it had, when it was stopped).
    auto kill_at = child.terminated ? std::max(now, child.deadline + child.kill_grace) : now + child.kill_grace;
    bool contained = child.cgroup.has_value();
    if (group_exists(child.pid)) {
      ::kill(-child.pid, SIGTERM);
      if (!contained) lingering_.push_back(Lingering{child.pid, kill_at, std::nullopt, child.watched});
    }
    if (contained && !cgroups_->release(*child.cgroup)) {
      child.cgroup->signal_all(SIGTERM);
      lingering_.push_back(Lingering{child.pid, kill_at, std::move(child.cgroup), child.watched});
    }
    // A stopped child's escapees may have forked again since its SIGTERM; a
    // child killed from outside (overlap=replace) takes its escapees along.
    if (!contained && (child.terminated || result.signal)) stop_escaped(child, now);
    ended.push_back(std::move(result));
    reaped.push_back(child.watched);
    return true;
  });
  for (auto watched : reaped) forget_if_over(watched);
  return ended;
}

void Supervisor::reap_strays() {
  while (true) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return;
    bool tracked = std::ranges::any_of(children_, [&](const Child& child) { return child.pid == info.si_pid; });
    if (tracked) return;  // reap_exited collects its status
    ::waitpid(info.si_pid, nullptr, 0);
  }
}

SteadyTime Supervisor::next_action_time() const {
  auto next = SteadyTime::max();
  for (const auto& child : children_) {
    auto due = std::min(child.deadline, child.lease_end);
    next = std::min(next, child.terminated ? child.deadline + child.kill_grace : due);
    if (child.exit_fd < 0) next = std::min(next, std::chrono::steady_clock::now() + fallback_poll_period);
  }
  for (const auto& group : lingering_) next = std::min(next, group.kill_at);
  return next;
}

void Supervisor::poll_once(SteadyTime now, SteadyTime until, std::span<pollfd> watched) {
  std::vector<pollfd> fds(watched.begin(), watched.end());
  for (const auto& child : children_) {
    if (child.output_fd >= 0) fds.push_back({child.output_fd, POLLIN, 0});
    if (child.exit_fd >= 0) fds.push_back({child.exit_fd, POLLIN, 0});
  }
  auto wait = std::chrono::ceil<std::chrono::milliseconds>(std::min(next_action_time(), until) - now);
  int timeout_ms = static_cast<int>(std::clamp<std::int64_t>(wait.count(), 0, 60'000));
  if (!lingering_.empty()) timeout_ms = std::min(timeout_ms, static_cast<int>(fallback_poll_period.count()));
  if (::poll(fds.data(), fds.size(), timeout_ms) > 0) {
    for (std::size_t i = 0; i < watched.size(); ++i) watched[i].revents = fds[i].revents;
  }
  for (auto& child : children_) drain(child.output_fd, child.output);
}

}  // namespace taskd::exec
