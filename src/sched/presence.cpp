#include "sched/presence.hpp"

#include "exec/process_identity.hpp"
#include "sched/recovery.hpp"

namespace taskd::sched {

core::Result<void> check_host_id_free(store::Database& db, const store::WorkerIdentity& self, core::Time now) {
  if (db.file()) return {};
  return store::check_host_id_free(db, {.identity = self, .machine_id = exec::machine_id()},
                                   now - heartbeat_alive_window);
}

core::Result<void> Presence::follow_clock() {
  auto offset = TRY(follow_server_clock(*db_, *clock_));
  worker_.clock_offset = offset.value_or(core::Millis{0});
  return {};
}

core::Result<Presence> Presence::enter(store::Database& db, store::WorkerRow worker, const Clock& clock) {
  Presence presence(db, std::move(worker), clock);
  TRY(presence.follow_clock());
  auto& row = presence.worker_;
  core::Time now = clock.now();
  row.started_at = now;
  row.heartbeat_at = now;
  row.id = TRY(store::register_worker(db, row, now - heartbeat_alive_window));
  return presence;
}

core::Time Presence::next_heartbeat_at() const { return worker_.heartbeat_at + heartbeat_interval; }

core::Result<void> Presence::beat_if_due(core::Time now) {
  if (now < next_heartbeat_at()) return {};
  TRY(follow_clock());
  auto found = TRY(store::heartbeat_worker(*db_, worker_.id, now, worker_.clock_offset));
  worker_.heartbeat_at = now;
  if (found) return {};
  worker_.id = TRY(store::register_worker(*db_, worker_, now - heartbeat_alive_window));
  return {};
}

core::Result<void> Presence::leave() { return store::unregister_worker(*db_, worker_.id); }

}  // namespace taskd::sched
