#pragma once
// The one place taskd reads the wall clock; tests and previews pass another.
// On a server store the clock is the server's: every host reads its own
// clock corrected by the offset it last measured to the server's, so that
// due times, leases and history agree whatever the hosts' clocks say.
#include <atomic>
#include <optional>

#include "core/time.hpp"
#include "store/database.hpp"

namespace taskd::sched {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual core::Time now() const = 0;
  // From now on, reads `offset` less: this machine's clock minus the
  // database server's. A clock of a test, which is its own truth, ignores it.
  virtual void correct_by(core::Millis /*offset*/) const {}
};

// Which clock a taskd on a server keeps: the server's (the default), or
// this host's own (TASKD_CLOCK=host: its clock is the one kept right, or a
// test runs it under faketime).
enum class ClockSource { server, host };

class SystemClock final : public Clock {
 public:
  explicit SystemClock(ClockSource source = ClockSource::server) : source_(source) {}
  core::Time now() const override;
  void correct_by(core::Millis offset) const override {
    if (source_ == ClockSource::server) offset_ms_.store(offset.count());
  }

 private:
  ClockSource source_;
  mutable std::atomic<std::int64_t> offset_ms_{0};
};

// A host whose clock is further than this from the server's is logged by
// its loop and warned of by status.
inline constexpr core::Millis clock_tolerance{1000};
constexpr bool clock_is_off(core::Millis offset) { return std::chrono::abs(offset) > clock_tolerance; }

// Reads the database server's clock and corrects `clock` by this machine's
// offset to it (the server's reading against the middle of the round trip);
// returns the offset, or none for a SQLite file (one machine, one clock).
core::Result<std::optional<core::Millis>> follow_server_clock(store::Database& db, const Clock& clock);

}  // namespace taskd::sched
