#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <memory>

#include "cli/context.hpp"
#include "cli/json.hpp"
#include "ops/forecast.hpp"

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

struct ForecastOptions {
  std::string window = "1h";
  std::string bucket;  // empty: the one bucket_for picks
};

// A chart wider than this is scaled down.
constexpr std::size_t bar_width = 50;
// Buckets a --bucket given may make; one picked makes at most default_buckets.
constexpr std::int64_t max_buckets = 1000;
constexpr std::int64_t default_buckets = 100;

// The shortest round bucket that cuts the window into at most
// default_buckets: 1m for an hour, 15m for a day, 12h for 30 days.
core::Seconds bucket_for(core::Seconds window) {
  using namespace std::chrono_literals;
  static constexpr std::array<core::Seconds, 19> round{1s,  5s,  10s, 15s, 30s, 1min, 5min, 10min, 15min, 30min,
                                                       1h,  2h,  3h,  6h,  12h, 24h,  48h, 168h,  720h};
  for (auto bucket : round) {
    if (window <= bucket * default_buckets) return bucket;
  }
  auto days = (window.count() + default_buckets * 86400 - 1) / (default_buckets * 86400);
  return core::Seconds{days * 86400};
}

// The window and the bucket the options give; a bad one is bad input.
Result<std::pair<core::Seconds, core::Seconds>> window_and_bucket(const ForecastOptions& options) {
  auto window = core::parse_duration(options.window);
  if (!window) return fail(ErrorKind::bad_input, "--window: " + window.error().message);
  if (window->count() <= 0) return fail(ErrorKind::bad_input, "--window must be longer than 0s");
  if (options.bucket.empty()) return std::pair{*window, bucket_for(*window)};
  auto bucket = core::parse_duration(options.bucket);
  if (!bucket) return fail(ErrorKind::bad_input, "--bucket: " + bucket.error().message);
  if (bucket->count() <= 0 || *window < *bucket || *window / *bucket > max_buckets)
    return fail(ErrorKind::bad_input, fmt::format("--bucket {} must be longer than 0s and fit the --window {} "
                                                  "at most {} times (leave --bucket out to have one picked)",
                                                  options.bucket, options.window, max_buckets));
  return std::pair{*window, *bucket};
}

void print_chart(const ops::Forecast& forecast, const core::TimeStyle& style) {
  auto peak = forecast.peak();
  for (std::size_t i = 0; i < forecast.starts.size(); ++i) {
    auto n = forecast.starts[i];
    auto width = peak > 0 ? static_cast<std::size_t>(n * static_cast<std::int64_t>(bar_width) / peak) : 0;
    fmt::print("{}  {:<{}} {}\n", core::show_time(forecast.bucket_start(i), style), std::string(width, '#'), bar_width, n);
  }
  double mean = forecast.mean();
  fmt::print("peak {} starts per {} at {}; mean {:.2f}; peak/mean {:.2f}\n", peak,
             core::format_duration(forecast.bucket), core::show_time(forecast.bucket_start(forecast.peak_index()), style),
             mean, mean > 0 ? static_cast<double>(peak) / mean : 0.0);
}

Result<void> forecast(const Context& context, const ForecastOptions& options) {
  auto sizes = TRY(window_and_bucket(options));
  auto [window, bucket] = sizes;
  auto db = TRY(context.open_db_to_read());
  auto now = context.clock.now();
  auto style = context.time_style(now);
  auto result = TRY(ops::forecast_of(db, now, core::clock_period_start(now, bucket, style.zone), window, bucket));
  if (context.json) {
    print_json(ops::forecast_json(result));
  } else {
    print_chart(result, style);
  }
  return {};
}

}  // namespace

void add_forecast_command(CLI::App& app, Context& context, Action& action) {
  auto options = std::make_shared<ForecastOptions>();
  auto* command = app.add_subcommand("forecast", "Chart how many runs start in each bucket of the coming window");
  command->add_option("--window", options->window, "How far ahead (default 1h)");
  command->add_option("--bucket", options->bucket, "Width of a bar (default: at most 100 bars, 1m for 1h)");
  command->callback([&context, &action, options] { action = [&context, options] { return forecast(context, *options); }; });
}

}  // namespace taskd::cli
