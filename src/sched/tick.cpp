#include "sched/tick.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iterator>
#include <vector>

#include "core/policy.hpp"
#include "sched/outcome.hpp"
#include "sched/replace.hpp"
#include "store/calendars.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"

namespace taskd::sched {
namespace {

struct TaskEnqueued {
  TickResult counts;
  std::optional<ChildToStop> replaced_child;
};

// The SKIPPED rows of the days the task's --skip-calendar removed from what
// the decision accounted: one a day, naming the day and its calendar.
core::Result<std::vector<core::SkippedSlots>> calendar_day_rows(store::Database& db, const core::Task& task,
                                                                const core::TaskState& decided) {
  auto skips = TRY(core::calendar_skips(task.definition, task.state.accounted_until, decided.accounted_until));
  std::vector<core::SkippedSlots> rows;
  if (skips.days.empty()) return rows;
  auto calendars = TRY(store::read_calendars(db, task.definition.skip_calendar));
  for (const auto& day : skips.days) rows.push_back(core::skipped_day(day, core::skipped_day_words(day.day, calendars)));
  if (skips.more_days > 0)
    rows.push_back(core::skipped_more_days(
        skips, fmt::format("days of {} (--skip-calendar)", fmt::join(task.definition.skip_calendar, ", "))));
  return rows;
}

// Applies the enqueue decision for one due task; returns what it wrote and
// adds it to `reports`.
core::Result<TaskEnqueued> enqueue_task(store::Database& db, const core::Task& task, core::Time now,
                                        core::Missed missed, std::vector<RunReport>& reports) {
  TaskEnqueued result;
  const auto& schedule = task.schedule.value();
  auto active = TRY(store::has_active_run(db, task.id));
  auto decision = core::on_enqueue(task.definition, schedule, task.state, now, active, missed);
  if (decision.skipped) {
    TRY(store::insert_skipped_run(db, task.id, *decision.skipped, now));
    result.counts.skipped = 1;
    reports.emplace_back(0, task.definition.name, core::RunStatus::skipped, decision.skipped->reason);
  }
  for (auto& row : TRY(calendar_day_rows(db, task, decision.state))) {
    TRY(store::insert_skipped_run(db, task.id, row, now));
    result.counts.skipped += 1;
    reports.emplace_back(0, task.definition.name, core::RunStatus::skipped, std::move(row.reason));
  }
  if (!decision.run_slot) {
    TRY(store::save_state(db, task.id, decision.state, now));
    return result;
  }
  if (active && task.definition.overlap == core::Overlap::replace) {
    auto replaced = TRY(replace_active_runs(db, task.id, decision.state, *decision.run_slot, now));
    result.replaced_child = replaced;
    result.counts.replaced = replaced.has_value();
  }
  auto queued = TRY(store::queue_run_saving_state(db, task, *decision.run_slot, decision.trigger, now,
                                                  decision.not_before, decision.state));
  result.counts.enqueued = 1;
  reports.emplace_back(queued, task.definition.name, core::RunStatus::queued, "");
  return result;
}

struct BatchResult {
  int due = 0;
  std::vector<ChildToStop> to_stop;
  std::vector<MalformedReport> disabled;
};

}  // namespace

// Runs queued by one tick that make a herd: the store is told, so that the
// claims that follow are planned for a long queue.
constexpr int herd = 1000;
// Waits for due tasks another host's transaction held, per tick: each is a
// task that tick then takes, unless a third host took it first.
constexpr int waits_for_held = 64;

core::Result<TickResult> enqueue_due(store::Database& db, core::Time now, int batch,
                                     const ReportSink& sink,
                                     const ProcessTable& processes, const std::function<void()>& before_commit,
                                     const std::function<core::Result<void>()>& between_batches,
                                     core::Missed missed) {
  TickResult total;
  int waits = 0;
  while (true) {
    std::vector<RunReport> reports;
    auto batch_result = TRY(store::write(db, [&]() -> core::Result<BatchResult> {
      auto due = TRY(store::due_tasks(db, now, batch));
      BatchResult result{static_cast<int>(due.size()), {}, {}};
      for (const auto& task : due) {
        if (!task) {
          auto disabled = TRY(disable_malformed(db, task.error(), now));
          result.disabled.push_back(std::move(disabled));
          continue;
        }
        auto enqueued = TRY(enqueue_task(db, *task, now, missed, reports));
        total.enqueued += enqueued.counts.enqueued;
        total.skipped += enqueued.counts.skipped;
        total.replaced += enqueued.counts.replaced;
        if (enqueued.replaced_child) result.to_stop.push_back(*enqueued.replaced_child);
      }
      if (before_commit && !due.empty()) before_commit();
      return result;
    }, store::WriteScope::rows));
    stop_children(processes, batch_result.to_stop);
    std::ranges::move(batch_result.disabled, std::back_inserter(total.disabled));
    if (sink) std::ranges::for_each(reports, sink);
    if (between_batches) {
      TRY(between_batches());
    }
    if (batch_result.due >= batch) continue;
    if (waits++ < waits_for_held) {
      auto held = store::wait_for_held_due_task(db, now);
      if (held && *held) continue;  // another host's transaction held it: it has ended
      if (!held && held.error().kind != core::ErrorKind::busy) return std::unexpected(held.error());
      total.held = !held;
    }
    if (total.enqueued >= herd) {
      TRY(store::refresh_run_statistics(db));
    }
    return total;
  }
}

bool enqueue_needed(const store::TickWork& work) { return work.due || work.running; }

}  // namespace taskd::sched
