#include "sched/presence.hpp"

#include "exec/process_identity.hpp"
#include "sched/recovery.hpp"

namespace taskd::sched {
namespace {

// How often a presence write that another session's lock kept waiting past
// the lock wait (busy) is tried: a taskd that starts or stops while its
// peers hold the write lock waits for them (about this many lock waits)
// rather than failing for it.
constexpr int busy_tries = 30;

template <class Write>
auto tried_while_busy(Write write) {
  auto written = write();
  for (int tries = 1; !written && written.error().kind == core::ErrorKind::busy && tries < busy_tries; ++tries)
    written = write();
  return written;
}

}  // namespace

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
  row.id = TRY(tried_while_busy([&] {
    row.started_at = row.heartbeat_at = clock.now();
    return store::register_worker(db, row, row.heartbeat_at - heartbeat_alive_window);
  }));
  return presence;
}

core::Result<Presence> Presence::adopt(store::Database& db, store::WorkerRow worker, const Clock& clock,
                                       std::int64_t id) {
  // The row only if it is this process's (a record names it): else one
  // registered anew.
  auto rows = TRY(tried_while_busy([&] { return store::list_workers(db); }));
  auto found = std::ranges::find(rows, id, &store::WorkerRow::id);
  auto same = [](const store::WorkerIdentity& a, const store::WorkerIdentity& b) {
    return a.host == b.host && a.boot_id == b.boot_id && a.pid == b.pid && a.started_at == b.started_at;
  };
  bool ours = found != rows.end() && same(found->identity, worker.identity);
  Presence presence(db, std::move(worker), clock);
  auto& row = presence.worker_;
  row.id = ours ? id : 0;
  row.started_at = clock.now();
  row.heartbeat_at = core::Time{};  // due at once
  TRY(tried_while_busy([&] { return presence.beat_if_due(clock.now()); }));
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

core::Result<void> Presence::leave() {
  return tried_while_busy([this] { return store::unregister_worker(*db_, worker_.id); });
}

}  // namespace taskd::sched
