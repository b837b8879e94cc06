#pragma once
// Groups of tasks and their concurrency caps.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "ops/json.hpp"
#include "store/groups.hpp"

namespace taskd::ops {

// Sets (or, with none, lifts) the cap of the group called `name` (a valid name).
core::Result<void> set_group_concurrency(store::Database& db, std::string_view name, std::optional<int> concurrency,
                                         core::Time now);
// Every group that has a cap or a task, by name.
core::Result<std::vector<store::GroupSummary>> list_groups(store::Database& db);
Json group_json(const store::GroupSummary& group);
// The caps of the groups that have one: all of them, or (given an owner)
// those of the groups the owner's tasks use.
core::Result<std::map<std::string, int>> group_caps(store::Database& db, std::string_view owner);

}  // namespace taskd::ops
