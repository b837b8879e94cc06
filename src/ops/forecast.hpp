#pragma once
// forecast: how many runs start in each bucket of a window to come, as the
// tasks' schedules plan them.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "core/time.hpp"
#include "ops/json.hpp"
#include "store/database.hpp"

namespace taskd::ops {

struct Forecast {
  core::Time from;
  core::Seconds bucket;
  std::vector<std::int64_t> starts;  // per bucket

  std::int64_t peak() const { return starts.empty() ? 0 : *std::ranges::max_element(starts); }
  std::size_t peak_index() const { return static_cast<std::size_t>(std::ranges::max_element(starts) - starts.begin()); }
  double mean() const {
    double total = 0;
    for (auto n : starts) total += static_cast<double>(n);
    return starts.empty() ? 0 : total / static_cast<double>(starts.size());
  }
  core::Time bucket_start(std::size_t i) const { return from + static_cast<std::int64_t>(i) * bucket; }
};

// The starts of the `window` after `now`, in buckets from `first_bucket` (at
// or before now: a boundary of the clock). Only the tasks whose next run
// comes before the window's end are read (the tick's index): a task planned
// later cannot start in the window.
core::Result<Forecast> forecast_of(store::Database& db, core::Time now, core::Time first_bucket, core::Seconds window,
                                   core::Seconds bucket);
Json forecast_json(const Forecast& forecast);

}  // namespace taskd::ops
