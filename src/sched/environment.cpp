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
constexpr std::string_view withheld_variables[] = {"TASKD_DB", "PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE", "PGSSLKEY"};

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

}  // namespace

std::vector<std::string> command_environment(const core::TaskDefinition& definition,
                                             const std::vector<core::EnvVar>& variables,
                                             const std::vector<core::EnvVar>& account) {
  std::vector<std::string> env;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view variable = *entry;
    if (variable.find('=') != std::string_view::npos && !withheld(variable)) env.emplace_back(variable);
  }
  for (const auto& [name, value] : account) put(env, name, value);
  for (const auto& [name, value] : definition.env) put(env, name, value);
  for (const auto& [name, value] : variables) put(env, name, value);
  return env;
}

}  // namespace taskd::sched
