#include "sched/replace.hpp"

#include <csignal>
#include <fmt/format.h>

#include "core/policy.hpp"
#include "store/runs.hpp"

namespace taskd::sched {

core::Result<std::optional<ChildToStop>> replace_active_runs(store::Database& db, std::int64_t task_id,
                                                             core::TaskState& state, core::Time slot,
                                                             core::Time now) {
  auto why = fmt::format("replaced by the run of slot {} (overlap=replace)", core::format_rfc3339(slot));
  TRY(store::drop_queued_runs(db, task_id, why, now));
  auto running = TRY(store::running_run_of(db, task_id));
  if (!running) return std::optional<ChildToStop>();
  const auto& run = *running;
  if (state.attempt_uid == run.attempt_uid) state = core::on_replace(std::move(state));
  if (!db.file()) {
    TRY(store::ask_to_stop(db, run.id, run.attempt_uid, why));
    return std::optional<ChildToStop>(ChildToStop{});
  }
  store::FinishRecord record{run.id, run.attempt_uid, core::RunStatus::failed, now, std::nullopt, SIGTERM, why, "",
                             false};
  TRY(store::finish_run(db, record));
  return std::optional<ChildToStop>(ChildToStop{run.child_pid, run.child_started_at});
}

void stop_children(const ProcessTable& processes, const std::vector<ChildToStop>& children) {
  for (const auto& child : children) {
    if (child.pid > 0) processes.terminate_group(child.pid, child.started_at);
  }
}

}  // namespace taskd::sched
