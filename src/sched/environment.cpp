#include "sched/environment.hpp"

#include <algorithm>
#include <string_view>

extern char** environ;

namespace taskd::sched {
namespace {

// What of taskd's own environment would hand a command the database: the
// database itself (TASKD_DB, a server's maybe with its password), and
// libpq's variables that hold a password or name the file it reads one or
// a client key from. A task that needs the database gets them from --env.
// And systemd's notify socket and watchdog: only taskd speaks for the service.
constexpr std::string_view withheld_variables[] = {"TASKD_DB",      "PGPASSWORD",    "PGPASSFILE",  "PGSERVICEFILE",
                                                   "PGSSLKEY",      "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"};

bool withheld(std::string_view entry) {
  return std::ranges::find(withheld_variables, entry.substr(0, entry.find('='))) != std::end(withheld_variables);
}

// Sets NAME=value in `env`, in place of an earlier value of NAME. (A linear
// search: a map of taskd's whole environment for every run was a noticeable
// part of a run's cost in bench/dispatch.sh.)
void put(std::vector<std::string>& env, const std::string& name, const std::string& value) {
  auto same_name = [&](const std::string& entry) {
    return entry.size() > name.size() && entry[name.size()] == '=' && entry.starts_with(name);
  };
  std::string entry = name + "=" + value;
  if (auto found = std::ranges::find_if(env, same_name); found != env.end()) *found = std::move(entry);
  else env.push_back(std::move(entry));
}

// What cron keeps of its own environment for a user's command: the
// language, the locale's categories and the time zone.
bool locale_or_zone(std::string_view entry) {
  std::string_view name = entry.substr(0, entry.find('='));
  return name == "LANG" || name == "LANGUAGE" || name == "TZ" || name.starts_with("LC_");
}

void put_all(std::vector<std::string>& env, const std::vector<core::EnvVar>& variables) {
  for (const auto& [name, value] : variables) put(env, name, value);
}

}  // namespace

std::vector<std::string> command_environment(const core::TaskDefinition& definition,
                                             const std::vector<core::EnvVar>& variables,
                                             const std::vector<core::EnvVar>& from_file) {
  std::vector<std::string> env;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view variable = *entry;
    if (variable.find('=') != std::string_view::npos && !withheld(variable)) env.emplace_back(variable);
  }
  put_all(env, from_file);
  put_all(env, definition.env);
  put_all(env, variables);
  return env;
}

std::vector<std::string> fixed_environment(const std::vector<core::EnvVar>& variables) {
  std::vector<std::string> env{"PATH=/usr/bin:/bin"};
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view variable = *entry;
    if (variable.find('=') != std::string_view::npos && locale_or_zone(variable)) env.emplace_back(variable);
  }
  put_all(env, variables);
  return env;
}

std::vector<std::string> user_environment(const core::TaskDefinition& definition,
                                          const std::vector<core::EnvVar>& variables,
                                          const std::vector<core::EnvVar>& account,
                                          const std::vector<core::EnvVar>& from_file) {
  auto env = fixed_environment(account);
  put_all(env, from_file);
  put_all(env, definition.env);
  put_all(env, variables);
  return env;
}

}  // namespace taskd::sched
