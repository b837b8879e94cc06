#include "exec/watchdog.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <new>
#include <thread>
#include <utility>

#include "exec/cgroup.hpp"
#include "exec/handover.hpp"
#include "exec/process_identity.hpp"

namespace taskd::exec {
namespace {

using namespace std::chrono_literals;

// How long the watchdog keeps looking for processes that carry a run's token:
// what it killed may have forked meanwhile.
constexpr auto search_limit = 1s;

std::uint32_t load(const std::uint32_t& flag) {
  return std::atomic_ref(const_cast<std::uint32_t&>(flag)).load(std::memory_order_acquire);
}

void store(std::uint32_t& flag, std::uint32_t value) { std::atomic_ref(flag).store(value, std::memory_order_release); }

std::int64_t nanoseconds_of(SteadyTime at) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}

template <std::size_t N>
void copy_text(std::string_view text, std::array<char, N>& to) {
  if (text.size() >= N) text = {};
  std::ranges::copy(text, to.begin());
  to[text.size()] = '\0';
}

// Shows `title` as this process's command line (ps, /proc/PID/cmdline),
// which would otherwise be taskd's and pass for taskd itself (pgrep -f, a
// kill by command line): written over the strings of taskd's, which lie end
// to end from argv[0] (glibc's program_invocation_name), the rest zeroed, as
// setproctitle(3) does. They are the watchdog's own copy since the fork.
void show_as(const char* name, std::string_view title) {
  ::prctl(PR_SET_NAME, name);
  char* strings = program_invocation_name;
  if (!strings) return;
  int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  std::size_t length = 0;
  std::array<char, 4096> buffer;
  for (ssize_t n; (n = ::read(fd, buffer.data(), buffer.size())) > 0;) length += static_cast<std::size_t>(n);
  ::close(fd);
  if (length == 0) return;
  std::memset(strings, 0, length);
  std::memcpy(strings, title.data(), std::min(title.size(), length - 1));
}

// Keeps the pipe's read end (as descriptor 3) and nothing else of taskd's:
// not its database connection, not the pipes of whoever reads its output.
int keep_only(int taskd_end) {
  int kept = ::fcntl(taskd_end, F_DUPFD, 3);  // out of the way of stdin, stdout and stderr
  int null = ::open("/dev/null", O_RDWR);
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) ::dup2(null, fd);
  ::dup2(kept, 3);
  ::close_range(4, ~0U, 0);
  return 3;
}

// Whether the end of file that says taskd is gone came within `wait` (for
// ever without one). Nothing else ever comes: the pipe is never written.
// A failed poll (out of memory, say) is no end: it is tried again.
bool taskd_gone(int taskd_end, std::optional<std::chrono::milliseconds> wait) {
  pollfd end{taskd_end, POLLIN, 0};
  int ready = ::poll(&end, 1, wait ? static_cast<int>(wait->count()) : -1);
  return ready > 0 && (end.revents & (POLLIN | POLLHUP)) != 0;
}

// What the runs of a taskd without cgroups left: each child's group, then
// the groups of the processes that carry a run's token, until none is left.
void end_watched(const std::vector<WatchedRun>& runs) {
  std::vector<std::string> tokens;
  for (const auto& run : runs) {
    kill_group_if_running(run.leader, run.start_ticks, SIGKILL);
    if (!run.token.empty()) tokens.push_back(run.token);
  }
  auto give_up = std::chrono::steady_clock::now() + search_limit;
  while (!tokens.empty() && std::chrono::steady_clock::now() < give_up) {
    auto groups = groups_with_environment(tokens);
    if (groups.empty()) return;
    for (pid_t group : groups) ::kill(-group, SIGKILL);
    std::this_thread::sleep_for(5ms);  // the killed take a moment to go
  }
}

// Ends the runs whose backstop passed: taskd did not hold their leases.
void end_overdue(WatchedRuns& runs, const CgroupTree* cgroups) {
  for (const auto& run : runs.take_overdue(std::chrono::steady_clock::now())) {
    if (cgroups && !run.cgroup.empty())
      RunCgroup(cgroups->path() / run.cgroup, -1).kill_all();
    else
      end_watched({run});
  }
}

// The watchdog's life, from the fork (with every signal blocked) to its exit.
// noexcept: an exception must end it here (std::terminate), never unwind into
// the stack of taskd it was forked from, whose destructors would take the
// runs of a taskd still alive down.
[[noreturn]] void keep_watch(int taskd_end, pid_t taskd, WatchedRuns& runs, const CgroupTree* cgroups,
                             std::optional<std::chrono::milliseconds> scan_every) noexcept {
  ::setpgid(0, 0);
  show_as("taskd-watchdog", fmt::format("taskd: watchdog of pid {}", taskd));
  taskd_end = keep_only(taskd_end);
  while (!taskd_gone(taskd_end, scan_every)) end_overdue(runs, cgroups);
  if (!runs.said_goodbye()) {
    if (cgroups)
      cgroups->take_down();
    else
      end_watched(runs.live());
  }
  ::_exit(0);
}

}  // namespace

std::optional<std::size_t> WatchedRuns::add(pid_t leader, std::int64_t start_ticks, std::string_view token,
                                            std::string_view cgroup) {
  std::uint32_t index = first_free_;
  if (index != no_entry) {
    first_free_ = entries_[index].next_free;
  } else if (used_ < capacity) {
    index = used_;
    store(used_, index + 1);  // read by the watchdog meanwhile
  } else {
    return std::nullopt;
  }
  Entry& entry = entries_[index];
  entry.leader = leader;
  entry.start_ticks = start_ticks;
  copy_text(token, entry.token);
  copy_text(cgroup, entry.cgroup);
  std::atomic_ref(entry.backstop).store(0, std::memory_order_relaxed);
  store(entry.in_use, 1);
  return index;
}

