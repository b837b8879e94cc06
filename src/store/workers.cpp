#include "store/workers.hpp"


#include "store/columns.hpp"

namespace taskd::store {

using core::Result;

Result<std::int64_t> register_worker(Database& db, const WorkerRow& worker) {
  return write(db, [&]() -> Result<std::int64_t> {
    auto insert = db.prepare("INSERT INTO workers (role, host, pid, boot_id, process_start, concurrency, "
                                       "started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id");
    Binder b(insert);
    b.text(worker.role);
    b.text(worker.identity.host);
    b.int64(worker.identity.pid);
    b.text(worker.identity.boot_id);
    b.int64(worker.identity.started_at);
    b.int64(worker.concurrency);
    b.time(worker.started_at);
    b.time(worker.heartbeat_at);
    return insert.single_int64();
  });
}

Result<bool> heartbeat_worker(Database& db, std::int64_t id, core::Time now) {
  return write(db, [&]() -> Result<bool> {
    auto update = db.prepare("UPDATE workers SET heartbeat_at = ? WHERE id = ?");
    Binder b(update);
    b.time(now);
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
                                      "heartbeat_at FROM workers ORDER BY started_at, id");
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
      workers.push_back(std::move(row));
    }
    return workers;
  });
}

}  // namespace taskd::store
