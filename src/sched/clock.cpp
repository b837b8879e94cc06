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

void SystemClock::correct_by(core::Millis offset) const {
  if (source_ != ClockSource::server) return;
  auto server_now = system_now() - offset;
  server_minus_boot_ms_.store(server_now.time_since_epoch().count() - boot_ms());
}

core::Result<std::optional<core::Millis>> follow_server_clock(store::Database& db, const Clock& clock) {
  auto before = system_now();
  auto server = TRY(store::server_time(db));
  if (!server) return std::nullopt;
  auto after = system_now();
  auto offset = before + (after - before) / 2 - *server;
  clock.correct_by(offset);
  return offset;
}

}  // namespace taskd::sched
