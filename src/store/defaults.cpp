#include "store/defaults.hpp"

#include <fmt/format.h>

#include "store/columns.hpp"
#include "store/task_row.hpp"

namespace taskd::store {
namespace {

// A task's from_defaults names the field: a whole item of its list.
constexpr const char* taking_field = "(',' || from_defaults || ',') LIKE ?";

std::string item_pattern(std::string_view field) { return fmt::format("%,{},%", field); }

}  // namespace

core::Result<core::Defaults> read_defaults(Database& db) {
  return guarded(db, [&]() -> core::Result<core::Defaults> {
    auto query = db.cached("SELECT field, value FROM defaults ORDER BY field");
    core::Defaults defaults;
    while (query.step()) {
      Columns c(query);
      auto field = c.text();
      defaults.emplace(std::move(field), c.text());
    }
    return defaults;
  });
}

core::Result<std::int64_t> count_tasks_taking(Database& db, std::string_view field) {
  return guarded(db, [&]() -> core::Result<std::int64_t> {
    auto count = db.cached(fmt::format("SELECT count(*) FROM tasks WHERE {}", taking_field));
    Binder(count).text(item_pattern(field));
    return count.single_int64();
  });
}

core::Result<std::vector<StoredTask>> tasks_taking(Database& db, const std::vector<std::string>& fields) {
  return guarded(db, [&]() -> core::Result<std::vector<StoredTask>> {
    std::string conditions;
    for (std::size_t i = 0; i < fields.size(); ++i) conditions += fmt::format("{}{}", i ? " OR " : "", taking_field);
    auto query = db.prepare(fmt::format("SELECT {} FROM tasks WHERE {} ORDER BY id", task_columns(),
                                        conditions.empty() ? "false" : conditions));
    Binder b(query);
    for (const auto& field : fields) b.text(item_pattern(field));
    std::vector<StoredTask> tasks;
    while (query.step()) tasks.push_back(read_task(query.query()));
    return tasks;
  });
}

core::Result<void> write_default(Database& db, std::string_view field, const std::optional<std::string>& text) {
  return guarded(db, [&]() -> core::Result<void> {
    if (!text) {
      auto clear = db.cached("DELETE FROM defaults WHERE field = ?");
      Binder(clear).text(field);
      clear.exec();
      return {};
    }
    auto upsert = db.cached(
        "INSERT INTO defaults (field, value) VALUES (?, ?) ON CONFLICT (field) DO UPDATE SET value = excluded.value");
    Binder b(upsert);
    b.text(field);
    b.text(*text);
    upsert.exec();
    return {};
  });
}

}  // namespace taskd::store
