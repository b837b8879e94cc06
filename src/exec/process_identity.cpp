#include "exec/process_identity.hpp"

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
    if (index == 22) return std::stoll(field);
  }
  return 0;
}

}  // namespace taskd::exec
