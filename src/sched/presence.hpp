#pragma once
// A loop's row in the workers table, so that `status` shows it even while it
// is idle: added when the loop starts, its heartbeat refreshed at most every
// heartbeat_interval (not on every pass: a busy loop passes hundreds of
// times a second), deleted when the loop ends.
#include "core/time.hpp"
#include "store/database.hpp"
#include "store/workers.hpp"

namespace taskd::sched {

class Presence {
 public:
  // Registers `worker` (its role, identity and concurrency) at `now`.
  static core::Result<Presence> enter(store::Database& db, store::WorkerRow worker, core::Time now);

  // Who is registered: this process, under its host id.
  const store::WorkerIdentity& identity() const { return worker_.identity; }
  // When the next heartbeat is due.
  core::Time next_heartbeat_at() const;
  // Refreshes the heartbeat if it is due at `now`; registers again if the
  // row was removed meanwhile (another host took this worker for gone).
  core::Result<void> beat_if_due(core::Time now);
  // Deletes the row.
  core::Result<void> leave();

 private:
  Presence(store::Database& db, store::WorkerRow worker) : db_(&db), worker_(std::move(worker)) {}
  store::Database* db_;
  store::WorkerRow worker_;
};

}  // namespace taskd::sched
