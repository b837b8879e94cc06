#include "store/overview.hpp"

#include <SQLiteCpp/Statement.h>
#include <limits>

#include "store/columns.hpp"
#include "store/sqlite.hpp"

namespace taskd::store {

using core::Result;

namespace {

// The rows of a query whose columns are a name and a count.
Result<std::vector<NamedCount>> named_counts(Database& db, const char* sql) {
  return guarded(db, [&]() -> Result<std::vector<NamedCount>> {
    SQLite::Statement query(db.sql(), sql);
    std::vector<NamedCount> counts;
    while (query.executeStep()) {
      Columns c(query);
      counts.push_back({c.text(), c.int64()});
    }
    return counts;
  });
}

}  // namespace

Result<std::vector<NamedCount>> queue_depth_by_group(Database& db) {
  return named_counts(db, "SELECT t.group_name, count(*) FROM runs r JOIN tasks t ON t.id = r.task_id "
                          "WHERE r.status = 'queued' GROUP BY t.group_name ORDER BY t.group_name");
}

Result<std::vector<NamedCount>> ended_runs_by_status(Database& db) {
  return named_counts(db, "SELECT status, runs FROM run_totals ORDER BY status");
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
    SQLite::Statement buckets(db.sql(), "SELECT le_ms, runs FROM lateness_buckets ORDER BY le_ms");
    while (buckets.executeStep()) {
      Columns c(buckets);
      auto le_ms = c.int64();
      histogram.count += c.int64();
      if (le_ms == std::numeric_limits<std::int64_t>::max()) continue;
      histogram.bounds.push_back(static_cast<double>(le_ms) / 1000.0);
      histogram.at_most.push_back(histogram.count);
    }
    SQLite::Statement sum(db.sql(), "SELECT lateness_sum_ms FROM history_totals");
    if (sum.executeStep()) histogram.sum_seconds = static_cast<double>(sum.getColumn(0).getInt64()) / 1000.0;
    return histogram;
  });
}

Result<HistorySize> history_size(Database& db) {
  return guarded(db, [&]() -> Result<HistorySize> {
    SQLite::Statement query(db.sql(), "SELECT runs, output_bytes FROM history_totals");
    if (!query.executeStep()) return HistorySize{};
    Columns c(query);
    return HistorySize{c.int64(), c.int64()};
  });
}

}  // namespace taskd::store
