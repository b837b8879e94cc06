#include "ops/tasks.hpp"

#include <fmt/format.h>

namespace taskd::ops {

using core::ErrorKind;
using core::fail;
using core::Result;

Result<store::StoredTask> find_named_stored_task(store::Database& db, std::string_view name, std::string_view verb) {
  auto task = TRY(store::find_stored_task(db, name));
  if (!task) return fail(ErrorKind::bad_input, fmt::format("{}: no task named \"{}\" (see taskd list)", verb, name));
  return std::move(*task);
}

Result<core::Task> find_named_task(store::Database& db, std::string_view name, std::string_view verb) {
  auto task = TRY(find_named_stored_task(db, name, verb));
  if (!task)
    return fail(ErrorKind::bad_input, fmt::format("{}: {}", verb, store::malformed_task_error(task.error()).message));
  return std::move(*task);
}

Result<std::optional<core::Task>> find_task(store::Database& db, std::string_view name) {
  return store::find_task(db, name);
}

Result<bool> task_exists(store::Database& db, std::string_view name) {
  return TRY(store::find_stored_task(db, name)).has_value();
}

Result<void> list_tasks(store::Database& db, const store::TaskFilter& filter, Detail detail,
                        const store::TaskVisitor& visit) {
  if (detail == Detail::headline) return store::for_each_task_headline(db, filter, visit);
  return store::for_each_task(db, filter, visit);
}

Result<std::vector<std::string>> task_owners(store::Database& db) { return store::task_owners(db); }

Result<ShownTask> show_task(store::Database& db, std::string_view name) {
  auto stored = TRY(find_named_stored_task(db, name, "show"));
  auto latest = TRY(store::list_runs(db, store::readable(stored).id, 1));
  std::optional<store::RunRecord> last_run;
  if (!latest.empty()) last_run = std::move(latest.front());
  return ShownTask{.task = std::move(stored), .last_run = std::move(last_run)};
}

Json shown_task_json(const ShownTask& shown) {
  auto out = stored_task_json(shown.task);
  out["last_run"] = shown.last_run ? run_json(*shown.last_run) : Json(nullptr);
  return out;
}

}  // namespace taskd::ops
