#include "exec/spawn.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <chrono>
#include <fmt/format.h>
#include <poll.h>
#include <string_view>
#include <sched.h>
#include <linux/sched.h>  // clone_args, CLONE_INTO_CGROUP
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec/process_identity.hpp"
#include "exec/scheduling.hpp"

namespace taskd::exec {
namespace {

constexpr const char* default_path = "/usr/local/bin:/usr/bin:/bin";

std::string path_of(const std::vector<std::string>& env) {
  for (const auto& entry : env) {
    if (entry.starts_with("PATH=")) return entry.substr(5);
  }
  return default_path;
}

bool is_executable_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// The kernel's struct sigaction, for rt_sigaction itself: glibc's sigaction
// refuses the two signals it keeps for itself (32 and 33), which a parent
// may still have left ignored (GNU make does, for its recipes).
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  std::uint64_t mask;
};

int kernel_sigaction(int signal, const KernelSigaction* action, KernelSigaction* old) {
  return static_cast<int>(::syscall(SYS_rt_sigaction, signal, action, old, sizeof(std::uint64_t)));
}

// The signals taskd ignores. An ignored signal stays ignored across execve
// (a handled one does not), so the child sets these back to their default.
// taskd changes no disposition itself (it reads its signals from a
// signalfd): this is the set it was started with (nohup's SIGHUP, say),
// read at the first spawn instead of 64 calls in every child.
const std::vector<int>& ignored_signals() {
  static const std::vector<int> ignored = [] {
    std::vector<int> out;
    for (int signal = 1; signal <= 64; ++signal) {
      KernelSigaction current{};
      if (kernel_sigaction(signal, nullptr, &current) == 0 && current.handler == SIG_IGN) out.push_back(signal);
    }
    return out;
  }();
  return ignored;
}

// /dev/null for every child's stdin, opened once (close-on-exec: the child's
// dup2 onto stdin is the only copy it keeps); -1 if it cannot be opened.
int dev_null() {
  static const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  return fd;
}

// Why the child could not execute its program. The child of a run as
// taskd's user shares taskd's memory until it executes (vfork), and taskd
// resumes only once it has executed or exited, so the child writes its
// failure here and taskd reads it when vfork returns (as glibc's
// posix_spawn does): no pipe per child. A child that switches users shares
// taskd's memory too, but not its suspension (see start_switching_child),
// and writes its failure to a pipe as well.
struct ChildFailure {
  enum Step { none, cgroup, identity, chdir, execve, too_late };
  volatile Step step = none;
  volatile int error = 0;
};

// What a child that switches users sends on its pipe when it fails.
struct FailureReport {
  ChildFailure::Step step;
  int error;
};

// How long taskd waits for a child that switches users to execute: once it
// is the user's, any process of the user's can stop it. Executing takes
// milliseconds; taskd waits this long for each run a user stops.
constexpr int switched_child_deadline_ms = 2000;

// Tells the compiler that `failure` may change behind its back from here
// on: its address escapes (so the opaque vfork() may write it) and memory
// is clobbered. Without it GCC, seeing that the child's path never returns,
// takes the failure for unchanged on taskd's path.
void shared_with_child(ChildFailure& failure) { asm volatile("" : : "r"(&failure) : "memory"); }

// Everything the child needs, prepared before vfork(): the child may only
// make system calls, as it shares taskd's memory until it executes.
struct ChildPlan {
  const char* program;
  char* const* argv;
  char* const* envp;
  const char* cwd;  // nullptr: taskd's own
  int output_fd;
  pid_t parent;
  unsigned alarm_seconds = 0;  // detached: SIGALRM ends it after this long (an alarm survives execve)
  int ledger_fd = -1;
  std::string_view ledger_line = {};  // "TAG " (the pid and a newline follow)
  int cgroup_fd = -1;                 // the run's cgroup: the child is born in it, or moves itself in
  bool enter_cgroup = false;          // born out of it: the child moves itself in first
  const Credentials* credentials = nullptr;  // nullptr: it stays taskd's user
  const char* home = nullptr;                // without cwd: tried as the user, else /
  const std::vector<int>* signals_to_reset = &ignored_signals();
  int stdin_fd = dev_null();
  const SchedulingAttributes* scheduling = child_scheduling();  // nullptr: taskd's as it is
  int report_fd = -1;  // a forked child's end of the pipe its failure goes to
};

[[noreturn]] void fail_child(const ChildPlan& plan, ChildFailure& failure, ChildFailure::Step step) {
  failure.error = errno;
  failure.step = step;
  if (plan.report_fd >= 0) {
    FailureReport report{step, failure.error};
    (void)!::write(plan.report_fd, &report, sizeof report);
  }
  ::_exit(127);
}

// Appends "TAG PID\n" to the spawn ledger; no allocation, as in any code of
// the child before it executes.
void note_in_ledger(const ChildPlan& plan) {
  if (plan.ledger_fd < 0) return;
  char line[256];
  if (plan.ledger_line.size() > sizeof line - 16) return;
  std::memcpy(line, plan.ledger_line.data(), plan.ledger_line.size());
  char* end = line + plan.ledger_line.size();
  char digits[16];
  int count = 0;
  for (auto pid = static_cast<unsigned>(::getpid()); pid > 0 || count == 0; pid /= 10) {
    digits[count++] = char('0' + pid % 10);
  }
  while (count > 0) *end++ = digits[--count];
  *end++ = '\n';
  (void)!::write(plan.ledger_fd, line, static_cast<std::size_t>(end - line));
}

void join_own_group(const ChildPlan& plan) {
  if (plan.alarm_seconds > 0) {
    ::setsid();  // detached: no terminal's or taskd's signals reach it
    return;
  }
  ::setpgid(0, 0);  // its own group, so a timeout kills it all
  // If taskd dies, even by SIGKILL, its child dies too; recovery kills the rest of the group.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != plan.parent) ::_exit(127);  // taskd died before the line above
}

// The calls that take 32-bit ids: on 32-bit x86 and ARM the plain ones
// take 16-bit ids, and would cut a larger one to another user's.
#ifdef SYS_setresuid32
constexpr long sys_setgroups = SYS_setgroups32;
constexpr long sys_setresgid = SYS_setresgid32;
constexpr long sys_setresuid = SYS_setresuid32;
constexpr long sys_setuid = SYS_setuid32;
#else
constexpr long sys_setgroups = SYS_setgroups;
constexpr long sys_setresgid = SYS_setresgid;
constexpr long sys_setresuid = SYS_setresuid;
constexpr long sys_setuid = SYS_setuid;
#endif

// Takes `credentials` as initgroups, setgid and setuid would, with the
// system calls themselves: glibc's wrappers signal every thread of the
// process, which a forked child only seems to have. False (errno says why)
// when a step fails, or when root could be taken back after it.
bool switch_identity(const Credentials& credentials) {
  if (::syscall(sys_setgroups, credentials.groups.size(), credentials.groups.data()) != 0) return false;
  if (::syscall(sys_setresgid, credentials.gid, credentials.gid, credentials.gid) != 0) return false;
  if (::syscall(sys_setresuid, credentials.uid, credentials.uid, credentials.uid) != 0) return false;
  if (credentials.uid != 0 && ::syscall(sys_setuid, 0) == 0) {
    errno = EPERM;
    return false;
  }
  return true;
}

// Moves the calling child into the cgroup open as `cgroup_fd`; false (errno
// says why) when it cannot.
bool enter_cgroup(int cgroup_fd) {
  int procs = ::openat(cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
  if (procs < 0) return false;
  bool entered = ::write(procs, "0", 1) == 1;
  ::close(procs);
  return entered;
}

[[noreturn]] void become_child(const ChildPlan& plan, ChildFailure& failure) {
  // Into the run's cgroup before anything else: all it forks is in it too.
  if (plan.enter_cgroup && !enter_cgroup(plan.cgroup_fd)) fail_child(plan, failure, ChildFailure::cgroup);
  if (plan.scheduling) ::syscall(SYS_sched_setattr, 0, plan.scheduling, 0);  // the default slice back
  // Before PR_SET_PDEATHSIG, which a change of user clears.
  if (plan.credentials) {
    if (!switch_identity(*plan.credentials)) fail_child(plan, failure, ChildFailure::identity);
    // Its memory is still a copy of taskd's (its environment, the database's
    // password): no core dump nor ptrace by the user until it executes.
    ::prctl(PR_SET_DUMPABLE, 0);
  }
  join_own_group(plan);
  note_in_ledger(plan);
  const KernelSigaction default_action{.handler = SIG_DFL, .flags = 0, .restorer = nullptr, .mask = 0};
  for (int signal : *plan.signals_to_reset) kernel_sigaction(signal, &default_action, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);  // taskd's blocked signals are not the child's
  if (plan.stdin_fd >= 0) ::dup2(plan.stdin_fd, STDIN_FILENO);
  ::dup2(plan.output_fd, STDOUT_FILENO);
  ::dup2(plan.output_fd, STDERR_FILENO);
  if (plan.cwd && ::chdir(plan.cwd) != 0) fail_child(plan, failure, ChildFailure::chdir);
  // Tried here, as the user: taskd itself never waits on a home directory
  // that does not answer (a hung network mount).
  if (!plan.cwd && plan.home && ::chdir(plan.home) != 0 && ::chdir("/") != 0)
    fail_child(plan, failure, ChildFailure::chdir);
  // Descriptors taskd itself inherited (a flock from crontab, say) are not the child's.
  ::close_range(STDERR_FILENO + 1, ~0U, CLOSE_RANGE_CLOEXEC);
  if (plan.alarm_seconds > 0) ::alarm(plan.alarm_seconds);
  ::execve(plan.program, plan.argv, plan.envp);
  fail_child(plan, failure, ChildFailure::execve);
}

// Why the plan's child, failing at `step` with `error`, did not run.
std::unexpected<core::Error> child_failure(const ChildPlan& plan, ChildFailure::Step step, int error) {
  if (step == ChildFailure::cgroup)
    return core::fail(core::ErrorKind::internal, fmt::format("cannot enter the run's cgroup: {}", std::strerror(error)));
  if (step == ChildFailure::identity)
    return core::fail(core::ErrorKind::internal, fmt::format("cannot switch to uid {} gid {}: {}", plan.credentials->uid,
                                                             plan.credentials->gid, std::strerror(error)));
  if (step == ChildFailure::too_late)
    return core::fail(core::ErrorKind::internal,
                      fmt::format("the process did not execute \"{}\" within {} s of its start (something stopped it), "
                                  "and was killed",
                                  plan.program, switched_child_deadline_ms / 1000));
  if (step == ChildFailure::chdir)
    return core::fail(core::ErrorKind::bad_input,
                      fmt::format("cannot change to directory \"{}\": {}", plan.cwd ? plan.cwd : "/",
                                  std::strerror(error)));
  return core::fail(core::ErrorKind::bad_input,
                    fmt::format("cannot execute \"{}\": {}", plan.program, std::strerror(error)));
}

std::unexpected<core::Error> cannot_start() {
  return core::fail(core::ErrorKind::internal, fmt::format("cannot start a process: {}", std::strerror(errno)));
}

// What the forked child `pid` reported on `report_fd` before it executed:
// none when it executed (the pipe closed empty). A child that neither
// executes nor fails by the deadline (stopped by its user, say) is killed.
std::optional<FailureReport> await_execution(pid_t pid, int report_fd) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(switched_child_deadline_ms);
  FailureReport report{};
  while (true) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd ready{report_fd, POLLIN, 0};
    int polled = left.count() > 0 ? ::poll(&ready, 1, static_cast<int>(left.count())) : 0;
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) {
      ::kill(pid, SIGKILL);
      return FailureReport{ChildFailure::too_late, 0};
    }
    ssize_t n = ::read(report_fd, &report, sizeof report);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return std::nullopt;
    if (n != static_cast<ssize_t>(sizeof report)) return FailureReport{ChildFailure::execve, EIO};
    return report;
  }
}

