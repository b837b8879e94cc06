#pragma once
// Read-only summaries of the database for `taskd status` and `taskd metrics`.
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.hpp"
#include "store/database.hpp"

namespace taskd::store {

// A name with a count: queued runs of a group ("" for tasks without one),
// runs of a status.
struct NamedCount {
  std::string name;
  std::int64_t count = 0;
};

struct DisabledTask {
  std::string name;
  std::string reason;
};

// Started minus scheduled of the scheduled runs that started, cumulative per
// upper bound (seconds), as a Prometheus histogram counts them.
struct LatenessHistogram {
  std::vector<double> bounds;
  std::vector<std::int64_t> at_most;  // runs with lateness <= bounds[i]
  std::int64_t count = 0;
  double sum_seconds = 0;
};

core::Result<std::vector<NamedCount>> queue_depth_by_group(Database& db);
core::Result<std::vector<NamedCount>> runs_by_status(Database& db);
core::Result<std::vector<DisabledTask>> disabled_tasks(Database& db);
core::Result<LatenessHistogram> start_lateness(Database& db, const std::vector<double>& bounds);

}  // namespace taskd::store
