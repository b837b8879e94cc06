#include "store/workers.hpp"

#include <fmt/format.h>

#include "store/columns.hpp"
#include "store/connection.hpp"

namespace taskd::store {

using core::Result;

namespace {

// The live worker of another machine that goes by `worker`'s host name, if any.
Result<void> check_host_name_free(Database& db, const WorkerRow& worker, core::Time alive_since) {
  // Another machine: another machine id where both are known (a reboot
  // keeps it), else another boot.
  auto other = db.prepare("SELECT boot_id, pid, heartbeat_at FROM workers WHERE host = ?1 AND heartbeat_at >= ?2 "
                          "AND CASE WHEN machine_id <> '' AND ?3 <> '' THEN machine_id <> ?3 ELSE boot_id <> ?4 END "
                          "ORDER BY heartbeat_at DESC LIMIT 1");
  Binder b(other);
  b.text(worker.identity.host);
  b.time(alive_since);
  b.text(worker.machine_id);
  b.text(worker.identity.boot_id);
  if (!other.step()) return {};
  Columns c(other);
  auto boot_id = c.text();
  auto pid = c.int64();
  auto heartbeat = c.time();
  return core::fail(core::ErrorKind::bad_input,
                    fmt::format("host id \"{}\" is in use by a taskd on another machine (boot id {}, pid {}, "
                                "heartbeat {}): give each host its own --host-id",
                                worker.identity.host, boot_id, pid, core::format_rfc3339(heartbeat)));
}

std::optional<std::int64_t> known_uid(std::int64_t uid) { return uid < 0 ? std::nullopt : std::optional(uid); }

}  // namespace

Result<void> check_host_id_free(Database& db, const WorkerRow& worker, core::Time alive_since) {
  return guarded(db, [&]() { return check_host_name_free(db, worker, alive_since); });
}

Result<std::int64_t> register_worker(Database& db, const WorkerRow& worker, std::optional<core::Time> alive_since) {
  return write(db, [&]() -> Result<std::int64_t> {
    if (alive_since) {
      TRY(check_host_name_free(db, worker, *alive_since));
    }
    auto insert = db.prepare("INSERT INTO workers (role, host, pid, boot_id, process_start, concurrency, "
                             "started_at, heartbeat_at, machine_id, clock_offset_ms, containment, uid) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id");
    Binder b(insert);
    b.text(worker.role);
    b.text(worker.identity.host);
    b.int64(worker.identity.pid);
    b.text(worker.identity.boot_id);
    b.int64(worker.identity.started_at);
    b.int64(worker.concurrency);
    b.time(worker.started_at);
    b.time(worker.heartbeat_at);
    b.text(worker.machine_id);
    b.int64(worker.clock_offset.count());
    b.text(worker.containment);
    b.optional_int(known_uid(worker.identity.uid));
    return insert.single_int64();
  });
}

Result<bool> heartbeat_worker(Database& db, std::int64_t id, core::Time now, core::Millis clock_offset) {
  return guarded(db, [&]() -> Result<bool> {
    auto update = db.cached("UPDATE workers SET heartbeat_at = ?, clock_offset_ms = ? WHERE id = ?");
    Binder b(update);
    b.time(now);
    b.int64(clock_offset.count());
    b.int64(id);
    return update.exec() == 1;
  });
}

Result<void> unregister_worker(Database& db, std::int64_t id) {
  return write(db, [&]() -> Result<void> {
    auto remove = db.prepare("DELETE FROM workers WHERE id = ?");
    remove.bind(1, id);
    remove.exec();
    return {};
  });
}

Result<std::vector<WorkerRow>> list_workers(Database& db) {
  return guarded(db, [&]() -> Result<std::vector<WorkerRow>> {
    auto query = db.prepare("SELECT id, role, host, pid, boot_id, process_start, concurrency, started_at, "
                                      "heartbeat_at, clock_offset_ms, containment FROM workers ORDER BY started_at, id");
    std::vector<WorkerRow> workers;
    while (query.step()) {
      Columns c(query);
      WorkerRow row;
      row.id = c.int64();
      row.role = c.text();
      row.identity.host = c.text();
      row.identity.pid = static_cast<pid_t>(c.int64());
      row.identity.boot_id = c.text();
      row.identity.started_at = c.int64();
      row.concurrency = c.int32();
      row.started_at = c.time();
      row.heartbeat_at = c.time();
      row.clock_offset = core::Millis{c.int64()};
      row.containment = c.text();
      workers.push_back(std::move(row));
    }
    return workers;
  });
}

Result<std::optional<core::Time>> newest_heartbeat(Database& db, std::string_view role) {
  return guarded(db, [&]() -> Result<std::optional<core::Time>> {
    auto query = db.prepare("SELECT max(heartbeat_at) FROM workers WHERE role = ?");
    Binder(query).text(role);
    if (!query.step()) return std::nullopt;
    return Columns(query).optional_time();
  });
}

// The cadence is a moving average of the gaps between ticks: a tick called
// by hand between two of cron's moves it by a quarter of the gap.
Result<void> record_tick(Database& db, const WorkerIdentity& self, core::Time at) {
  return guarded(db, [&]() -> Result<void> {
    db.connection().write_unless_locked(
        "INSERT INTO ticks (host, last_at, uid) VALUES (?1, ?2, ?3) ON CONFLICT (host) DO UPDATE SET "
        "last_at = excluded.last_at, uid = excluded.uid, every_ms = CASE WHEN ticks.every_ms IS NULL THEN "
        "excluded.last_at - ticks.last_at ELSE (3 * ticks.every_ms + excluded.last_at - ticks.last_at) / 4 END "
        "WHERE excluded.last_at > ticks.last_at",
        [&](Query& upsert) {
          upsert.bind_text(1, self.host);
          upsert.bind_int64(2, core::to_unix_ms(at));
          if (auto uid = known_uid(self.uid)) {
            upsert.bind_int64(3, *uid);
          } else {
            upsert.bind_null(3);
          }
        });
    return {};
  });
}

Result<std::vector<SchedulerUser>> scheduler_users(Database& db, core::Time ticked_since) {
  return guarded(db, [&]() -> Result<std::vector<SchedulerUser>> {
    auto query = db.prepare("SELECT host, uid FROM workers UNION ALL SELECT host, uid FROM ticks WHERE last_at >= ? "
                            "ORDER BY 1");
    Binder(query).time(ticked_since);
    std::vector<SchedulerUser> users;
    while (query.step()) {
      Columns c(query);
      auto host = c.text();
      users.push_back({std::move(host), c.optional_int64()});
    }
    return users;
  });
}

Result<std::vector<TickRow>> list_ticks(Database& db) {
  return guarded(db, [&]() -> Result<std::vector<TickRow>> {
    auto query = db.prepare("SELECT host, last_at, every_ms FROM ticks ORDER BY last_at DESC, host");
    std::vector<TickRow> ticks;
    while (query.step()) {
      Columns c(query);
      TickRow row;
      row.host = c.text();
      row.last_at = c.time();
      if (auto every = c.optional_int64()) row.every = core::Millis{*every};
      ticks.push_back(std::move(row));
    }
    return ticks;
  });
}

}  // namespace taskd::store
