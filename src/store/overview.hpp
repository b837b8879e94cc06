#pragma once
// Read-only summaries of the database for `taskd status` and `taskd metrics`:
// counters kept by the schema's triggers and counts over small indexes, so
// that none reads the history.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/health.hpp"
#include "core/time.hpp"
#include "store/database.hpp"
#include "store/tasks.hpp"

namespace taskd::store {

// A name with a count: queued runs of a group ("" for tasks without one),
// runs of a status.
struct NamedCount {
  std::string name;
  std::int64_t count = 0;
};

// Started minus scheduled of the scheduled runs that started and ended,
// cumulative per upper bound (seconds), as a Prometheus histogram counts
// them; the last bound is +Inf (its count is the histogram's count).
struct LatenessHistogram {
  std::vector<double> bounds;
  std::vector<std::int64_t> at_most;  // runs with lateness <= bounds[i]
  std::int64_t count = 0;
  double sum_seconds = 0;
};

// What the history holds now: its ended runs and their captured output
// (queued and running runs are not history yet).
struct HistorySize {
  std::int64_t runs = 0;
  std::int64_t output_bytes = 0;
};

core::Result<std::vector<NamedCount>> queue_depth_by_group(Database& db);
// Runs that ended since the file was made, by status (pruning keeps them).
core::Result<std::vector<NamedCount>> ended_runs_by_status(Database& db);
// Queued runs of the tasks pinned to a host (--on-host), by host.
core::Result<std::vector<NamedCount>> queue_depth_by_host(Database& db);
// Runs queued and running now.
core::Result<std::vector<NamedCount>> runs_in_flight(Database& db);
core::Result<LatenessHistogram> start_lateness(Database& db);
core::Result<HistorySize> history_size(Database& db);

// A task's name and a time: when it last succeeded.
struct NamedTime {
  std::string name;
  core::Time time;
};

// When each task last succeeded, by name; a task that never did is left out.
core::Result<std::vector<NamedTime>> last_successes(Database& db);

// A task's counters, kept by the schema's triggers as its runs end: its runs
// that ended, by status (pruning keeps them), the start lateness of its
// scheduled runs that started and ended, as a histogram of fixed bounds,
// and its last run that started and ended.
inline constexpr std::array<core::RunStatus, 6> ended_statuses = {
    core::RunStatus::succeeded, core::RunStatus::failed,  core::RunStatus::timed_out,
    core::RunStatus::dropped,   core::RunStatus::skipped, core::RunStatus::lost};
// The histogram's bounds in seconds, as text (Prometheus' `le` labels).
inline constexpr std::array<std::string_view, 7> task_lateness_bounds = {"0.1", "0.5", "1", "5", "30", "60", "300"};
struct TaskRunStats {
  std::string name;
  std::array<std::int64_t, ended_statuses.size()> ended{};         // by ended_statuses
  std::array<std::int64_t, task_lateness_bounds.size()> late_at_most{};  // runs at most that late
  std::int64_t late_count = 0;
  std::int64_t late_sum_ms = 0;
  // The end and length of its last run that started and ended, if any.
  std::optional<core::Time> last_finished_at;
  std::optional<core::Millis> last_duration;
};
// Calls `visit` with the counters of each task that has any, by name, as
// the rows are read.
core::Result<void> for_each_task_run_stats(Database& db, const std::function<void(const TaskRunStats&)>& visit);

// Calls `visit` with what `taskd check` judges of each task the filter
// selects, by name, as the rows are read. Its latest planned run is found
// with the index runs_task, newest first, and its active retry with
// runs_active: probes per task, not a read of the history.
core::Result<void> for_each_task_facts(Database& db, const TaskFilter& filter,
                                       const std::function<void(const core::TaskFacts&)>& visit);

// The space the database takes: the SQLite file and its WAL, or the
// tables and indexes of the schema "taskd" on a server.
core::Result<std::uintmax_t> database_bytes(Database& db);

}  // namespace taskd::store
