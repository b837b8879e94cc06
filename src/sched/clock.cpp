#include "sched/clock.hpp"

#include <ctime>

namespace taskd::sched {
namespace {

core::Time system_now() { return std::chrono::floor<core::Millis>(std::chrono::system_clock::now()); }

// Milliseconds since this machine booted, its sleeps included (where a
// sandbox refuses that clock, its monotonic clock, which stops in a sleep).
std::int64_t boot_ms() {
  timespec ts{};
  if (::clock_gettime(CLOCK_BOOTTIME, &ts) != 0) ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

}  // namespace

core::Time SystemClock::now() const {
  auto server_minus_boot = server_minus_boot_ms_.load();
  if (server_minus_boot == uncorrected) return system_now();
  return core::Time{core::Millis{boot_ms() + server_minus_boot}};
}

void SystemClock::keep_server_time(core::Time server, core::Millis age) const {
  if (source_ != ClockSource::server) return;
  server_minus_boot_ms_.store((server + age).time_since_epoch().count() - boot_ms());
}

core::Result<std::optional<core::Millis>> follow_server_clock(store::Database& db, const Clock& clock) {
  auto wall_before = system_now();
  auto boot_before = boot_ms();
  auto server = TRY(store::server_time(db));
  if (!server) return std::nullopt;
  auto boot_after = boot_ms();
  auto wall_after = system_now();
  // Time is kept from the server's reading by the boot-time clock alone: a
  // step of the wall clock during the round trip skews the offset reported
  // until the next measure, never the time kept.
  auto boot_middle = boot_before + (boot_after - boot_before) / 2;
  clock.keep_server_time(*server, core::Millis{boot_ms() - boot_middle});
  return wall_before + (wall_after - wall_before) / 2 - *server;
}

}  // namespace taskd::sched
