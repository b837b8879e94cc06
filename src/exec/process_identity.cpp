#include "exec/process_identity.hpp"

#include <cerrno>
#include <csignal>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace taskd::exec {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
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
// such process exists.
std::optional<ProcessStat> read_stat(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces and parentheses: count fields
  // from the last ')'.
  auto end_of_name = stat.rfind(')');
  if (end_of_name == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(end_of_name + 2));
  std::string field;
  ProcessStat result{'?', 0};
  for (int index = 3; fields >> field; ++index) {
    if (index == 3) result.state = field.front();
    if (index == 22) {
      result.start_ticks = std::stoll(field);
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

bool wait_for_group_gone(pid_t group, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (::kill(-group, 0) == 0 || errno == EPERM) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  return true;
}

namespace {

bool environment_holds(const std::string& pid, std::string_view entry) {
  std::ifstream in("/proc/" + pid + "/environ");
  std::string variable;
  while (std::getline(in, variable, '\0')) {
    if (variable == entry) return true;
  }
  return false;
}

}  // namespace

void kill_groups_with_environment(std::string_view entry) {
  std::error_code error;
  for (const auto& process : std::filesystem::directory_iterator("/proc", error)) {
    std::string pid = process.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos || !environment_holds(pid, entry)) continue;
    pid_t group = ::getpgid(std::stoi(pid));
    if (group > 1 && group != ::getpgrp()) ::kill(-group, SIGKILL);
  }
}

std::int64_t process_start_ticks(pid_t pid) {
  auto stat = read_stat(pid);
  if (!stat || stat->state == 'Z' || stat->state == 'X') return 0;  // a zombie is no longer running
  return stat->start_ticks;
}

}  // namespace taskd::exec
