#include "sched/presence.hpp"

#include "sched/recovery.hpp"

namespace taskd::sched {

core::Result<Presence> Presence::enter(store::Database& db, store::WorkerRow worker, core::Time now) {
  worker.started_at = now;
  worker.heartbeat_at = now;
  auto id = store::register_worker(db, worker, now - heartbeat_alive_window);
  if (!id) return std::unexpected(id.error());
  worker.id = *id;
  return Presence(db, std::move(worker));
}

core::Time Presence::next_heartbeat_at() const { return worker_.heartbeat_at + heartbeat_interval; }

core::Result<void> Presence::beat_if_due(core::Time now) {
  if (now < next_heartbeat_at()) return {};
  auto found = store::heartbeat_worker(*db_, worker_.id, now);
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
