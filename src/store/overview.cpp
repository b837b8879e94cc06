#include "store/overview.hpp"

#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>

#include "store/columns.hpp"

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

Result<std::vector<NamedCount>> runs_by_status(Database& db) {
  return named_counts(db, "SELECT status, count(*) FROM runs GROUP BY status ORDER BY status");
}

Result<std::vector<DisabledTask>> disabled_tasks(Database& db) {
  return guarded(db, [&]() -> Result<std::vector<DisabledTask>> {
    SQLite::Statement query(db.sql(),
                            "SELECT name, disabled_reason FROM tasks WHERE disabled_until_update = 1 ORDER BY name");
    std::vector<DisabledTask> tasks;
    while (query.executeStep()) {
      Columns c(query);
      tasks.push_back({c.text(), c.text()});
    }
    return tasks;
  });
}

Result<LatenessHistogram> start_lateness(Database& db, const std::vector<double>& bounds) {
  return guarded(db, [&]() -> Result<LatenessHistogram> {
    std::string buckets;
    for (std::size_t i = 0; i < bounds.size(); ++i) buckets += fmt::format(", coalesce(sum(late <= ?{}), 0)", i + 1);
    // One pass over the history, however many buckets.
    SQLite::Statement query(db.sql(), fmt::format("SELECT count(*), coalesce(sum(late), 0){} FROM (SELECT started_at - "
                                                  "scheduled_at AS late FROM runs WHERE started_at IS NOT NULL AND "
                                                  "trigger = 'schedule')",
                                                  buckets));
    for (std::size_t i = 0; i < bounds.size(); ++i)
      query.bind(static_cast<int>(i + 1), static_cast<std::int64_t>(bounds[i] * 1000));
    query.executeStep();
    Columns c(query);
    LatenessHistogram histogram;
    histogram.bounds = bounds;
    histogram.count = c.int64();
    histogram.sum_seconds = static_cast<double>(c.int64()) / 1000.0;
    for (std::size_t i = 0; i < bounds.size(); ++i) histogram.at_most.push_back(c.int64());
    return histogram;
  });
}

}  // namespace taskd::store
