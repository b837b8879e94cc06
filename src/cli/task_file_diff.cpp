#include "cli/task_file_diff.hpp"

namespace taskd::cli {
namespace {

using Definition = core::TaskDefinition;

template <auto... Members>
bool same(const Definition& a, const Definition& b) {
  return ((a.*Members == b.*Members) && ...);
}

template <auto Member>
bool same_limit(const Definition& a, const Definition& b) {
  return a.limits.*Member == b.limits.*Member;
}

template <auto Member>
bool same_dst(const Definition& a, const Definition& b) {
  return a.dst.*Member == b.dst.*Member;
}

using FieldComparison = bool (*)(const Definition&, const Definition&);

const std::vector<std::pair<std::string, FieldComparison>>& definition_fields() {
  static const std::vector<std::pair<std::string, FieldComparison>> fields{
      {"command", same<&Definition::command>},
      {"schedule", same<&Definition::schedule_kind, &Definition::schedule_spec>},
      {"tz", same<&Definition::tz>},
      {"after_finish", same<&Definition::after_finish>},
      {"phase", same<&Definition::phase>},
      {"dtstart", same<&Definition::dtstart>},
      {"jitter", same<&Definition::jitter>},
      {"dst_gap", same_dst<&core::DstPolicy::gap>},
      {"dst_repeat", same_dst<&core::DstPolicy::repeat>},
      {"timeout", same<&Definition::timeout>},
      {"kill_grace", same<&Definition::kill_grace>},
      {"tolerance", same<&Definition::tolerance>},
      {"retry", same<&Definition::retry>},
      {"permanent_exit", same<&Definition::permanent_exit>},
      {"overlap", same<&Definition::overlap>},
      {"owner", same<&Definition::owner>},
      {"group", same<&Definition::group>},
      {"priority", same<&Definition::priority>},
      {"cwd", same<&Definition::cwd>},
      {"env", same<&Definition::env>},
      {"notify", same<&Definition::notify>},
      {"keep_runs", same<&Definition::keep_runs>},
      {"on_host", same<&Definition::on_host>},
      {"catch_up", same<&Definition::catch_up>},
      {"catch_up_window", same<&Definition::catch_up_window>},
      {"memory_max", same_limit<&core::ResourceLimits::memory_max>},
      {"cpu_weight", same_limit<&core::ResourceLimits::cpu_weight>},
      {"tasks_max", same_limit<&core::ResourceLimits::tasks_max>},
      {"alert_after", same<&Definition::alert_after>},
      {"after", same<&Definition::after>},
  };
  return fields;
}

}  // namespace

std::vector<std::string> changed_fields(const core::TaskDefinition& before, const core::TaskDefinition& after) {
  std::vector<std::string> changed;
  for (const auto& [name, same_in] : definition_fields()) {
    if (!same_in(before, after)) changed.push_back(name);
  }
  return changed;
}

}  // namespace taskd::cli
