#include "exec/process_identity.hpp"

#include <csignal>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
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

bool is_running(pid_t pid, std::int64_t start_ticks) {
  return pid > 0 && start_ticks > 0 && process_start_ticks(pid) == start_ticks;
}

void kill_group_if_running(pid_t pid, std::int64_t start_ticks, int signal) {
  if (is_running(pid, start_ticks)) ::kill(-pid, signal);
}

std::int64_t process_start_ticks(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces and parentheses: count fields
  // from the last ')'.
  auto end_of_name = stat.rfind(')');
  if (end_of_name == std::string::npos) return 0;
  std::istringstream fields(stat.substr(end_of_name + 2));
  std::string field;
  for (int index = 3; fields >> field; ++index) {
    if (index == 3 && (field == "Z" || field == "X")) return 0;  // a zombie is no longer running
    if (index == 22) return std::stoll(field);
  }
  return 0;
}

}  // namespace taskd::exec