void WatchedRuns::remove(std::size_t index) {
  Entry& entry = entries_[index];
  std::atomic_ref(entry.backstop).store(0, std::memory_order_release);
  store(entry.in_use, 0);
  entry.next_free = first_free_;
  first_free_ = static_cast<std::uint32_t>(index);
}

std::vector<WatchedRun> WatchedRuns::live() const {
  std::vector<WatchedRun> runs;
  for (std::uint32_t index = 0; index < used_; ++index) {
    const Entry& entry = entries_[index];
    if (load(entry.in_use)) runs.push_back({entry.leader, entry.start_ticks, entry.token.data(), entry.cgroup.data()});
  }
  return runs;
}

void WatchedRuns::set_backstop(std::size_t index, SteadyTime at) {
  std::atomic_ref(entries_[index].backstop).store(nanoseconds_of(at), std::memory_order_release);
}

std::vector<WatchedRun> WatchedRuns::take_overdue(SteadyTime now) {
  std::vector<WatchedRun> overdue;
  auto now_ns = nanoseconds_of(now);
  for (std::uint32_t index = 0; index < load(used_); ++index) {
    Entry& entry = entries_[index];
    std::atomic_ref backstop(entry.backstop);
    auto at = backstop.load(std::memory_order_acquire);
    if (at == 0 || at > now_ns || !load(entry.in_use)) continue;
    WatchedRun run{entry.leader, entry.start_ticks, entry.token.data(), entry.cgroup.data()};
    // Read before: the backstop unchanged, the entry was this run's all along.
    // Changed, the run was renewed (or ended) meanwhile: it is taskd's again.
    if (backstop.compare_exchange_strong(at, 0, std::memory_order_acq_rel)) overdue.push_back(std::move(run));
  }
  return overdue;
}

void WatchedRuns::say_goodbye() { store(goodbye_, 1); }

bool WatchedRuns::said_goodbye() const { return load(goodbye_) != 0; }

namespace {

// The table, in a memfd (close-on-exec until an upgrade keeps it) mapped shared.
core::Result<std::pair<int, WatchedRuns*>> map_table(int fd, bool fresh) {
  if (fresh && ::ftruncate(fd, sizeof(WatchedRuns)) != 0)
    return core::fail(core::ErrorKind::internal, fmt::format("cannot size the watchdog's table: {}", std::strerror(errno)));
  void* memory = ::mmap(nullptr, sizeof(WatchedRuns), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (memory == MAP_FAILED)
    return core::fail(core::ErrorKind::internal, fmt::format("cannot map the watchdog's table: {}", std::strerror(errno)));
  return std::pair{fd, fresh ? new (memory) WatchedRuns : static_cast<WatchedRuns*>(memory)};
}

}  // namespace

core::Result<Watchdog> Watchdog::start(const CgroupTree* cgroups, std::optional<std::chrono::milliseconds> scan_every) {
  int table_fd = ::memfd_create("taskd-watchdog", MFD_CLOEXEC);
  if (table_fd < 0)
    return core::fail(core::ErrorKind::internal, fmt::format("cannot make the watchdog's table: {}", std::strerror(errno)));
  auto table = map_table(table_fd, true);
  if (!table) {
    ::close(table_fd);
    return std::unexpected(table.error());
  }
  auto* runs = table->second;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    ::munmap(runs, sizeof(WatchedRuns));
    ::close(table_fd);
    return core::fail(core::ErrorKind::internal, fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  pid_t taskd = ::getpid();
  // Blocked from the start: a signal to taskd's group (Ctrl-C) must not end
  // the watchdog before it has blocked it itself.
  sigset_t all, before;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &before);
  pid_t pid = ::fork();
  if (pid == 0) keep_watch(fds[0], taskd, *runs, cgroups, scan_every);
  int fork_error = errno;
  ::sigprocmask(SIG_SETMASK, &before, nullptr);
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    ::munmap(runs, sizeof(WatchedRuns));
    ::close(table_fd);
    return core::fail(core::ErrorKind::internal,
                      fmt::format("cannot start the watchdog: {}", std::strerror(fork_error)));
  }
  ::setpgid(pid, pid);  // as the watchdog does itself, whichever comes first
  return Watchdog(pid, fds[1], table_fd, runs);
}

core::Result<Watchdog> Watchdog::adopt(Handed handed) {
  struct stat pipe {}, table {};
  if (handed.pid <= 0 || ::fstat(handed.taskd_end, &pipe) != 0 || !S_ISFIFO(pipe.st_mode) ||
      ::fstat(handed.table, &table) != 0 || table.st_size != static_cast<off_t>(sizeof(WatchedRuns)))
    return core::fail(core::ErrorKind::bad_input, "the watchdog handed over is not there");
  auto mapped = TRY(map_table(handed.table, false));
  return Watchdog(handed.pid, handed.taskd_end, handed.table, mapped.second);
}

Watchdog::Watchdog(Watchdog&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      taskd_end_(std::exchange(other.taskd_end_, -1)),
      table_fd_(std::exchange(other.table_fd_, -1)),
      runs_(std::exchange(other.runs_, nullptr)) {}

Watchdog::~Watchdog() {
  if (!runs_) return;
  runs_->say_goodbye();
  ::close(taskd_end_);
  // Gone already if the Supervisor reaped it as a stray (it was killed).
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  ::munmap(runs_, sizeof(WatchedRuns));
  ::close(table_fd_);
}

}  // namespace taskd::exec
