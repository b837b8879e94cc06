#pragma once
// A loop's row in the workers table, so that `status` shows it even while it
// is idle: added when the loop starts, its heartbeat refreshed at most every
// heartbeat_interval (not on every pass: a busy loop passes hundreds of
// times a second), deleted when the loop ends. On a server each heartbeat
// follows the server's clock first, and records this host's offset to it.
#include "core/time.hpp"
#include "sched/clock.hpp"
#include "store/database.hpp"
#include "store/workers.hpp"

namespace taskd::sched {

// On a server, refuses the host id of `self`, a taskd that claims or
// recovers runs without registering (run-once, tick), while a live taskd of
// another machine goes by it (see store::register_worker). A SQLite file is
// one machine's: nothing to check.
core::Result<void> check_host_id_free(store::Database& db, const store::WorkerIdentity& self, core::Time now);

class Presence {
 public:
  // Registers `worker` (its role, identity and concurrency), at the time
  // of `clock` once it follows the server's.
  static core::Result<Presence> enter(store::Database& db, store::WorkerRow worker, const Clock& clock);
  // Goes on with the row `id` of a previous image of this process (an
  // upgrade): its heartbeat refreshed now; the row registered again if it
  // is gone, or is not this process's (host, boot, pid and start time).
  static core::Result<Presence> adopt(store::Database& db, store::WorkerRow worker, const Clock& clock,
                                      std::int64_t id);
  std::int64_t id() const { return worker_.id; }

  // Who is registered: this process, under its host id.
  const store::WorkerIdentity& identity() const { return worker_.identity; }
  // This machine's clock minus the server's, as last measured (0 on a file).
  core::Millis clock_offset() const { return worker_.clock_offset; }
  // When the next heartbeat is due.
  core::Time next_heartbeat_at() const;
  // Refreshes the heartbeat if it is due at `now`; registers again if the
  // row was removed meanwhile (another host took this worker for gone).
  core::Result<void> beat_if_due(core::Time now);
  // Deletes the row.
  core::Result<void> leave();

 private:
  Presence(store::Database& db, store::WorkerRow worker, const Clock& clock)
      : db_(&db), clock_(&clock), worker_(std::move(worker)) {}
  // Follows the server's clock; the offset is kept for the next heartbeat.
  core::Result<void> follow_clock();
  store::Database* db_;
  const Clock* clock_;
  store::WorkerRow worker_;
};

}  // namespace taskd::sched
