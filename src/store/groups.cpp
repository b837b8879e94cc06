#include "store/groups.hpp"


#include "store/columns.hpp"

namespace taskd::store {

core::Result<void> set_group_concurrency(Database& db, std::string_view name, std::optional<int> concurrency,
                                         core::Time now) {
  return guarded(db, [&]() -> core::Result<void> {
    auto upsert = db.prepare("INSERT INTO groups (name, concurrency, updated_at) VALUES (?, ?, ?) "
                                       "ON CONFLICT (name) DO UPDATE SET concurrency = excluded.concurrency, "
                                       "updated_at = excluded.updated_at");
    Binder b(upsert);
    b.text(name);
    b.optional_int(concurrency);
    b.time(now);
    upsert.exec();
    return {};
  });
}

core::Result<std::vector<GroupSummary>> list_groups(Database& db) {
  return guarded(db, [&]() -> core::Result<std::vector<GroupSummary>> {
    auto query = db.prepare("WITH names AS (SELECT name FROM groups UNION SELECT group_name FROM tasks WHERE group_name <> '') "
        "SELECT n.name, g.concurrency, "
        "(SELECT count(*) FROM tasks t WHERE t.group_name = n.name), "
        "(SELECT count(*) FROM tasks t WHERE t.group_name = n.name AND t.paused = 1), "
        "(SELECT count(*) FROM runs r JOIN tasks t ON t.id = r.task_id "
        " WHERE t.group_name = n.name AND r.status = 'queued'), "
        "(SELECT count(*) FROM runs r JOIN tasks t ON t.id = r.task_id "
        " WHERE t.group_name = n.name AND r.status = 'running') "
        "FROM names n LEFT JOIN groups g ON g.name = n.name ORDER BY n.name");
    std::vector<GroupSummary> groups;
    while (query.step()) {
      Columns c(query);
      GroupSummary group;
      group.name = c.text();
      auto cap = c.optional_int64();
      if (cap) group.concurrency = static_cast<int>(*cap);
      group.tasks = c.int32();
      group.paused = c.int32();
      group.queued = c.int32();
      group.running = c.int32();
      groups.push_back(std::move(group));
    }
    return groups;
  });
}

core::Result<std::map<std::string, int>> group_caps(Database& db, std::string_view owner) {
  return guarded(db, [&]() -> core::Result<std::map<std::string, int>> {
    auto query = db.prepare(owner.empty()
                                          ? "SELECT name, concurrency FROM groups WHERE concurrency IS NOT NULL"
                                          : "SELECT name, concurrency FROM groups g WHERE concurrency IS NOT NULL AND "
                                            "EXISTS (SELECT 1 FROM tasks t WHERE t.owner <> '' AND t.owner = ? AND "
                                            "t.group_name = g.name)");
    if (!owner.empty()) query.bind(1, std::string(owner));
    std::map<std::string, int> caps;
    while (query.step()) {
      Columns c(query);
      auto name = c.text();
      caps.emplace(std::move(name), c.int32());
    }
    return caps;
  });
}

}  // namespace taskd::store
