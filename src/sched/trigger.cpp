#include "sched/trigger.hpp"

#include <fmt/format.h>

#include "core/policy.hpp"
#include "sched/outcome.hpp"
#include "sched/replace.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"

namespace taskd::sched {
namespace {

core::Result<std::optional<std::int64_t>> active_run_of(store::Database& db, std::int64_t task_id) {
  auto running = TRY(store::running_run_of(db, task_id));
  if (running) return std::optional<std::int64_t>(running->id);
  auto queued = TRY(store::list_runs(db, task_id, 1));
  if (!queued.empty() && queued.front().status == core::RunStatus::queued)
    return std::optional<std::int64_t>(queued.front().id);
  return std::optional<std::int64_t>();
}

}  // namespace

core::Result<ManualRun> queue_manual_run(store::Database& db, const core::Task& task, core::TaskState& state,
                                         core::Time now, std::optional<std::int64_t> upstream_run_id) {
  ManualRun result;
  auto active = TRY(active_run_of(db, task.id));
  if (active && task.definition.overlap == core::Overlap::skip) {
    result.active_run = active;
    return result;  // nothing written
  }
  if (active && task.definition.overlap == core::Overlap::replace) {
    result.to_stop = TRY(replace_active_runs(db, task.id, state, now, now));
  }
  result.queued_run =
      TRY(store::insert_queued_run(db, task, now, core::Trigger::manual, now, std::nullopt, upstream_run_id));
  return result;
}

core::Result<Triggered> trigger_run(store::Database& db, const core::Task& task, bool force, core::Time now,
                                    const ProcessTable& processes) {
  const auto& name = task.definition.name;
  if (task.state.disabled_until_update && !force)
    return core::fail(core::ErrorKind::bad_input,
                      fmt::format("trigger: {} is disabled ({}); run 'taskd enable {}' or 'taskd trigger --force {}'",
                                  name, task.state.disabled_reason, name, name));
  auto schedule = TRY(core::schedule_of(task.definition));
  std::optional<ChildToStop> to_stop;
  auto triggered = store::write(db, [&]() -> core::Result<Triggered> {
    Triggered result;
    auto current = TRY(store::find_task(db, task.id));
    if (!current) return core::fail(core::ErrorKind::bad_input, fmt::format("trigger: no task named \"{}\"", name));
    core::TaskState state = current->state;
    std::optional<core::SkippedSlots> skipped;
    if (state.disabled_until_update) {
      auto enabled = core::on_enable(schedule, state, now);
      state = enabled.state;
      skipped = enabled.skipped;
      result.enabled = true;
    }
    auto queued = TRY(queue_manual_run(db, *current, state, now));
    if (queued.active_run) {
      result.active_run = queued.active_run;
      return result;  // nothing written
    }
    result.queued_run = queued.queued_run;
    to_stop = queued.to_stop;
    result.replaced = to_stop.has_value();
    TRY(write_decision(db, task.id, state, skipped, now));
    return result;
  });
  if (triggered && to_stop) stop_children(processes, {*to_stop});
  return triggered;
}

}  // namespace taskd::sched
