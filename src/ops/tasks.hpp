#pragma once
// The operations on tasks that read them: find one by name, list, show.
#include <optional>
#include <string_view>

#include "core/error.hpp"
#include "ops/json.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"

namespace taskd::ops {

// The task called `name`; an unknown name is bad input, said in `verb`'s
// words, and so is a malformed row (see store::malformed_task_error).
core::Result<core::Task> find_named_task(store::Database& db, std::string_view name, std::string_view verb);
// The same, with a malformed row as one: for show, edit, rm and history.
core::Result<store::StoredTask> find_named_stored_task(store::Database& db, std::string_view name,
                                                       std::string_view verb);

// The task called `name`, if there is one; a malformed row is the error
// store::malformed_task_error.
core::Result<std::optional<core::Task>> find_task(store::Database& db, std::string_view name);

// Whether a task (or a malformed row) is called `name`.
core::Result<bool> task_exists(store::Database& db, std::string_view name);

// What a listing reads of each task: all of it (for --json), or only what
// `list` shows, which a million tasks read faster.
enum class Detail { full, headline };
core::Result<void> list_tasks(store::Database& db, const store::TaskFilter& filter, Detail detail,
                              const store::TaskVisitor& visit);

// The owners of the tasks, each once ("" for tasks without one).
core::Result<std::vector<std::string>> task_owners(store::Database& db);

// One task as `show` shows it: its row and its latest run.
struct ShownTask {
  store::StoredTask task;
  std::optional<store::RunRecord> last_run;
};
core::Result<ShownTask> show_task(store::Database& db, std::string_view name);
// stored_task_json with the latest run under "last_run" (null for none).
Json shown_task_json(const ShownTask& shown);

}  // namespace taskd::ops
