#pragma once
// Groups of tasks: a name every task of the group shares, and an optional cap
// on how many of the group's runs may run at once (seed 001).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.hpp"
#include "store/database.hpp"

namespace taskd::store {

struct GroupSummary {
  std::string name;
  std::optional<int> concurrency;  // none: no cap
  int tasks = 0;
  int paused = 0;
  int queued = 0;
  int running = 0;
};

// Sets (or, with none, lifts) the group's cap. A group may be capped before
// any task joins it.
core::Result<void> set_group_concurrency(Database& db, std::string_view name, std::optional<int> concurrency,
                                         core::Time now);

// Every group that has a cap or a task, by name.
core::Result<std::vector<GroupSummary>> list_groups(Database& db);

// The caps of the groups that have one: all of them, or (given an owner)
// those of the groups the owner's tasks use.
core::Result<std::map<std::string, int>> group_caps(Database& db, std::string_view owner);

}  // namespace taskd::store
