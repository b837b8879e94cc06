#include "ops/task_diff.hpp"

#include <algorithm>

#include "core/defaults.hpp"
#include "core/task_fields.hpp"

namespace taskd::ops {
namespace {

using Definition = core::TaskDefinition;

template <auto... Members>
bool same(const Definition& a, const Definition& b) {
  return ((a.*Members == b.*Members) && ...);
}

template <auto Member>
bool same_dst(const Definition& a, const Definition& b) {
  return a.dst.*Member == b.dst.*Member;
}

bool takes(const Definition& d, std::string_view field) {
  return std::ranges::find(d.from_defaults, field) != d.from_defaults.end();
}

// A calendar's days that changed under the same calendars' names (apply of
// a file with [[calendar]] tables): named on their own.
bool same_calendar_days(const Definition& a, const Definition& b) {
  return a.calendar_days == b.calendar_days || a.skip_calendar != b.skip_calendar || a.only_calendar != b.only_calendar;
}

using FieldComparison = bool (*)(const Definition&, const Definition&);

// The command and the schedule's fields, which come first.
const std::vector<std::pair<std::string, FieldComparison>>& command_and_schedule() {
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
      {"calendar_days", same_calendar_days},
  };
  return fields;
}

}  // namespace

std::vector<std::string> changed_fields(const core::TaskDefinition& before, const core::TaskDefinition& after) {
  std::vector<std::string> changed;
  auto compare = [&](std::string_view name, FieldComparison same_in) {
    if (!same_in(before, after)) changed.emplace_back(name);
  };
  for (const auto& [name, same_in] : command_and_schedule()) compare(name, same_in);
  for (const auto& field : core::task_fields()) {
    if (field.name == "overlap") {
      compare("retry", same<&Definition::retry>);
      compare("permanent_exit", same<&Definition::permanent_exit>);
    }
    if (field.name == "notify") {
      compare("cwd", same<&Definition::cwd>);
      compare("env", same<&Definition::env>);
    }
    compare(field.name, field.same);
  }
  compare("after", same<&Definition::after>);
  // A field that the task now sets itself, or now takes from the defaults,
  // changed even where its value is the same.
  for (auto field : core::defaultable_fields()) {
    if (takes(before, field) != takes(after, field) && std::ranges::find(changed, field) == changed.end())
      changed.emplace_back(field);
  }
  return changed;
}

}  // namespace taskd::ops
