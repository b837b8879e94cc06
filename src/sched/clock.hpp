#pragma once
// The one place taskd reads the wall clock; tests and previews pass another.
// On a server store the clock is the server's: every host reads the
// server's time it last measured, plus the time elapsed since by its own
// boot-time clock (which neither steps nor stops while the machine sleeps),
// so that due times, leases and history agree whatever the hosts' wall
// clocks say, and a step of one between two measurements changes nothing.
#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>

#include "core/time.hpp"
#include "store/database.hpp"

namespace taskd::sched {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual core::Time now() const = 0;
  // From now on, keeps the database server's time: `server` as it was `age`
  // ago. A clock of a test, which is its own truth, ignores it.
  virtual void keep_server_time(core::Time /*server*/, core::Millis /*age*/) const {}
};

// Which clock a taskd on a server keeps: the server's (the default), or
// this host's own (TASKD_CLOCK=host: its clock is the one kept right, or a
// test runs it under faketime).
enum class ClockSource { server, host };

class SystemClock final : public Clock {
 public:
  explicit SystemClock(ClockSource source = ClockSource::server) : source_(source) {}
  // The wall clock until the server's time is first kept (and always with
  // ClockSource::host); after it, the server's time.
  core::Time now() const override;
  void keep_server_time(core::Time server, core::Millis age) const override;

 private:
  static constexpr std::int64_t uncorrected = std::numeric_limits<std::int64_t>::min();
  ClockSource source_;
  // The server's time minus this machine's boot-time clock, in ms.
  mutable std::atomic<std::int64_t> server_minus_boot_ms_{uncorrected};
};

// A host whose clock is further than this from the server's is logged by
// its loop and warned of by status.
inline constexpr core::Millis clock_tolerance{1000};
constexpr bool clock_is_off(core::Millis offset) { return std::chrono::abs(offset) > clock_tolerance; }

// Reads the database server's clock and has `clock` keep it (the server's
// reading taken as of the middle of the round trip); returns this machine's
// offset to it, or none for a SQLite file (one machine, one clock).
core::Result<std::optional<core::Millis>> follow_server_clock(store::Database& db, const Clock& clock);

}  // namespace taskd::sched
