#include "store/overview.hpp"

#include <fmt/format.h>
#include <limits>
#include <optional>
#include <utility>

#include "core/policy.hpp"
#include "core/schedule.hpp"
#include "store/columns.hpp"
#include "store/task_row.hpp"

namespace taskd::store {

using core::Result;

namespace {

// The rows of a query whose columns are a name and a count.
Result<std::vector<NamedCount>> named_counts(Database& db, const char* sql) {
  return guarded(db, [&]() -> Result<std::vector<NamedCount>> {
    auto query = db.prepare(sql);
    std::vector<NamedCount> counts;
    while (query.step()) {
      Columns c(query);
      counts.push_back({c.text(), c.int64()});
    }
    return counts;
  });
}

// A column of the task's latest run that taskd planned (schedule or retry,
// not manual) and that started or still waits.
std::string latest_planned_run(std::string_view column) {
  return fmt::format("(SELECT p.{} FROM runs p WHERE p.task_id = tasks.id AND p.trigger <> 'manual' "
                     "AND (p.started_at IS NOT NULL OR p.status = 'queued') ORDER BY p.id DESC LIMIT 1)",
                     column);
}

// The slot of the task's retry that is queued or running, if any (a probe
// of runs_active).
constexpr std::string_view active_retry_slot =
    "(SELECT a.scheduled_at FROM runs a WHERE a.task_id = tasks.id AND a.status IN ('queued', 'running') "
    "AND a.trigger = 'retry' ORDER BY a.id DESC LIMIT 1)";

// 1 when the task's latest run that started was started by hand (taskd
// trigger, backfill; a follower's run, started by its upstream, is not).
constexpr std::string_view latest_run_by_hand =
    "(SELECT CASE WHEN s.trigger = 'manual' AND s.upstream_run_id IS NULL THEN 1 ELSE 0 END FROM runs s "
    "WHERE s.task_id = tasks.id AND s.started_at IS NOT NULL ORDER BY s.id DESC LIMIT 1)";

// The columns check reads of each task: see task_facts_from.
std::string task_facts_columns() {
  return fmt::format("{}, created_at, {}, {}, {}, {}", task_columns(), latest_planned_run("not_before"),
                     latest_planned_run("started_at"), active_retry_slot, latest_run_by_hand);
}

// What check judges of the task in `row`: its columns (task_columns), then
// created_at, its latest planned run's not_before and started_at, the slot
// of its active retry and whether its latest run was started by hand. Of a
// malformed row (created_at too), what is wrong, its name and whether it is
// paused are all check reads.
core::TaskFacts task_facts_from(const Query& row) {
  core::TaskFacts facts;
  const int created_column = task_column_count();
  auto stored = read_task(row);
  auto created_at = read_instant(row, created_column);
  const auto& task = readable(stored);
  facts.name = task.definition.name;
  facts.paused = task.state.paused;
  if (!stored || !created_at) {
    auto problems = stored ? std::vector<ColumnProblem>() : stored.error().problems;
    if (!created_at) problems.push_back({"created_at", created_at.error().message});
    facts.malformed = describe_problems(problems);
    return facts;
  }
  facts.disabled = task.state.disabled_until_update;
  facts.disabled_reason = task.state.disabled_reason;
  facts.alert_after = task.definition.alert_after;
  if (task.schedule) facts.days_off = core::schedule_changes(*task.schedule);
  facts.last_succeeded_at = task.state.last_succeeded_at;
  facts.created_at = *created_at;
  Columns c(row, created_column + 1);
  facts.run_not_before = c.optional_time();
  facts.run_started_at = c.optional_time();
  facts.last_status = task.state.last_status;
  facts.last_finished_at = task.state.last_finished_at;
  facts.failing_since = task.state.failing_since;
  facts.ladder_exhausted_at = task.state.ladder_exhausted_at;
  facts.retry_pending = task.schedule && core::retry_pending(*task.schedule, task.state, c.optional_time());
  facts.last_run_by_hand = c.optional_int64().value_or(0) == 1;
  return facts;
}

}  // namespace

Result<std::vector<NamedCount>> queue_depth_by_group(Database& db) {
  return named_counts(db, "SELECT t.group_name, count(*) FROM runs r JOIN tasks t ON t.id = r.task_id "
                          "WHERE r.status = 'queued' GROUP BY t.group_name ORDER BY t.group_name");
}

Result<std::vector<NamedCount>> queue_depth_by_host(Database& db) {
  return named_counts(db, "SELECT t.on_host, count(*) FROM runs r JOIN tasks t ON t.id = r.task_id "
                          "WHERE r.status = 'queued' AND t.on_host <> '' GROUP BY t.on_host ORDER BY t.on_host");
}

// The counters are added up: a server keeps them in shards, one per
// transaction adding at once (schema-postgresql.sql, migration 5).
Result<std::vector<NamedCount>> ended_runs_by_status(Database& db) {
  return named_counts(db, "SELECT status, CAST(sum(runs) AS bigint) FROM run_totals GROUP BY status ORDER BY status");
}

Result<std::vector<NamedCount>> runs_in_flight(Database& db) {
  // Each count reads its partial index: runs_queue, runs_running.
  return named_counts(db, "SELECT 'queued', count(*) FROM runs WHERE status = 'queued' "
                          "UNION ALL SELECT 'running', count(*) FROM runs WHERE status = 'running'");
}

Result<LatenessHistogram> start_lateness(Database& db) {
  return guarded(db, [&]() -> Result<LatenessHistogram> {
    LatenessHistogram histogram;
    // Each run is in one bucket: adding them up gives Prometheus' "at most".
    auto buckets = db.prepare("SELECT le_ms, CAST(sum(runs) AS bigint) FROM lateness_buckets GROUP BY le_ms ORDER BY le_ms");
    while (buckets.step()) {
      Columns c(buckets);
      auto le_ms = c.int64();
      histogram.count += c.int64();
      if (le_ms == std::numeric_limits<std::int64_t>::max()) continue;
      histogram.bounds.push_back(static_cast<double>(le_ms) / 1000.0);
      histogram.at_most.push_back(histogram.count);
    }
    auto sum = db.prepare("SELECT CAST(sum(lateness_sum_ms) AS bigint) FROM history_totals");
    if (sum.step()) histogram.sum_seconds = static_cast<double>(sum.query().int64(0)) / 1000.0;
    return histogram;
  });
}

Result<HistorySize> history_size(Database& db) {
  return guarded(db, [&]() -> Result<HistorySize> {
    auto query = db.prepare("SELECT CAST(sum(runs) AS bigint), CAST(sum(output_bytes) AS bigint) FROM history_totals");
    if (!query.step()) return HistorySize{};
    Columns c(query);
    return HistorySize{c.int64(), c.int64()};
  });
}

Result<std::vector<NamedTime>> last_successes(Database& db) {
  return guarded(db, [&]() -> Result<std::vector<NamedTime>> {
    auto query =
        db.prepare("SELECT name, last_succeeded_at FROM tasks WHERE last_succeeded_at IS NOT NULL ORDER BY name");
    std::vector<NamedTime> successes;
    while (query.step()) {
      Columns c(query);
      successes.push_back({c.text(), c.time()});
    }
    return successes;
  });
}

namespace {

// A server keeps a task's counters in a row per shard: adds `row`'s to
// `stats`, and takes its last run when that ended later.
void add_run_stats(TaskRunStats& stats, Columns& row) {
  for (auto& count : stats.ended) count += row.int64();
  for (auto& count : stats.late_at_most) count += row.int64();
  stats.late_count += row.int64();
  stats.late_sum_ms += row.int64();
  auto finished_at = row.optional_time();
  auto duration = row.optional_int64();
  if (finished_at && duration && (!stats.last_finished_at || *finished_at >= *stats.last_finished_at)) {
    stats.last_finished_at = finished_at;
    stats.last_duration = core::Millis{*duration};
  }
}

}  // namespace

Result<void> for_each_task_run_stats(Database& db, const std::function<void(const TaskRunStats&)>& visit) {
  return guarded(db, [&]() -> Result<void> {
    // CROSS JOIN: SQLite walks the tasks by name (no sort of them all) and
    // finds each one's rows by key.
    auto query = db.prepare(
        "SELECT t.name, s.succeeded, s.failed, s.timed_out, s.dropped, s.skipped, s.lost, s.late_100ms, "
        "s.late_500ms, s.late_1s, s.late_5s, s.late_30s, s.late_1m, s.late_5m, s.late_count, s.late_sum_ms, "
        "s.last_finished_at, s.last_duration_ms "
        "FROM tasks t CROSS JOIN task_run_stats s WHERE s.task_id = t.id ORDER BY t.name");
    std::optional<TaskRunStats> stats;
    while (query.step()) {
      Columns c(query);
      auto name = c.text();
      if (stats && stats->name != name) visit(*std::exchange(stats, std::nullopt));
      if (!stats) stats = TaskRunStats{.name = std::move(name)};
      add_run_stats(*stats, c);
    }
    if (stats) visit(*stats);
    return {};
  });
}

Result<void> for_each_task_facts(Database& db, const TaskFilter& filter,
                                 const std::function<void(const core::TaskFacts&)>& visit) {
  static const std::string columns = task_facts_columns();
  return for_each_task_row(db, filter, columns, [&](const Query& row) { visit(task_facts_from(row)); });
}

Result<std::uintmax_t> database_bytes(Database& db) {
  if (db.file()) {
    std::uintmax_t total = 0;
    for (const auto& file : {*db.file(), std::filesystem::path(db.file()->string() + "-wal")}) {
      std::error_code error;
      auto size = std::filesystem::file_size(file, error);
      if (!error) total += size;
    }
    return total;
  }
  return guarded(db, [&]() -> Result<std::uintmax_t> {
    auto query = db.prepare(
        "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'taskd' AND c.relkind = 'r'");
    return static_cast<std::uintmax_t>(query.single_int64());
  });
}

}  // namespace taskd::store
