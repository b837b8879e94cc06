#include "ops/backfill.hpp"

#include "ops/tasks.hpp"
#include "sched/backfill.hpp"

namespace taskd::ops {
namespace {

using core::Result;

// The runs queued for `slots`; none in a dry run, which refuses what the
// queuing would refuse but writes nothing.
Result<std::vector<std::int64_t>> queue_slots(store::Database& db, const core::Task& task,
                                              const std::vector<core::Time>& slots, core::Time now, bool dry_run) {
  if (!dry_run) return sched::queue_backfill(db, task, slots, now);
  TRY(sched::check_backfill_not_pending(db, task, slots));
  return std::vector<std::int64_t>();
}

}  // namespace

Result<Backfilled> backfill(store::Database& db, const BackfillArgs& args, core::Time now) {
  auto task = TRY(find_named_task(db, args.name, "backfill"));
  const auto& schedule = task.schedule.value();
  auto slots = TRY(core::plan_backfill(task, schedule, args.window, now));
  auto run_ids = TRY(queue_slots(db, task, slots, now, args.dry_run));
  return Backfilled{.task = std::move(task), .slots = std::move(slots), .run_ids = std::move(run_ids)};
}

Json backfilled_json(const Backfilled& backfilled) {
  const auto& [task, slots, run_ids] = backfilled;
  Json out = Json::array();
  for (std::size_t i = 0; i < slots.size(); ++i)
    out.push_back({{"scheduled_at", core::format_rfc3339(slots[i])},
                   {"run_id", i < run_ids.size() ? Json(run_ids[i]) : Json(nullptr)}});
  return out;
}

}  // namespace taskd::ops
