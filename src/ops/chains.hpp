#pragma once
// The checks of chains (--after) that a change of tasks must pass, inside
// its transaction, before anything is written: bad input that names the
// tasks, so a refused change writes nothing.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/task.hpp"
#include "store/database.hpp"

namespace taskd::ops {

// A change of tasks: the definitions it adds or changes, the names it removes.
struct TaskChange {
  std::vector<const core::TaskDefinition*> written;
  std::set<std::string, std::less<>> removed;
};

// Refuses a change after which a written task's upstream would not exist,
// a removed task would still have a follower, or the chains would close a
// cycle ("--after: a cycle: a -> b -> a"). `label` names the option or key
// in messages (--after, after); `verb` the command (rm, apply --prune).
core::Result<void> check_chains(store::Database& db, const TaskChange& change, std::string_view label,
                                std::string_view verb);

// After tasks were removed: refuses when a task is still --after one of
// them (the caller rolls the removal back).
core::Result<void> check_no_follower_left(store::Database& db, std::string_view verb);

}  // namespace taskd::ops