// The stack a child that shares taskd's memory runs on until it executes,
// when it does not run on taskd's (vfork): one is enough, as taskd waits
// for each such child to execute (or be killed) before it starts another.
// Its pages are taken as they are touched.
constexpr std::size_t child_stack_size = std::size_t{256} << 10;

void* child_stack_top() {
  static void* const top = []() -> void* {
    void* base =
        ::mmap(nullptr, child_stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    return base == MAP_FAILED ? nullptr : static_cast<char*>(base) + child_stack_size;
  }();
  return top;
}

struct SharingChild {
  const ChildPlan* plan;
  ChildFailure* failure;
};

int run_sharing_child(void* argument) {
  const auto* child = static_cast<const SharingChild*>(argument);
  become_child(*child->plan, *child->failure);
}

// Under AddressSanitizer a child is never born in its cgroup: ASan cannot
// follow the child onto a stack of its own (it warns on the child's stderr
// at its first no-return call), and the cgroup.procs path is what it checks.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define TASKD_BORN_IN_CGROUP 1
#endif

#if TASKD_BORN_IN_CGROUP
// clone3, which glibc does not wrap: `fn(arg)` runs in the child on the
// stack `args` gives it, and the child exits with what it returns. Returns
// the child's pid to the parent, or -errno.
extern "C" __attribute__((visibility("hidden"))) long taskd_clone3(clone_args* args, std::size_t size,
                                                                    int (*fn)(void*), void* arg);
asm(R"(
	.text
	.p2align 4
	.type taskd_clone3, @function
taskd_clone3:
	mov %rdx, %r8
	mov %rcx, %r9
	mov $435, %eax
	syscall
	test %rax, %rax
	jnz 1f
	xor %ebp, %ebp
	mov %r9, %rdi
	call *%r8
	mov %eax, %edi
	mov $60, %eax
	syscall
	hlt
1:	ret
	.size taskd_clone3, .-taskd_clone3
)");
static_assert(SYS_clone3 == 435 && SYS_exit == 60, "taskd_clone3's system call numbers");

// Whether this kernel lets a child be born in a cgroup (clone3's
// CLONE_INTO_CGROUP, Linux 5.7); false once it said no.
bool born_in_cgroup_works = true;
#endif

// Starts `child`, sharing taskd's memory, in its plan's cgroup from its
// birth: no move of a running process (cgroup.procs), which waits for every
// CPU to pass a quiescent state. `flags`: CLONE_VFORK to suspend taskd until
// the child executes; without it, `child` must outlive its execution. Its
// pid; -1 (errno says why) when it could not start; nullopt when this kernel
// cannot do it.
std::optional<pid_t> clone_into_cgroup(SharingChild& child, std::uint64_t flags) {
#if TASKD_BORN_IN_CGROUP
  void* stack = child_stack_top();
  if (!born_in_cgroup_works || !stack) return std::nullopt;
  clone_args args{};
  args.flags = CLONE_VM | CLONE_INTO_CGROUP | flags;
  args.exit_signal = SIGCHLD;
  args.stack = reinterpret_cast<std::uintptr_t>(stack) - child_stack_size;
  args.stack_size = child_stack_size;
  args.cgroup = static_cast<std::uint64_t>(child.plan->cgroup_fd);
  long pid = taskd_clone3(&args, sizeof args, run_sharing_child, &child);
  if (pid >= 0) return static_cast<pid_t>(pid);
  // No clone3 (or a filter that refuses it), or no CLONE_INTO_CGROUP.
  if (pid == -ENOSYS || pid == -EINVAL || pid == -E2BIG || pid == -EPERM) {
    born_in_cgroup_works = false;
    return std::nullopt;
  }
  errno = static_cast<int>(-pid);
  return -1;
#else
  (void)child, (void)flags;
  return std::nullopt;
#endif
}

// A child that switches users shares taskd's memory until it executes, as
// a vfork child does, for copying taskd's page tables (fork) took 60 % of
// such a run's dispatch. Unlike vfork, taskd is not suspended meanwhile:
// once the child is the user's, the user's processes can stop it, and taskd
// kills it at the deadline instead. Nothing of taskd's memory is the user's
// to read: the change of user makes the memory not dumpable (no ptrace, no
// /proc/PID/mem but by root), for taskd too, which shares it; taskd's
// signals stay blocked in the child until their handlers are the defaults;
// and taskd keeps this frame (the plan the child reads) until the child has
// executed or is reaped.
core::Result<pid_t> start_switching_child(ChildPlan plan) {
  void* stack = child_stack_top();
  if (!stack) return cannot_start();
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return cannot_start();
  plan.report_fd = report[1];
  ChildFailure failure;
  SharingChild child{&plan, &failure};
  std::optional<pid_t> born = plan.cgroup_fd >= 0 ? clone_into_cgroup(child, 0) : std::nullopt;
  if (plan.cgroup_fd >= 0 && !born) plan.enter_cgroup = true;  // never written while a born child reads it
  pid_t pid = born ? *born : ::clone(run_sharing_child, stack, CLONE_VM | SIGCHLD, &child);
  int error = errno;
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    errno = error;
    return cannot_start();
  }
  auto reported = await_execution(pid, report[0]);
  ::close(report[0]);
  if (!reported) return pid;
  ::waitpid(pid, nullptr, 0);
  return child_failure(plan, reported->step, reported->error);
}

