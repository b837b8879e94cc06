#include "store/copy.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <unordered_map>
#include <variant>

#include "core/text.hpp"
#include "store/columns.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"

namespace taskd::store {
namespace {

using core::ErrorKind;
using core::Result;
using IdMap = std::unordered_map<std::int64_t, std::int64_t>;

// A refusal names at most this many tasks or groups, then how many more.
constexpr std::size_t names_shown = 20;

std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < std::min(names.size(), names_shown); ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > names_shown) text += fmt::format(" and {} more", names.size() - names_shown);
  return text;
}

// How many rows one INSERT writes: a round trip and a run of the server's
// triggers for 500 rows, not for each (500 runs bind 14 000
// parameters, far below either engine's limit).
constexpr std::size_t rows_per_insert = 500;

struct Blob {
  std::string bytes;
};
// A value read from the source, kept as the type it has: the copy needs no
// list of columns, and a column a later migration adds is copied too.
using Value = std::variant<std::monostate, std::int64_t, double, std::string, Blob>;

Value value_of(const Query& row, int column) {
  switch (row.type(column)) {
    case ValueType::null: return {};
    case ValueType::integer: return row.int64(column);
    case ValueType::real: return row.real(column);
    case ValueType::text: return std::string(row.text(column));
    case ValueType::blob: return Blob{std::string(row.text(column))};
  }
  return {};
}

void bind_value(Query& to, int parameter, const Value& value) {
  struct Bind {
    Query& to;
    int i;
    void operator()(std::monostate) const { to.bind_null(i); }
    void operator()(std::int64_t v) const { to.bind_int64(i, v); }
    void operator()(double v) const { to.bind_real(i, v); }
    void operator()(const std::string& v) const { to.bind_text(i, v); }
    void operator()(const Blob& v) const { to.bind_blob(i, v.bytes); }
  };
  std::visit(Bind{to, parameter}, value);
}

struct TableCopy {
  const char* table;
  const char* order;  // rows are written in the order of this key, so new ids keep their order
  bool keep_ids = false;
  IdMap* new_ids = nullptr;         // tasks, renumbered: records the destination's id of each
  const IdMap* task_ids = nullptr;  // runs of renumbered tasks: the destination's id of their task
  const char* on_conflict = "";
  // Runs merged after the destination's: added to their ids and to the
  // run a chain's upstream_run_id names, so both stay the same run.
  std::int64_t id_shift = 0;
};

int column_named(const Query& row, std::string_view name) {
  for (int i = 0; i < row.column_count(); ++i)
    if (row.column_name(i) == name) return i;
  return -1;
}

// The rows of one table, written a batch per INSERT as they are read; one
// row per INSERT when the destination numbers them (RETURNING gives the new
// id, in no promised order among several rows).
class BatchInsert {
 public:
  BatchInsert(Database& to, const TableCopy& copy, const Query& row)
      : to_(to), copy_(copy), batch_(copy.new_ids ? 1 : rows_per_insert), id_column_(column_named(row, "id")),
        task_id_column_(copy.task_ids ? column_named(row, "task_id") : -1),
        upstream_column_(copy.id_shift ? column_named(row, "upstream_run_id") : -1) {
    for (int i = 0; i < row.column_count(); ++i) {
      if (i == id_column_ && !copy.keep_ids) continue;
      columns_.push_back(i);
      names_ += fmt::format("{}{}", names_.empty() ? "" : ", ", row.column_name(i));
    }
  }

  void add(const Query& row) {
    for (int column : columns_) values_.push_back(copied_value(row, column));
    ids_.push_back(id_column_ >= 0 ? row.int64(id_column_) : 0);
    if (ids_.size() == batch_) flush();
  }

  // Writes the rows left; the rows written in all.
  std::int64_t finish() {
    if (!ids_.empty()) flush();
    return written_;
  }

  // The texts written with U+FFFD for their bytes that were not UTF-8.
  std::int64_t texts_repaired() const { return repaired_; }

 private:
  std::string sql(std::size_t rows) const {
    std::string row = "(";
    for (std::size_t i = 0; i < columns_.size(); ++i) row += i ? ", ?" : "?";
    row += ")";
    std::string values;
    for (std::size_t i = 0; i < rows; ++i) values += (i ? ", " : "") + row;
    return fmt::format("INSERT INTO {} ({}) VALUES {}{}{}", copy_.table, names_, values, copy_.on_conflict,
                       copy_.new_ids ? " RETURNING id" : "");
  }

