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
  auto offset = follow_server_clock(*db_, *clock_);
  if (!offset) return std::unexpected(offset.error());
  worker_.clock_offset = offset->value_or(core::Millis{0});
  return {};
}

core::Result<Presence> Presence::enter(store::Database& db, store::WorkerRow worker, const Clock& clock) {
  Presence presence(db, std::move(worker), clock);
  if (auto followed = presence.follow_clock(); !followed) return std::unexpected(followed.error());
  auto& row = presence.worker_;
  core::Time now = clock.now();
  row.started_at = now;
  row.heartbeat_at = now;
  auto id = store::register_worker(db, row, now - heartbeat_alive_window);
  if (!id) return std::unexpected(id.error());
  row.id = *id;
  return presence;
}

core::Time Presence::next_heartbeat_at() const { return worker_.heartbeat_at + heartbeat_interval; }

core::Result<void> Presence::beat_if_due(core::Time now) {
  if (now < next_heartbeat_at()) return {};
  if (auto followed = follow_clock(); !followed) return followed;
  auto found = store::heartbeat_worker(*db_, worker_.id, now, worker_.clock_offset);
  if (!found) return std::unexpected(found.error());
  worker_.heartbeat_at = now;
  if (*found) return {};
  auto id = store::register_worker(*db_, worker_, now - heartbeat_alive_window);
  if (!id) return std::unexpected(id.error());
  worker_.id = *id;
  return {};
}

core::Result<void> Presence::leave() { return store::unregister_worker(*db_, worker_.id); }

}  // namespace taskd::sched
