#pragma once
// The operations that change tasks by name: pause, resume, enable, rm,
// rename and trigger.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "ops/json.hpp"
#include "sched/clock.hpp"
#include "sched/trigger.hpp"
#include "store/database.hpp"

namespace taskd::ops {

// The tasks a change names: by name (every one must exist), or all of an
// owner (rm) or of a group (the others).
struct Selection {
  std::vector<std::string> names;
  std::string owner;
  std::string group;
};

enum class Change { remove, pause, resume, enable };  // in the order of change.cpp's kind_of
// The command that makes the change: rm, pause, resume, enable.
std::string_view verb_of(Change change);

// What a change did to one task: `done`, or nothing as the task already
// was so; enable keeps why the task had been disabled.
struct Outcome {
  std::string task;
  bool done = true;
  std::string disabled_reason;
};

// Applies `change` to every selected task in one transaction, reading the
// time from `clock` inside it: all or nothing (rm is refused while a task is
// still --after a removed one). What it did to each task, once committed.
core::Result<std::vector<Outcome>> change_tasks(store::Database& db, const Selection& selection, Change change,
                                                const sched::Clock& clock);
// One element per task: {"task", "paused"|"resumed"|"enabled": done},
// enable's with "disabled_reason" (null unless done).
Json outcomes_json(const std::vector<Outcome>& outcomes, Change change);

// Gives the task `old_name` the name `new_name`. Its id stays, and with it
// its state, history, owner and a run in flight, which the scheduler
// records by id. Returns how many tasks follow it (--after) by its new name.
core::Result<std::int64_t> rename_task(store::Database& db, const std::string& old_name, const std::string& new_name);
Json renamed_json(const std::string& old_name, const std::string& new_name, std::int64_t followers);

// Queues one run of the task called `name` now (--force: enables it first).
struct Triggered {
  std::string task;
  sched::Triggered result;
};
core::Result<Triggered> trigger_task(store::Database& db, std::string_view name, bool force, const sched::Clock& clock);
Json triggered_json(const Triggered& triggered);

}  // namespace taskd::ops