  void flush() {
    auto insert = ids_.size() == batch_ ? to_.cached(sql(batch_)) : to_.prepare(sql(ids_.size()));
    Query& out = insert.query();
    for (std::size_t i = 0; i < values_.size(); ++i) bind_value(out, static_cast<int>(i + 1), values_[i]);
    bool returned = out.step();
    if (returned && copy_.new_ids) (*copy_.new_ids)[ids_.front()] = out.int64(0);
    while (returned) returned = out.step();
    written_ += out.changes();
    values_.clear();
    ids_.clear();
  }

  Value copied_value(const Query& row, int column) {
    if (column == task_id_column_) return copy_.task_ids->at(row.int64(column));
    bool shifted = column == id_column_ || column == upstream_column_;
    if (shifted && copy_.id_shift && row.type(column) != ValueType::null) return row.int64(column) + copy_.id_shift;
    auto value = value_of(row, column);
    if (auto* text = std::get_if<std::string>(&value); text && to_server_ && core::invalid_utf8_at(*text)) {
      *text = core::valid_utf8(*text);
      ++repaired_;
    }
    return value;
  }

  Database& to_;
  const TableCopy& copy_;
  // A server refuses text that is not UTF-8, which a SQLite file may hold
  // (written by another program): copied there with U+FFFD.
  bool to_server_ = to_.dialect() == Dialect::postgresql;
  std::int64_t repaired_ = 0;
  std::size_t batch_;
  int id_column_;
  int task_id_column_;
  int upstream_column_;
  std::vector<int> columns_;
  std::string names_;
  std::vector<Value> values_;     // the rows not written yet, column after column
  std::vector<std::int64_t> ids_;  // their ids in the source
  std::int64_t written_ = 0;
};

// Copies the table's rows, never more than a batch of them in memory; the
// rows written. Adds the texts it repaired to `repaired`.
std::int64_t copy_rows(Database& from, Database& to, const TableCopy& copy, std::int64_t& repaired) {
  auto rows = from.prepare(fmt::format("SELECT * FROM {} ORDER BY {}", copy.table, copy.order));
  std::optional<BatchInsert> insert;
  while (rows.step()) {
    if (!insert) insert.emplace(to, copy, rows.query());
    insert->add(rows.query());
  }
  if (!insert) return 0;
  auto written = insert->finish();
  repaired += insert->texts_repaired();
  return written;
}

// The names of tasks both databases hold: the two name-ordered lists read
// side by side, neither held in memory (both engines order names bytewise).
std::vector<std::string> names_in_both(Database& a, Database& b) {
  static const std::string sql = "SELECT name FROM tasks ORDER BY name";
  auto left = a.prepare(sql), right = b.prepare(sql);
  std::vector<std::string> both;
  bool more_left = left.step(), more_right = right.step();
  while (more_left && more_right) {
    auto order = left.query().text(0).compare(right.query().text(0));
    if (order == 0) both.emplace_back(left.query().text(0));
    if (order <= 0) more_left = left.step();
    if (order >= 0) more_right = right.step();
  }
  return both;
}

// The groups both databases cap, each with another cap.
std::vector<std::string> groups_capped_otherwise(Database& from, Database& to) {
  static const std::string sql = "SELECT name, concurrency FROM groups";
  std::map<std::string, std::optional<std::int64_t>> caps;
  for (auto rows = to.prepare(sql); rows.step();) {
    Columns row(rows);
    auto name = row.text();
    caps[name] = row.optional_int64();
  }
  std::vector<std::string> differing;
  for (auto rows = from.prepare(sql); rows.step();) {
    Columns row(rows);
    auto name = row.text();
    auto found = caps.find(name);
    if (found != caps.end() && found->second != row.optional_int64()) differing.push_back(name);
  }
  std::sort(differing.begin(), differing.end());
  return differing;
}

// The calendars both databases have, each with other days.
std::vector<std::string> calendars_otherwise(Database& from, Database& to) {
  static const std::string sql = "SELECT name, dates FROM calendars ORDER BY name";
  std::map<std::string, std::string> there;
  for (auto rows = to.prepare(sql); rows.step();) {
    Columns row(rows);
    auto name = row.text();
    there[name] = row.text();
  }
  std::vector<std::string> differing;
  for (auto rows = from.prepare(sql); rows.step();) {
    Columns row(rows);
    auto name = row.text();
    auto found = there.find(name);
    if (found != there.end() && found->second != row.text()) differing.push_back(name);
  }
  return differing;
}

