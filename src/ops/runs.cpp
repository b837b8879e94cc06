#include "ops/runs.hpp"

#include <fmt/format.h>

#include "ops/tasks.hpp"

namespace taskd::ops {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

// The task named `name`: what can be read of it (its id and name at least),
// for the runs of a malformed row are shown as any others.
Result<core::Task> readable_task(store::Database& db, std::string_view name, std::string_view verb) {
  auto task = TRY(find_named_stored_task(db, name, verb));
  return store::readable(task);
}

// The run whose output `logs` shows: the one asked for, or the task's latest
// run that started.
Result<store::RunRecord> run_to_show(store::Database& db, const core::Task& task, std::int64_t run_id) {
  if (run_id != 0) {
    auto run = TRY(store::find_run(db, run_id));
    if (!run || run->task_id != task.id)
      return fail(ErrorKind::bad_input, fmt::format("logs: task \"{}\" has no run {}", task.definition.name, run_id));
    return *run;
  }
  auto runs = TRY(store::list_runs(db, task.id, 1000));
  for (const auto& run : runs) {
    if (run.started_at) return run;
  }
  return fail(ErrorKind::bad_input, fmt::format("logs: task \"{}\" has not run yet", task.definition.name));
}

}  // namespace

Result<void> for_each_run_of(store::Database& db, std::string_view name, store::RunFilter filter,
                             std::string_view verb, const store::RunVisitor& visit) {
  if (!name.empty()) filter.task_id = TRY(readable_task(db, name, verb)).id;
  return store::for_each_run(db, filter, visit);
}

Result<RunOutput> run_output(store::Database& db, std::string_view name, std::int64_t run_id) {
  auto task = TRY(readable_task(db, name, "logs"));
  auto run = TRY(run_to_show(db, task, run_id));
  auto output = TRY(store::run_output(db, run.id));
  return RunOutput{.run = std::move(run), .output = std::move(output)};
}

Json run_output_json(const RunOutput& shown) {
  Json out = run_json(shown.run);
  out["output"] = shown.output;
  return out;
}

}  // namespace taskd::ops