// Starts the plan's child and waits until it has executed its program (or
// failed to); returns its pid, or why it could not run.
core::Result<pid_t> start_child(ChildPlan plan) {
  if (plan.credentials) return start_switching_child(plan);
  ChildFailure failure;
  shared_with_child(failure);
  SharingChild child{&plan, &failure};
  std::optional<pid_t> born = plan.cgroup_fd >= 0 ? clone_into_cgroup(child, CLONE_VFORK) : std::nullopt;
  if (plan.cgroup_fd >= 0 && !born) plan.enter_cgroup = true;
  pid_t pid = born ? *born : ::vfork();
  if (pid == 0) become_child(plan, failure);
  if (pid < 0) return cannot_start();
  if (failure.step == ChildFailure::none) return pid;
  ::waitpid(pid, nullptr, 0);
  return child_failure(plan, failure.step, failure.error);
}

core::Result<void> check_cwd(const std::string& cwd) {
  if (cwd.empty()) return {};
  struct stat info {};
  if (::stat(cwd.c_str(), &info) != 0)
    return core::fail(core::ErrorKind::bad_input, fmt::format("cannot change to directory \"{}\": {}", cwd, std::strerror(errno)));
  if (!S_ISDIR(info.st_mode))
    return core::fail(core::ErrorKind::bad_input, fmt::format("cannot change to directory \"{}\": not a directory", cwd));
  return {};
}

