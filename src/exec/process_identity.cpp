#include "exec/process_identity.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <fcntl.h>
#include <csignal>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sys/syscall.h>
#include <thread>
#include <time.h>
#include <unistd.h>

namespace taskd::exec {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

std::string machine_id() {
  for (const char* path : {"/etc/machine-id", "/var/lib/dbus/machine-id"}) {
    std::ifstream in(path);
    std::string id;
    if (std::getline(in, id) && !id.empty()) return id;
  }
  return {};
}

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

namespace {

struct ProcessStat {
  char state;
  std::int64_t start_ticks;
};

// The state letter and start time of `pid`, zombie or not; nothing when no
// such process exists. Read with plain system calls: it is read for every
// child started (see bench/dispatch.sh).
std::optional<ProcessStat> read_stat(pid_t pid) {
  char path[32];
  auto path_end = fmt::format_to_n(path, sizeof path - 1, "/proc/{}/stat", pid).out;
  *path_end = '\0';
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::array<char, 1024> buffer;
  ssize_t n = ::read(fd, buffer.data(), buffer.size());
  ::close(fd);
  if (n <= 0) return std::nullopt;
  std::string_view stat(buffer.data(), static_cast<std::size_t>(n));
  // The command name (field 2) may hold spaces and parentheses: count fields
  // from the last ')'.
  auto end_of_name = stat.rfind(')');
  if (end_of_name == std::string_view::npos) return std::nullopt;
  stat.remove_prefix(end_of_name + 1);
  ProcessStat result{'?', 0};
  for (int index = 3; index <= 22; ++index) {
    auto start = stat.find_first_not_of(' ');
    if (start == std::string_view::npos) return std::nullopt;
    stat.remove_prefix(start);
    auto field = stat.substr(0, stat.find(' '));
    stat.remove_prefix(field.size());
    if (index == 3) result.state = field.front();
    if (index == 22) {
      auto parsed = std::from_chars(field.data(), field.data() + field.size(), result.start_ticks);
      if (parsed.ec != std::errc()) return std::nullopt;
      return result;
    }
  }
  return std::nullopt;
}

}  // namespace

bool is_running(pid_t pid, std::int64_t start_ticks) {
  return pid > 0 && start_ticks > 0 && process_start_ticks(pid) == start_ticks;
}

bool kill_group_if_running(pid_t pid, std::int64_t start_ticks, int signal) {
  if (pid <= 0 || start_ticks <= 0) return false;
  // A leader killed with its worker (PR_SET_PDEATHSIG) leaves its group
  // behind, and may linger as a zombie; no new process can take the id of a
  // group that still has members.
  auto leader = read_stat(pid);
  if (leader && leader->start_ticks != start_ticks) return false;
  return ::kill(-pid, signal) == 0;
}

bool kill_group_if_leader_gone(pid_t group, int signal) {
  if (group <= 1) return false;
  auto leader = read_stat(group);
  if (leader && leader->state != 'Z' && leader->state != 'X') return false;
  return ::kill(-group, signal) == 0;
}

bool wait_for_group_gone(pid_t group, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (::kill(-group, 0) == 0 || errno == EPERM) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  return true;
}

namespace {

bool environment_holds(const std::string& pid, std::span<const std::string> entries) {
  std::ifstream in("/proc/" + pid + "/environ");
  std::string variable;
  while (std::getline(in, variable, '\0')) {
    if (std::ranges::find(entries, variable) != entries.end()) return true;
  }
  return false;
}

}  // namespace

std::vector<pid_t> groups_with_environment(std::string_view entry) {
  const std::string entries[] = {std::string(entry)};
  return groups_with_environment(entries);
}

std::vector<pid_t> groups_with_environment(std::span<const std::string> entries) {
  std::vector<pid_t> groups;
  std::error_code error;
  for (const auto& process : std::filesystem::directory_iterator("/proc", error)) {
    std::string pid = process.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos || !environment_holds(pid, entries)) continue;
    pid_t group = ::getpgid(std::stoi(pid));
    if (group > 1 && group != ::getpgrp() && std::ranges::find(groups, group) == groups.end()) groups.push_back(group);
  }
  return groups;
}

void kill_groups_with_environment(std::string_view entry) {
  for (pid_t group : groups_with_environment(entry)) ::kill(-group, SIGKILL);
}

std::int64_t process_start_ticks(pid_t pid) {
  auto stat = read_stat(pid);
  if (!stat || stat->state == 'Z' || stat->state == 'X') return 0;  // a zombie is no longer running
  return stat->start_ticks;
}

std::chrono::nanoseconds boot_clock() {
  // The system call itself, not libc's clock_gettime: a clock faked for
  // taskd (libfaketime, as the tests use) is not the one /proc shows.
  timespec now{};
  ::syscall(SYS_clock_gettime, CLOCK_BOOTTIME, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

std::int64_t child_start_ticks(pid_t pid, std::chrono::nanoseconds before, std::chrono::nanoseconds after) {
  // /proc/PID/stat shows the start time in USER_HZ ticks, rounded down.
  static const std::int64_t tick_ns = 1'000'000'000 / ::sysconf(_SC_CLK_TCK);
  std::int64_t first = before.count() / tick_ns;
  if (first == after.count() / tick_ns) return first;
  return process_start_ticks(pid);
}

}  // namespace taskd::exec