std::map<std::string, std::string> defaults_of(Database& db) {
  std::map<std::string, std::string> defaults;
  for (auto rows = db.prepare("SELECT field, value FROM defaults"); rows.step();) {
    Columns row(rows);
    auto field = row.text();
    defaults[field] = row.text();
  }
  return defaults;
}

// The defaults (taskd defaults) that differ, or that one database has and
// the other not, when the destination has any: the tasks copied would not
// hold the values of the defaults they take. (Into a database without
// defaults, the source's are copied.)
std::vector<std::string> defaults_otherwise(Database& from, Database& to) {
  auto there = defaults_of(to);
  if (there.empty()) return {};
  auto here = defaults_of(from);
  std::vector<std::string> differing;
  for (const auto& [field, value] : here) {
    if (auto found = there.find(field); found == there.end() || found->second != value) differing.push_back(field);
  }
  for (const auto& [field, value] : there) {
    if (!here.contains(field)) differing.push_back(field);
  }
  std::sort(differing.begin(), differing.end());
  return differing;
}

core::Error refused(std::string message) { return {ErrorKind::bad_input, std::move(message) + "; nothing written"}; }

// --user is a privilege: a task that runs as another user goes only into a
// database file no one else can write, as add and apply refuse it otherwise.
std::optional<core::Error> users_refusal(Database& from, const Database& to) {
  auto with_user = from.prepare("SELECT count(*) FROM tasks WHERE run_as <> ''").single_int64();
  if (with_user == 0) return std::nullopt;
  auto grantable = check_private_database_file(to);
  if (grantable) return std::nullopt;
  return refused(fmt::format("copy-db: {} task{} of {} run as another user (--user), which only a database file "
                             "that no one else can write may say, and {}",
                             with_user, with_user == 1 ? "" : "s", from.name(), grantable.error().message));
}

// On a server each host has its own boots: a task of --cron @reboot there
// names its host (--on-host), as add refuses it otherwise.
std::optional<core::Error> boots_refusal(Database& from, const Database& to) {
  if (to.file()) return std::nullopt;
  auto unpinned = from.prepare("SELECT count(*) FROM tasks WHERE schedule_kind = 'cron' AND schedule_spec = '@reboot' "
                               "AND on_host = ''")
                      .single_int64();
  if (unpinned == 0) return std::nullopt;
  return refused(fmt::format("copy-db: {} task{} of {} run{} at boot (--cron @reboot) without --on-host, which a "
                             "shared database needs: each host has its own boots; give {} --on-host first",
                             unpinned, unpinned == 1 ? "" : "s", from.name(), unpinned == 1 ? "s" : "",
                             unpinned == 1 ? "it" : "them"));
}

std::optional<core::Error> refusal(Database& from, Database& to, bool merge, std::int64_t tasks_there) {
  if (auto source = check_copy_source(from); !source) return source.error();
  if (auto users = users_refusal(from, to)) return users;
  if (auto boots = boots_refusal(from, to)) return boots;
  if (auto defaults = defaults_otherwise(from, to); !defaults.empty())
    return refused(fmt::format("copy-db: {} and {} have other defaults (taskd defaults) for {}: make them the same "
                               "first",
                               from.name(), to.name(), listed(defaults)));
  if (tasks_there > 0 && !merge)
    return refused(fmt::format("copy-db: {} already holds {} task{}; give --merge to add {}'s tasks to them",
                               to.name(), tasks_there, tasks_there == 1 ? "" : "s", from.name()));
  if (!merge) return std::nullopt;
  if (auto both = names_in_both(from, to); !both.empty())
    return refused(fmt::format("copy-db --merge: {} task name{} in both {} and {}: {}", both.size(),
                               both.size() == 1 ? " is" : "s are", from.name(), to.name(), listed(both)));
  if (auto groups = groups_capped_otherwise(from, to); !groups.empty())
    return refused(fmt::format("copy-db --merge: {} group{} another concurrency cap in {} than in {}: {}",
                               groups.size(), groups.size() == 1 ? " has" : "s have", from.name(), to.name(),
                               listed(groups)));
  if (auto calendars = calendars_otherwise(from, to); !calendars.empty())
    return refused(fmt::format("copy-db --merge: {} calendar{} other days in {} than in {}: {}", calendars.size(),
                               calendars.size() == 1 ? " has" : "s have", from.name(), to.name(), listed(calendars)));
  return std::nullopt;
}