// The program to execute for `request`, after checking that it and its cwd exist.
core::Result<std::string> program_of(const SpawnRequest& request) {
  if (request.argv.empty() || request.argv.front().empty())
    return core::fail(core::ErrorKind::bad_input, "cannot execute an empty command");
  const std::string& name = request.argv.front();
  std::string path_list = path_of(request.env);
  std::string program = find_program(name, path_list);
  if (program.empty())
    return core::fail(core::ErrorKind::bad_input, fmt::format("cannot execute \"{}\": not found in PATH ({})", name, path_list));
  TRY(check_cwd(request.cwd));
  return program;
}

}  // namespace

std::string find_program(const std::string& name, const std::string& path_list) {
  if (name.find('/') != std::string::npos) return name;
  std::size_t start = 0;
  while (start <= path_list.size()) {
    std::size_t end = path_list.find(':', start);
    if (end == std::string::npos) end = path_list.size();
    std::string dir = path_list.substr(start, end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable_file(candidate)) return candidate;
    start = end + 1;
  }
  return {};
}

core::Result<SpawnedChild> spawn_child(const SpawnRequest& request) {
  auto program = TRY(program_of(request));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return core::fail(core::ErrorKind::internal, fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  auto argv = c_strings(request.argv);
  auto envp = c_strings(request.env);
  const char* cwd = request.cwd.empty() ? nullptr : request.cwd.c_str();
  std::string ledger_line = request.ledger_tag + ' ';
  auto before = boot_clock();
  auto pid = start_child({.program = program.c_str(),
                          .argv = argv.data(),
                          .envp = envp.data(),
                          .cwd = cwd,
                          .output_fd = fds[1],
                          .parent = ::getpid(),
                          .ledger_fd = request.ledger_fd,
                          .ledger_line = ledger_line,
                          .cgroup_fd = request.cgroup_fd,
                          .credentials = request.credentials ? &*request.credentials : nullptr,
                          .home = request.credentials ? request.home.c_str() : nullptr});
  auto after = boot_clock();
  ::close(fds[1]);
  if (!pid) {
    ::close(fds[0]);
    return std::unexpected(pid.error());
  }
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);  // a new pipe's read end has no other status flag
  return SpawnedChild{{*pid, child_start_ticks(*pid, before, after)}, fds[0]};
}

