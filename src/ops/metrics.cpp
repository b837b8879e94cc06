#include "ops/metrics.hpp"

#include "ops/check.hpp"
#include "store/tasks.hpp"

namespace taskd::ops {
namespace {

using core::Result;

// Tasks by condition: the three rare ones each from its partial index, the
// active ones as the rest of the total.
Result<std::vector<store::NamedCount>> tasks_by_condition(store::Database& db) {
  using core::Condition;
  auto total = TRY(store::count_tasks(db, {}));
  std::vector<store::NamedCount> counts{{"active", total}};
  for (auto [condition, name] : {std::pair{Condition::paused, "paused"}, std::pair{Condition::disabled, "disabled"},
                                 std::pair{Condition::failing, "failing"}}) {
    auto count = TRY(store::count_tasks(db, {.condition = condition}));
    counts.front().count -= count;
    counts.push_back({name, count});
  }
  return counts;
}

}  // namespace

Result<Metrics> read_metrics(store::Database& db) {
  Metrics metrics;
  metrics.ended = TRY(store::ended_runs_by_status(db));
  metrics.in_flight = TRY(store::runs_in_flight(db));
  metrics.lateness = TRY(store::start_lateness(db));
  metrics.queue = TRY(store::queue_depth_by_group(db));
  metrics.tasks = TRY(tasks_by_condition(db));
  metrics.history = TRY(store::history_size(db));
  metrics.successes = TRY(store::last_successes(db));
  auto scheduler = TRY(read_schedulers(db));
  metrics.heartbeat = scheduler.newest_heartbeat;
  if (auto tick = scheduler.newest_tick; tick && (!metrics.heartbeat || tick->at > *metrics.heartbeat))
    metrics.heartbeat = tick->at;
  return metrics;
}

}  // namespace taskd::ops