// The highest id of a table: of its rows, and on a server of those its
// identity sequence handed out, which deleted rows do not give back.
std::string last_id_sql(const Database& db, const char* table) {
  if (db.dialect() != Dialect::postgresql) return fmt::format("SELECT coalesce(max(id), 0) FROM {}", table);
  return fmt::format("SELECT greatest(coalesce(max(id), 0), coalesce(pg_sequence_last_value("
                     "CAST(pg_get_serial_sequence('{0}', 'id') AS regclass)), 0)) FROM {0}",
                     table);
}

// After rows were written with their ids: a server's identity sequence
// goes on after the highest (never back), as SQLite's rowid does.
void continue_ids_after_copied(Database& db, const char* table) {
  if (db.dialect() != Dialect::postgresql) return;
  auto last = db.prepare(last_id_sql(db, table)).single_int64();
  auto resume = db.prepare(fmt::format("SELECT setval(pg_get_serial_sequence('{}', 'id'), ?, false)", table));
  Binder(resume).int64(last + 1);
  resume.exec();
}

}  // namespace

namespace {

Result<void> check_nothing_running(Database& from) {
  auto runs = TRY(running_runs(from));
  if (runs.empty()) return {};
  std::vector<std::string> names;
  for (const auto& run : runs) names.push_back(run.task);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return std::unexpected(refused(fmt::format(
      "copy-db: {} has a running run ({}): stop the taskd that runs it (after a taskd that died, "
      "`taskd --db {} tick` finds its runs lost)",
      from.name(), listed(names), from.name())));
}

// A malformed row would be copied as it is, or refused by a server's
// column types half way: either way it is for its owner to repair first.
Result<void> check_well_formed(Database& from) {
  std::vector<std::string> names;
  std::string first_problems;
  auto read = for_each_task(from, {}, [&](const StoredTask& task) -> Result<void> {
    if (task) return {};
    if (names.empty()) first_problems = describe_problems(task.error().problems);
    names.push_back(task.error().readable.definition.name);
    return {};
  });
  if (!read || names.empty()) return read;
  return std::unexpected(refused(fmt::format(
      "copy-db: {} has {} malformed task{} ({}; {}: {}): repair with taskd edit or remove with taskd rm first",
      from.name(), names.size(), names.size() == 1 ? "" : "s", listed(names), names.front(), first_problems)));
}

}  // namespace

Result<void> check_copy_source(Database& from) {
  TRY(check_nothing_running(from));
  return check_well_formed(from);
}

Result<CopyCounts> copy_database(Database& from, Database& to, bool merge) {
  return guarded(to, [&]() -> Result<CopyCounts> {
    WriteTransaction hold_still(from, WriteScope::database);  // never committed: the source is only read
    WriteTransaction tx(to, WriteScope::database);
    auto tasks_there = to.prepare("SELECT count(*) FROM tasks").single_int64();
    if (auto error = refusal(from, to, merge, tasks_there)) return std::unexpected(*error);
    bool keep_ids = tasks_there == 0;
    auto last_run_there = to.prepare(last_id_sql(to, "runs")).single_int64();
    IdMap task_ids;
    CopyCounts counts;
    auto& repaired = counts.texts_repaired;
    counts.groups = copy_rows(
        from, to, {.table = "groups", .order = "name", .on_conflict = " ON CONFLICT (name) DO NOTHING"}, repaired);
    copy_rows(from, to, {.table = "calendars", .order = "name", .on_conflict = " ON CONFLICT (name) DO NOTHING"},
              repaired);
    copy_rows(from, to,
              {.table = "calendar_day_sets", .order = "digest", .on_conflict = " ON CONFLICT (digest) DO NOTHING"},
              repaired);
    copy_rows(from, to, {.table = "defaults", .order = "field", .on_conflict = " ON CONFLICT (field) DO NOTHING"},
              repaired);
    counts.tasks = copy_rows(
        from, to, {.table = "tasks", .order = "id", .keep_ids = keep_ids, .new_ids = keep_ids ? nullptr : &task_ids},
        repaired);
    counts.runs = copy_rows(from, to, {.table = "runs", .order = "id", .keep_ids = true,
                                       .task_ids = keep_ids ? nullptr : &task_ids, .id_shift = last_run_there},
                            repaired);
    if (keep_ids) continue_ids_after_copied(to, "tasks");
    continue_ids_after_copied(to, "runs");
    tx.commit();
    return counts;
  });
}

}  // namespace taskd::store
