#pragma once
// metrics: the counts the schema's triggers keep and counts over small
// indexes; no history is read, so a cron job may ask every minute.
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "store/overview.hpp"
#include "store/workers.hpp"

namespace taskd::ops {

struct Metrics {
  std::vector<store::NamedCount> ended;      // runs that ended, by status
  std::vector<store::NamedCount> in_flight;  // runs queued and running, by status
  store::LatenessHistogram lateness;
  std::vector<store::NamedCount> queue;  // queued runs by group
  std::vector<store::NamedCount> tasks;  // tasks by condition (as list --state selects them)
  store::HistorySize history;
  // What taskd check judges, for alerts of Prometheus' own.
  std::vector<store::NamedTime> successes;
  std::optional<core::Time> heartbeat;  // of a taskd run, or a run-once tick: the newer
};

core::Result<Metrics> read_metrics(store::Database& db);

// The Prometheus text format of `taskd metrics` and of `taskd web`'s
// /metrics: the series of read_metrics, then those of each task (whether its
// last run succeeded, its next run), as the tasks are read, a piece at a
// time through `write`, which may throw to stop it (nothing is written after).
core::Result<void> write_metrics_text(store::Database& db, const std::function<void(std::string_view)>& write);

}  // namespace taskd::ops
