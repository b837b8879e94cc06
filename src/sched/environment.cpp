#include "sched/environment.hpp"

#include <map>
#include <string_view>

extern char** environ;

namespace taskd::sched {

std::vector<std::string> command_environment(const core::TaskDefinition& definition,
                                             const std::vector<core::EnvVar>& variables) {
  std::map<std::string, std::string> merged;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view text(*entry);
    auto equals = text.find('=');
    if (equals != std::string_view::npos) merged[std::string(text.substr(0, equals))] = text.substr(equals + 1);
  }
  for (const auto& [name, value] : definition.env) merged[name] = value;
  for (const auto& [name, value] : variables) merged[name] = value;
  std::vector<std::string> env;
  env.reserve(merged.size());
  for (const auto& [name, value] : merged) env.push_back(name + "=" + value);
  return env;
}

}  // namespace taskd::sched
