#include "store/tasks.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/defaults.hpp"
#include "core/task_fields.hpp"
#include "store/columns.hpp"
#include "store/runs.hpp"
#include "store/calendars.hpp"
#include "store/task_row.hpp"

namespace taskd::store {
namespace {

using core::Result;
using core::Task;
using core::Time;
using nlohmann::json;

// A task that can be due: the condition of the partial index tasks_due,
// repeated so that SQLite uses it.
constexpr std::string_view can_be_due = "next_run_at IS NOT NULL AND paused = 0 AND disabled_until_update = 0";
// A task due at ?1.
const std::string due_at_1 = fmt::format("{} AND next_run_at <= ?1", can_be_due);

json seconds_list(const std::vector<core::Seconds>& values) {
  json out = json::array();
  for (auto value : values) out.push_back(value.count());
  return out;
}

json env_json(const std::vector<core::EnvVar>& env) {
  json out = json::array();
  for (const auto& [name, value] : env) out.push_back(json::array({name, value}));
  return out;
}

// The tasks in the rows of `query`, read as they come.
Result<std::vector<StoredTask>> tasks_from(Statement& query) {
  std::vector<StoredTask> tasks;
  while (query.step()) tasks.push_back(read_task(query.query()));
  return tasks;
}

Result<std::optional<StoredTask>> first_task(Statement& query) {
  if (!query.step()) return std::optional<StoredTask>();
  return std::optional(read_task(query.query()));
}

// A stored task as a caller that can do nothing with a malformed row sees it.
Result<std::optional<Task>> well_formed(Result<std::optional<StoredTask>> found) {
  auto stored = TRY(std::move(found));
  if (!stored) return std::optional<Task>();
  if (!*stored) return std::unexpected(malformed_task_error(stored->error()));
  return std::optional(std::move(**stored));
}

// Every definition column but the name, in bind_definition's order: those
// of the fields not in core::task_fields(), then those of the table.
const std::string& definition_columns() {
  static const std::string columns = with_field_columns(
      "command, shell, schedule_kind, schedule_spec, tz, dtstart, after_finish, phase, jitter, retry, permanent_exit, "
      "cwd, env, after_task, after_finished, dst_gap, dst_repeat, from_defaults, calendar_days_digest");
  return columns;
}

std::size_t definition_column_count() {
  static const std::size_t count = std::ranges::count(definition_columns(), ',') + 1;
  return count;
}

// "?, ?, ?": `count` parameters.
std::string placeholders(std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += i == 0 ? "?" : ", ?";
  return out;
}

template <class Rule>
void bind_optional_rule(Binder& b, const std::optional<Rule>& rule) {
  if (rule) {
    b.text(core::to_string(*rule));
  } else {
    b.null();
  }
}

void bind_value(Binder& b, const core::FieldValue& value) {
  if (const auto* number = std::get_if<std::int64_t>(&value)) return b.int64(*number);
  if (const auto* flag = std::get_if<bool>(&value)) return b.int64(*flag);
  if (const auto* text = std::get_if<std::string>(&value)) return b.text(*text);
  b.null();
}

// `calendar_days`: the name save_calendar_days gave the task's days.
void bind_definition(Binder& b, const core::TaskDefinition& d, const std::string& calendar_days) {
  b.text(json(d.command.argv).dump());
  b.int64(d.command.shell);
  b.text(core::to_string(d.schedule_kind));
  b.text(d.schedule_spec);
  b.text(d.tz);
  if (d.dtstart) {
    b.text(core::format_local(*d.dtstart));
  } else {
    b.null();
  }
  b.int64(d.after_finish);
  b.fractional_seconds(d.phase);
  b.seconds(d.jitter);
  b.text(seconds_list(d.retry).dump());
  b.text(json(d.permanent_exit).dump());
  b.text(d.cwd);
  b.text(env_json(d.env).dump());
  b.text(d.after.task);
  b.int64(d.after.on_any_outcome);
  bind_optional_rule(b, d.dst.gap);
  bind_optional_rule(b, d.dst.repeat);
  b.text(core::from_defaults_text(d.from_defaults));
  b.text(calendar_days);
  for (const auto& field : core::task_fields()) bind_value(b, field.value(d));
}

}  // namespace

const char* const state_assignments =
    "next_run_at = ?, last_run_at = ?, last_finished_at = ?, last_status = ?, attempt_no = ?, attempt_uid = ?, "
    "attempt_started_at = ?, attempt_timeout_at = ?, run_index = ?, disabled_until_update = ?, disabled_reason = ?, "
    "paused = ?, accounted_until = ?, last_succeeded_at = ?, failing_since = ?, ladder_exhausted_at = ?, "
    "updated_at = ?";

void bind_state(Binder& b, const core::TaskState& s, Time now) {
  b.time(s.next_run_at);
  b.time(s.last_run_at);
  b.time(s.last_finished_at);
  if (s.last_status) {
    b.text(core::to_string(*s.last_status));
  } else {
    b.null();
  }
  b.int64(s.attempt_no);
  b.text(s.attempt_uid);
  b.time(s.attempt_started_at);
  b.time(s.attempt_timeout_at);
  b.int64(s.run_index);
  b.int64(s.disabled_until_update);
  b.text(s.disabled_reason);
  b.int64(s.paused);
  b.time(s.accounted_until);
  b.time(s.last_succeeded_at);
  b.time(s.failing_since);
  b.time(s.ladder_exhausted_at);
  b.time(now);
}

const Task& readable(const StoredTask& task) { return task ? *task : task.error().readable; }

std::string describe_problems(const std::vector<ColumnProblem>& problems) {
  std::string text;
  for (const auto& [column, what] : problems) text += fmt::format("{}{}: {}", text.empty() ? "" : "; ", column, what);
  return text;
}

core::Error malformed_task_error(const MalformedTask& task) {
  const auto& name = task.readable.definition.name;
  return {core::ErrorKind::bad_input,
          fmt::format("task \"{}\" is malformed in the database ({}): taskd edit {} can set what is wrong, taskd rm "
                      "{} removes it",
                      name, describe_problems(task.problems), name, name)};
}

Result<std::int64_t> insert_task(Database& db, const core::TaskDefinition& d, const core::TaskState& s, Time now) {
  return guarded(db, [&]() -> Result<std::int64_t> {
    static const std::string sql =
        fmt::format("INSERT INTO tasks (name, {}, created_at, updated_at) VALUES ({}) RETURNING id",
                    definition_columns(), placeholders(definition_column_count() + 3));
    auto calendar_days = TRY(save_calendar_days(db, core::calendar_days_text(d.calendar_days)));
    auto insert = db.cached(sql);
    Binder b(insert);
    b.text(d.name);
    bind_definition(b, d, calendar_days);
    b.time(now);
    b.time(now);
    std::int64_t id = 0;
    try {
      id = insert.single_int64();
    } catch (const Failure& e) {
      if (e.kind() == FailureKind::duplicate)
        return core::fail(core::ErrorKind::bad_input,
                          fmt::format("a task named \"{}\" already exists (use taskd edit, or taskd rm first)", d.name));
      throw;
    }
    TRY(save_state(db, id, s, now));
    return id;
  });
}

Result<void> update_definition(Database& db, std::int64_t task_id, const core::TaskDefinition& d, Time now) {
  return guarded(db, [&]() -> Result<void> {
    static const std::string sql = fmt::format("UPDATE tasks SET ({}, updated_at) = ({}) WHERE id = ?",
                                               definition_columns(), placeholders(definition_column_count() + 1));
    auto calendar_days = TRY(save_calendar_days(db, core::calendar_days_text(d.calendar_days)));
    auto update = db.cached(sql);
    Binder b(update);
    bind_definition(b, d, calendar_days);
    b.time(now);
    b.int64(task_id);
    update.exec();
    return forget_unused_calendar_days(db);
  });
}

Result<std::optional<StoredTask>> find_stored_task(Database& db, std::string_view name) {
  return guarded(db, [&]() -> Result<std::optional<StoredTask>> {
    static const std::string sql = fmt::format("SELECT {} FROM tasks WHERE name = ?", task_columns());
    auto query = db.cached(sql);
    query.bind(1, std::string(name));
    return first_task(query);
  });
}

Result<std::optional<Task>> find_task(Database& db, std::string_view name) {
  return well_formed(find_stored_task(db, name));
}

Result<std::optional<core::Time>> task_created_at(Database& db, std::int64_t id) {
  return guarded(db, [&]() -> Result<std::optional<core::Time>> {
    auto query = db.cached("SELECT created_at FROM tasks WHERE id = ?");
    query.bind(1, id);
    if (!query.step()) return std::nullopt;
    auto created_at = read_instant(query.query(), 0);
    if (!created_at) return core::fail(core::ErrorKind::bad_input, "created_at: " + created_at.error().message);
    return std::optional(*created_at);
  });
}

// Those who own a task come from the partial index tasks_owner; whether a
// task has none is a scan that stops at the first such row (the whole table
// when every task has an owner: what export reads anyway).
Result<std::vector<std::string>> task_owners(Database& db) {
  return guarded(db, [&]() -> Result<std::vector<std::string>> {
    auto query = db.prepare(
        "SELECT DISTINCT owner FROM tasks WHERE owner <> '' "
        "UNION ALL SELECT '' WHERE EXISTS (SELECT 1 FROM tasks WHERE owner = '')");
    std::vector<std::string> owners;
    while (query.step()) owners.push_back(Columns(query).text());
    return owners;
  });
}

Result<std::optional<StoredTask>> find_stored_task(Database& db, std::int64_t id) {
  return guarded(db, [&]() -> Result<std::optional<StoredTask>> {
    static const std::string sql = fmt::format("SELECT {} FROM tasks WHERE id = ?", task_columns());
    auto query = db.cached(sql);
    query.bind(1, id);
    return first_task(query);
  });
}

Result<std::optional<Task>> find_task(Database& db, std::int64_t id) { return well_formed(find_stored_task(db, id)); }

namespace {

using core::Condition;

// The terms of each condition; those of paused, disabled and failing imply
// the WHERE clause of their partial index (tasks_paused, tasks_disabled,
// tasks_failing), so that SQLite uses it.
constexpr const char* failed_last = "(last_status = 'failed' OR last_status = 'timed_out' OR last_status = 'lost')";

std::string condition_terms(Condition condition) {
  switch (condition) {
    case Condition::disabled: return "disabled_until_update = 1";
    case Condition::paused: return "paused = 1 AND disabled_until_update = 0";
    case Condition::failing: return fmt::format("{} AND paused = 0 AND disabled_until_update = 0", failed_last);
    case Condition::active:
      return fmt::format("paused = 0 AND disabled_until_update = 0 AND NOT coalesce({}, false)", failed_last);
  }
  return "TRUE";
}

// The part of a GLOB pattern before its first wildcard: every match starts
// with it, so it bounds a range of the name index.
std::string literal_prefix(std::string_view glob) {
  return std::string(glob.substr(0, std::min(glob.find_first_of("*?["), glob.size())));
}

// The smallest string above every string that starts with `prefix`, or none.
std::optional<std::string> prefix_end(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) prefix.pop_back();
  if (prefix.empty()) return std::nullopt;
  prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

// The WHERE clause of a filter, with only the terms the filter uses (a
// term that tests its parameter, "?1 = '' OR group_name = ?1", uses no
// index), and the values to bind in order.
struct Selection {
  std::string where = "TRUE";
  std::vector<std::string> texts;
};

// A GLOB pattern as a POSIX regular expression, for PostgreSQL's ~.
std::string glob_regex(std::string_view glob) {
  std::string out = "^";
  bool in_class = false;
  for (char c : glob) {
    if (in_class) {
      out += c == '\\' ? "\\\\" : std::string(1, c);
      in_class = c != ']';
    } else if (c == '*') {
      out += ".*";
    } else if (c == '?') {
      out += '.';
    } else if (c == '[') {
      out += c;
      in_class = true;
    } else {
      if (std::string_view(".^$+(){}|\\").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
  return out + "$";
}

Selection selection_of(const TaskFilter& filter, Dialect dialect) {
  Selection selection;
  auto& where = selection.where;
  auto add_text = [&](std::string term, std::string value) {
    where += " AND " + term;
    selection.texts.push_back(std::move(value));
  };
  if (!filter.names.empty()) {
    std::vector<std::string_view> placeholders(filter.names.size(), "?");
    where += fmt::format(" AND name IN ({})", fmt::join(placeholders, ", "));
    selection.texts.insert(selection.texts.end(), filter.names.begin(), filter.names.end());
  }
  if (!filter.group.empty()) add_text("group_name <> '' AND group_name = ?", filter.group);
  if (!filter.owner.empty()) add_text("owner <> '' AND owner = ?", filter.owner);
  if (!filter.on_host.empty()) add_text("on_host <> '' AND on_host = ?", filter.on_host);
  if (filter.condition) where += " AND " + condition_terms(*filter.condition);
  if (!filter.after.empty()) add_text("name > ?", filter.after);
  if (!filter.name_glob.empty()) {
    auto prefix = literal_prefix(filter.name_glob);
    if (!prefix.empty()) add_text("name >= ?", prefix);
    if (auto end = prefix_end(prefix)) add_text("name < ?", *end);
    if (dialect == Dialect::sqlite) {
      add_text("name GLOB ?", filter.name_glob);
    } else {
      add_text("name ~ ?", glob_regex(filter.name_glob));
    }
  }
  return selection;
}

std::string filtered_tasks_sql(const TaskFilter& filter, Dialect dialect, std::string_view columns = task_columns()) {
  return fmt::format("SELECT {} FROM tasks WHERE {} ORDER BY name{}", columns, selection_of(filter, dialect).where,
                     filter.limit ? " LIMIT ?" : "");
}

// How a walk reads each row: all of a task, or its headline.
using RowRead = StoredTask (*)(const Query& row);

// Visits each row of `query` as `read` reads it.
Result<void> visit_rows(Statement& query, RowRead read, const TaskVisitor& visit) {
  while (query.step()) {
    TRY(visit(read(query.query())));
  }
  return {};
}

// The filter's query of `columns`, its values bound.
Statement filtered_query(Database& db, const TaskFilter& filter, std::string_view columns) {
  auto query = db.prepare(filtered_tasks_sql(filter, db.dialect(), columns));
  auto selection = selection_of(filter, db.dialect());
  int parameter = 0;
  for (const auto& text : selection.texts) query.bind(++parameter, text);
  if (filter.limit) query.bind(++parameter, *filter.limit);
  return query;
}

// Visits each row the filter selects as `read` reads it.
Result<void> visit_filtered(Database& db, const TaskFilter& filter, std::string_view columns, RowRead read,
                            const TaskVisitor& visit) {
  auto query = filtered_query(db, filter, columns);
  return visit_rows(query, read, visit);
}

}  // namespace

std::string task_query_sql(const TaskFilter& filter) { return filtered_tasks_sql(filter, Dialect::sqlite); }

Result<void> for_each_task(Database& db, const TaskFilter& filter, const TaskVisitor& visit) {
  return guarded(db, [&]() { return visit_filtered(db, filter, task_columns(), read_task, visit); });
}

Result<void> for_each_task_row(Database& db, const TaskFilter& filter, std::string_view columns,
                               const std::function<void(const Query&)>& visit) {
  return guarded(db, [&]() -> Result<void> {
    auto query = filtered_query(db, filter, columns);
    while (query.step()) visit(query.query());
    return {};
  });
}

Result<void> for_each_task_headline(Database& db, const TaskFilter& filter, const TaskVisitor& visit) {
  return guarded(db, [&]() { return visit_filtered(db, filter, headline_columns, read_headline, visit); });
}

Result<std::int64_t> count_tasks(Database& db, const TaskFilter& filter) {
  return guarded(db, [&]() -> Result<std::int64_t> {
    auto selection = selection_of(filter, db.dialect());
    auto query = db.prepare(fmt::format("SELECT count(*) FROM tasks WHERE {}", selection.where));
    Binder b(query);
    for (const auto& text : selection.texts) b.text(text);
    return query.single_int64();
  });
}

Result<void> for_each_task_starting_before(Database& db, Time until, const TaskVisitor& visit) {
  return guarded(db, [&]() -> Result<void> {
    static const std::string sql =
        fmt::format("SELECT {} FROM tasks WHERE {} ORDER BY next_run_at", task_columns(), due_at_1);
    auto query = db.prepare(sql);
    query.bind(1, core::to_unix_ms(until));
    return visit_rows(query, read_task, visit);
  });
}

Result<std::vector<StoredTask>> list_tasks(Database& db, const TaskFilter& filter) {
  std::vector<StoredTask> tasks;
  TRY(for_each_task(db, filter, [&](const StoredTask& task) -> Result<void> {
    tasks.push_back(task);
    return {};
  }));
  return tasks;
}

// On a server the ticks of several hosts run at once (WriteScope::rows):
// each locks the tasks it takes and passes over those another tick, claim
// or attempt's end holds, to take them at its next pass. (Waiting for them
// instead could deadlock: these are locked in the order they are due, an
// attempt's end locks its tasks in the order of their ids.)
const std::string& due_tasks_sql(const Database& db) {
  static const std::string sql =
      fmt::format("SELECT {} FROM tasks WHERE {} ORDER BY next_run_at LIMIT ?2", task_columns(), due_at_1);
  static const std::string locking = sql + " FOR UPDATE SKIP LOCKED";
  return db.dialect() == Dialect::postgresql ? locking : sql;
}

Result<std::vector<StoredTask>> due_tasks(Database& db, Time now, int limit) {
  return guarded(db, [&]() -> Result<std::vector<StoredTask>> {
    auto query = db.cached(due_tasks_sql(db));
    query.bind(1, core::to_unix_ms(now));
    query.bind(2, limit);
    return tasks_from(query);
  });
}

Result<void> wait_for_task(Database& db, std::int64_t id) {
  return guarded(db, [&]() -> Result<void> {
    auto lock = db.cached("SELECT 1 FROM tasks WHERE id = ? FOR UPDATE");
    lock.bind(1, id);
    while (lock.step()) {
    }
    return {};
  });
}

Result<bool> wait_for_held_due_task(Database& db, Time now) {
  if (db.dialect() != Dialect::postgresql) return false;
  auto first = TRY(guarded(db, [&]() -> Result<std::optional<std::int64_t>> {
    static const std::string sql = fmt::format("SELECT id FROM tasks WHERE {} ORDER BY next_run_at LIMIT 1", due_at_1);
    auto query = db.cached(sql);
    query.bind(1, core::to_unix_ms(now));
    if (!query.step()) return std::optional<std::int64_t>();
    return std::optional(query.query().int64(0));
  }));
  if (!first) return false;
  TRY(wait_for_task(db, *first));
  return true;
}

// Each part reads at most the first entry of the partial index tasks_due,
// runs_running or runs_claimable, or the first row of workers. The earliest
// next_run_at is compared with ?1 outside its subquery: an EXISTS with the
// comparison inside let PostgreSQL's generic plan scan the whole table,
// hoping to meet a due task early (none due: a million rows read). Without
// a task the comparison is NULL, read as false.
const std::string& tick_work_sql() {
  static const std::string sql =
      fmt::format("SELECT (SELECT next_run_at FROM tasks WHERE {} ORDER BY next_run_at LIMIT 1) <= ?1, "
                  "EXISTS (SELECT 1 FROM runs WHERE status = 'running'), "
                  "EXISTS (SELECT 1 FROM runs WHERE status = 'queued' AND not_before <= ?1), "
                  "EXISTS (SELECT 1 FROM workers)",
                  can_be_due);
  return sql;
}

Result<std::int64_t> count_due_tasks(Database& db, Time due_by) {
  return guarded(db, [&]() -> Result<std::int64_t> {
    static const std::string sql = fmt::format("SELECT count(*) FROM tasks WHERE {} AND next_run_at <= ?", can_be_due);
    auto query = db.prepare(sql);
    Binder(query).time(due_by);
    return query.single_int64();
  });
}

Result<TickWork> tick_work(Database& db, Time now) {
  return guarded(db, [&]() -> Result<TickWork> {
    auto query = db.cached(tick_work_sql());
    query.bind(1, core::to_unix_ms(now));
    query.step();
    auto exists = [&](int column) { return query.query().int64(column) != 0; };
    return TickWork{.due = exists(0), .running = exists(1), .claimable = exists(2), .workers = exists(3)};
  });
}

Result<void> set_task_boot(Database& db, std::int64_t task_id, std::string_view boot_id) {
  return guarded(db, [&]() -> Result<void> {
    auto update = db.cached("UPDATE tasks SET boot_id = ?1 WHERE id = ?2");
    Binder b(update);
    b.text(boot_id);
    b.int64(task_id);
    update.exec();
    return {};
  });
}

namespace {

// An @reboot task of host ?1 kept under another boot than ?2 (the partial index tasks_at_boot).
constexpr std::string_view at_another_boot =
    "schedule_kind = 'cron' AND schedule_spec = '@reboot' AND on_host IN ('', ?1) AND boot_id <> ?2";

Result<bool> has_task_at_another_boot(Database& db, std::string_view host, std::string_view boot_id) {
  return guarded(db, [&]() -> Result<bool> {
    static const std::string sql = fmt::format("SELECT EXISTS (SELECT 1 FROM tasks WHERE {})", at_another_boot);
    auto probe = db.cached(sql);
    Binder b(probe);
    b.text(host);
    b.text(boot_id);
    probe.step();
    return probe.query().int64(0) != 0;
  });
}

// Writes `boot_id` into the tasks at_another_boot selects, making due at `now`
// those kept under a boot (not '') that are neither paused nor disabled.
Result<void> keep_boot(Database& db, std::string_view host, std::string_view boot_id, Time now) {
  static const std::string sql =
      fmt::format("UPDATE tasks SET next_run_at = CASE WHEN boot_id = '' OR paused <> 0 OR disabled_until_update <> 0 "
                  "THEN next_run_at ELSE ?3 END, boot_id = ?2 WHERE {}",
                  at_another_boot);
  auto update = db.cached(sql);
  Binder b(update);
  b.text(host);
  b.text(boot_id);
  b.time(now);
  update.exec();
  return {};
}

}  // namespace

Result<void> make_due_at_boot(Database& db, std::string_view host, std::string_view boot_id, Time now) {
  if (boot_id.empty()) return {};  // a machine that tells no boot (some containers)
  if (!TRY(has_task_at_another_boot(db, host, boot_id))) return {};
  return write(db, [&] { return keep_boot(db, host, boot_id, now); }, WriteScope::rows);
}

Result<std::optional<std::vector<StoredTask>>> lock_tasks_and_followers(Database& db,
                                                                        const std::vector<std::int64_t>& ids) {
  if (db.dialect() != Dialect::postgresql) return std::nullopt;
  if (ids.empty()) return std::optional<std::vector<StoredTask>>(std::in_place);
  return guarded(db, [&]() -> Result<std::optional<std::vector<StoredTask>>> {
    static const std::string sql = fmt::format(
        "SELECT {} FROM tasks WHERE id = ANY(CAST(?1 AS bigint[])) OR (after_task <> '' AND after_task IN "
        "(SELECT name FROM tasks WHERE id = ANY(CAST(?1 AS bigint[])))) ORDER BY id FOR UPDATE",
        task_columns());
    auto lock = db.cached(sql);
    Binder b(lock);
    b.id_array(ids);
    return std::optional(TRY(tasks_from(lock)));
  });
}

Result<std::vector<StoredTask>> followers_of(Database& db, std::string_view name) {
  return guarded(db, [&]() -> Result<std::vector<StoredTask>> {
    static const std::string sql =
        fmt::format("SELECT {} FROM tasks WHERE after_task = ? AND after_task <> '' ORDER BY id", task_columns());
    auto query = db.cached(sql);
    query.bind(1, std::string(name));
    return tasks_from(query);
  });
}

namespace {

// The (name, after_task) rows `sql` selects, as each task's upstream.
Result<core::UpstreamOf> upstreams_selected(Database& db, const char* sql) {
  return guarded(db, [&]() -> Result<core::UpstreamOf> {
    auto query = db.prepare(sql);
    core::UpstreamOf upstream_of;
    while (query.step()) upstream_of.emplace(query.query().text(0), query.query().text(1));
    return upstream_of;
  });
}

}  // namespace

Result<core::UpstreamOf> task_upstreams(Database& db) {
  return upstreams_selected(db, "SELECT name, after_task FROM tasks WHERE after_task <> ''");
}

Result<core::UpstreamOf> followers_of_missing_tasks(Database& db) {
  return upstreams_selected(db,
                            "SELECT name, after_task FROM tasks f WHERE after_task <> '' "
                            "AND NOT EXISTS (SELECT 1 FROM tasks u WHERE u.name = f.after_task)");
}

Result<void> disable_task(Database& db, std::int64_t task_id, std::string_view reason, Time now) {
  return guarded(db, [&]() -> Result<void> {
    auto update =
        db.cached("UPDATE tasks SET disabled_until_update = 1, disabled_reason = ?, updated_at = ? WHERE id = ?");
    Binder b(update);
    b.text(reason);
    b.time(now);
    b.int64(task_id);
    update.exec();
    return {};
  });
}

Result<void> save_state(Database& db, std::int64_t task_id, const core::TaskState& state, Time now) {
  return guarded(db, [&]() -> Result<void> {
    static const std::string sql = fmt::format("UPDATE tasks SET {} WHERE id = ?", state_assignments);
    auto update = db.cached(sql);
    Binder b(update);
    bind_state(b, state, now);
    b.int64(task_id);
    update.exec();
    return {};
  });
}

Result<bool> save_state_fenced(Database& db, std::int64_t task_id, const std::string& attempt_uid,
                               const core::TaskState& state, Time now) {
  return guarded(db, [&]() -> Result<bool> {
    auto update = db.prepare(fmt::format("UPDATE tasks SET {} WHERE id = ? AND attempt_uid = ?", state_assignments));
    Binder b(update);
    bind_state(b, state, now);
    b.int64(task_id);
    b.text(attempt_uid);
    return update.exec() == 1;
  });
}

Result<std::optional<TaskToClaim>> find_task_to_claim(Database& db, std::int64_t run_id, std::int64_t task_id,
                                                      Time now, std::string_view host) {
  return guarded(db, [&]() -> Result<std::optional<TaskToClaim>> {
    static const std::string sql = fmt::format(
        "SELECT {}, state_blob, EXISTS (SELECT 1 FROM runs r JOIN tasks t ON t.id = r.task_id "
        "WHERE {} AND r.id = ?2) FROM tasks WHERE id = ?4",
        task_columns(), claimable_run_condition());
    static const int blob_column = task_column_count();
    auto query = db.cached(sql);
    Binder b(query);
    b.time(now);
    b.int64(run_id);
    b.text(host);
    b.int64(task_id);
    if (!query.step()) return std::optional<TaskToClaim>();
    auto task = read_task(query.query());
    const auto& row = query.query();
    return std::optional(TaskToClaim{std::move(task), std::string(row.text(blob_column)), row.int64(blob_column + 1) != 0});
  });
}

Result<void> save_state_blob(Database& db, std::int64_t task_id, const std::string& blob) {
  return guarded(db, [&]() -> Result<void> {
    auto update = db.cached("UPDATE tasks SET state_blob = ? WHERE id = ?");
    Binder b(update);
    b.blob(blob);
    b.int64(task_id);
    update.exec();
    return {};
  });
}

Result<std::int64_t> rename_task(Database& db, std::int64_t task_id, const std::string& old_name,
                                 const std::string& new_name) {
  return guarded(db, [&]() -> Result<std::int64_t> {
    auto rename = db.prepare("UPDATE tasks SET name = ? WHERE id = ?");
    rename.bind(1, new_name);
    rename.bind(2, task_id);
    rename.exec();
    auto follow = db.prepare("UPDATE tasks SET after_task = ? WHERE after_task = ? AND after_task <> ''");
    follow.bind(1, new_name);
    follow.bind(2, old_name);
    return static_cast<std::int64_t>(follow.exec());
  });
}

Result<int> remove_task(Database& db, std::int64_t task_id) {
  return guarded(db, [&]() -> Result<int> {
    auto remove = db.prepare("DELETE FROM tasks WHERE id = ?");
    remove.bind(1, task_id);
    auto removed = static_cast<int>(remove.exec());
    // The counters name the task without a foreign key (on a server, each
    // would lock the task row). After the runs went with the task, so that
    // a run's end that committed meanwhile has added to them.
    auto counters = db.prepare("DELETE FROM task_run_stats WHERE task_id = ?");
    counters.bind(1, task_id);
    counters.exec();
    TRY(forget_unused_calendar_days(db));
    return removed;
  });
}

}  // namespace taskd::store