namespace {

// The read end of a pipe already holding `input` and closed behind it, or
// /dev/null for no input. A pipe holds 64 KiB unless memory is short, and
// never less than a page: a write that does not fit is an error, not a wait.
core::Result<int> input_pipe(std::string_view input) {
  if (input.empty()) return dev_null();
  if (input.size() > detached_input_limit)
    return core::fail(core::ErrorKind::internal, fmt::format("{} bytes of input is too much for a pipe", input.size()));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
    return core::fail(core::ErrorKind::internal, fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  auto written = ::write(fds[1], input.data(), input.size());
  int error = errno;
  ::close(fds[1]);
  if (written != static_cast<ssize_t>(input.size())) {
    ::close(fds[0]);
    return core::fail(core::ErrorKind::internal,
                      fmt::format("cannot fill a pipe with {} bytes: {}", input.size(),
                                  written < 0 ? std::strerror(error) : "it holds less"));
  }
  ::fcntl(fds[0], F_SETFL, 0);  // the command reads its stdin as any other
  return fds[0];
}

}  // namespace

core::Result<pid_t> spawn_detached(const SpawnRequest& request, std::chrono::seconds time_limit,
                                   std::string_view input) {
  auto program = TRY(program_of(request));
  auto argv = c_strings(request.argv);
  auto envp = c_strings(request.env);
  const char* cwd = request.cwd.empty() ? nullptr : request.cwd.c_str();
  auto seconds = static_cast<unsigned>(std::max<std::int64_t>(1, time_limit.count()));
  int stdin_fd = TRY(input_pipe(input));
  auto pid = start_child({.program = program.c_str(),
                          .argv = argv.data(),
                          .envp = envp.data(),
                          .cwd = cwd,
                          .output_fd = STDERR_FILENO,
                          .parent = ::getpid(),
                          .alarm_seconds = seconds,
                          .stdin_fd = stdin_fd});
  if (!input.empty()) ::close(stdin_fd);
  return pid;
}

}  // namespace taskd::exec
