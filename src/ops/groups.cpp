#include "ops/groups.hpp"

namespace taskd::ops {

core::Result<void> set_group_concurrency(store::Database& db, std::string_view name, std::optional<int> concurrency,
                                         core::Time now) {
  return store::set_group_concurrency(db, name, concurrency, now);
}

core::Result<std::vector<store::GroupSummary>> list_groups(store::Database& db) { return store::list_groups(db); }

Json group_json(const store::GroupSummary& group) {
  Json out;
  out["name"] = group.name;
  out["concurrency"] = group.concurrency ? Json(*group.concurrency) : Json(nullptr);
  out["tasks"] = group.tasks;
  out["paused"] = group.paused;
  out["queued"] = group.queued;
  out["running"] = group.running;
  return out;
}

core::Result<std::map<std::string, int>> group_caps(store::Database& db, std::string_view owner) {
  return store::group_caps(db, owner);
}

}  // namespace taskd::ops
