#include "ops/defaults.hpp"

#include "core/defaults.hpp"
#include "ops/define.hpp"
#include "store/defaults.hpp"

namespace taskd::ops {
namespace {

using core::Result;

Result<void> check_change(const DefaultsChange& change) {
  for (const auto& [field, text] : change) {
    if (text) {
      TRY(core::check_default(field, *text));
    } else if (!core::is_defaultable(field)) {
      return core::fail(core::ErrorKind::usage, fmt::format("--clear {}: it has no default", field));
    }
  }
  return {};
}

// Lays `defaults` on each task that takes one of the changed fields from
// them; a malformed row is left as it is (taskd edit repairs it).
Result<std::int64_t> lay_on_tasks(store::Database& db, const core::Defaults& defaults, const DefaultsChange& change,
                                  core::Time now) {
  std::vector<std::string> fields;
  for (const auto& entry : change) fields.push_back(entry.first);
  std::int64_t count = 0;
  for (const auto& stored : TRY(store::tasks_taking(db, fields))) {
    if (!stored) continue;
    auto task = *stored;
    TRY(core::take_defaults(task, defaults, now));
    if (task.definition == stored->definition) continue;
    TRY(save_definition(db, *stored, task.definition, task.schedule.value(), now));
    ++count;
  }
  return count;
}

}  // namespace

Result<std::vector<DefaultEntry>> show_defaults(store::Database& db) {
  auto defaults = TRY(store::read_defaults(db));
  std::vector<DefaultEntry> entries;
  for (auto field : core::defaultable_fields()) {
    DefaultEntry entry{std::string(field), std::nullopt, "", TRY(store::count_tasks_taking(db, field))};
    if (auto found = defaults.find(field); found != defaults.end()) {
      entry.value = found->second;
      if (auto checked = core::check_default(field, found->second); !checked) entry.problem = checked.error().message;
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

Result<std::int64_t> change_defaults(store::Database& db, const DefaultsChange& change, core::Time now) {
  TRY(check_change(change));
  return store::write(db, [&]() -> Result<std::int64_t> {
    for (const auto& [field, text] : change) TRY(store::write_default(db, field, text));
    return lay_on_tasks(db, TRY(store::read_defaults(db)), change, now);
  });
}

Json defaults_json(const std::vector<DefaultEntry>& entries) {
  Json out = Json::object();
  for (const auto& entry : entries) {
    Json item{{"value", entry.value ? Json(*entry.value) : Json(nullptr)},
              {"built_in", core::built_in_text(entry.field)},
              {"tasks", entry.tasks}};
    if (!entry.problem.empty()) item["problem"] = entry.problem;
    out[entry.field] = item;
  }
  return out;
}

}  // namespace taskd::ops
