#include "ops/forecast.hpp"

#include "core/policy.hpp"
#include "store/tasks.hpp"

namespace taskd::ops {

using core::Result;

Result<Forecast> forecast_of(store::Database& db, core::Time now, core::Time first_bucket, core::Seconds window,
                              core::Seconds bucket) {
  core::Time until = now + window;
  auto buckets = static_cast<std::size_t>((until - first_bucket + bucket - core::Millis{1}) / bucket);
  Forecast forecast{first_bucket, bucket, std::vector<std::int64_t>(buckets, 0)};
  // A malformed row never runs (the tick disables it): it adds no start.
  TRY(store::for_each_task_starting_before(db, until, [&](const store::StoredTask& stored) -> Result<void> {
    if (!stored) return {};
    const auto& task = *stored;
    const auto& schedule = task.schedule.value();
    core::UpcomingStarts starts(task, schedule, now);
    for (auto upcoming = starts.next(); upcoming && upcoming->start < until; upcoming = starts.next())
      forecast.starts[static_cast<std::size_t>((upcoming->start - first_bucket) / bucket)] += 1;
    return {};
  }));
  return forecast;
}

Json forecast_json(const Forecast& forecast) {
  Json buckets = Json::array();
  for (std::size_t i = 0; i < forecast.starts.size(); ++i)
    buckets.push_back({{"start", core::format_rfc3339(forecast.bucket_start(i))}, {"starts", forecast.starts[i]}});
  double mean = forecast.mean();
  return {{"from", core::format_rfc3339(forecast.from)},
          {"bucket", forecast.bucket.count()},
          {"buckets", buckets},
          {"peak", forecast.peak()},
          {"peak_at", core::format_rfc3339(forecast.bucket_start(forecast.peak_index()))},
          {"mean", mean},
          {"peak_to_mean", mean > 0 ? static_cast<double>(forecast.peak()) / mean : 0.0}};
}

}  // namespace taskd::ops
