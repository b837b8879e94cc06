#include "sched/backfill.hpp"

#include <fmt/format.h>

#include "store/tasks.hpp"

namespace taskd::sched {
using namespace std::chrono_literals;

core::Result<void> check_backfill_not_pending(store::Database& db, const core::Task& task,
                                              const std::vector<core::Time>& slots) {
  auto pending = TRY(store::pending_backfill_slots(db, task.id, slots.front(), slots.back() + 1ms));
  if (pending.empty()) return {};
  return core::fail(core::ErrorKind::bad_input,
                    fmt::format("backfill: {} slot(s) of {} in this window already have a backfilled run queued or "
                                "running (the first: {}); nothing queued: wait for them, or narrow the window",
                                pending.size(), task.definition.name, core::format_rfc3339(pending.front())));
}

core::Result<std::vector<std::int64_t>> queue_backfill(store::Database& db, const core::Task& task,
                                                       const std::vector<core::Time>& slots, core::Time now) {
  return store::write(db, [&]() -> core::Result<std::vector<std::int64_t>> {
    auto current = TRY(store::find_task(db, task.id));
    if (!current)
      return core::fail(core::ErrorKind::bad_input, fmt::format("backfill: no task named \"{}\"", task.definition.name));
    TRY(check_backfill_not_pending(db, *current, slots));
    return store::insert_backfill_runs(db, *current, slots, 1, now, now);
  });
}

core::Result<core::FinishDecision> finish_with_own_ladder(store::Database& db, const core::Task& task,
                                                          const core::Schedule& schedule, const store::RunRecord& run,
                                                          const AttemptEnd& end, core::Time now) {
  auto decision = core::on_backfill_finish(schedule, task.state, now, end.outcome, end.reason);
  if (auto retry_at = core::backfill_retry_at(task.definition, run.attempt_no, end.outcome, now)) {
    TRY(store::insert_retry_of(db, task, run, run.attempt_no + 1, now, *retry_at));
    decision.retry_pending = true;
  }
  return decision;
}

}  // namespace taskd::sched
