#include "store/runs.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <initializer_list>
#include <span>
#include <unordered_map>

#include "store/columns.hpp"
#include "store/task_row.hpp"
#include "store/tasks.hpp"

namespace taskd::store {
namespace {

using core::Result;
using core::Time;

constexpr const char* run_columns =
    "r.id, r.task_id, t.name, r.status, r.trigger, r.scheduled_at, r.enqueued_at, r.started_at, r.finished_at, "
    "r.deadline_at, r.exit_code, r.signal, r.attempt_no, r.attempt_uid, r.run_index, r.reason, length(r.output), "
    "r.output_truncated, r.cpu_us, r.peak_memory_bytes, r.not_before, r.upstream_run_id, r.worker_host";

// A run from the columns of run_columns, in order.
RunRecord run_from(Columns c) {
  RunRecord run;
  run.id = c.int64();
  run.task_id = c.int64();
  run.task = c.text();
  run.status = core::parse_run_status(c.text()).value_or(core::RunStatus::failed);
  run.trigger = core::parse_trigger(c.text()).value_or(core::Trigger::schedule);
  run.scheduled_at = core::from_unix_ms(c.int64());
  run.enqueued_at = core::from_unix_ms(c.int64());
  run.started_at = c.optional_time();
  run.finished_at = c.optional_time();
  run.deadline_at = c.optional_time();
  auto exit_code = c.optional_int64();
  if (exit_code) run.exit_code = static_cast<int>(*exit_code);
  auto signal = c.optional_int64();
  if (signal) run.signal = static_cast<int>(*signal);
  run.attempt_no = c.int32();
  run.attempt_uid = c.text();
  run.run_index = c.int64();
  run.reason = c.text();
  run.output_bytes = c.int64();
  run.output_truncated = c.boolean();
  if (auto cpu = c.optional_int64()) run.usage.cpu = std::chrono::microseconds(*cpu);
  run.usage.peak_memory_bytes = c.optional_int64();
  run.not_before = core::from_unix_ms(c.int64());
  run.upstream_run_id = c.optional_int64();
  run.host = c.text();
  return run;
}

RunRecord run_from_row(Statement& row) { return run_from(Columns(row)); }

std::vector<RunRecord> runs_from(Statement& query) {
  std::vector<RunRecord> runs;
  while (query.step()) runs.push_back(run_from_row(query));
  return runs;
}

constexpr const char* in_flight_columns =
    "r.id, r.task_id, t.name, r.trigger, r.attempt_uid, r.worker_host, r.worker_boot_id, r.worker_pid, "
    "r.worker_started_at, r.child_pid, r.child_started_at, r.lease_expires_at, r.started_at, r.deadline_at";

InFlightRun in_flight_from_row(Statement& row) {
  Columns c(row);
  InFlightRun run;
  run.id = c.int64();
  run.task_id = c.int64();
  run.task = c.text();
  run.trigger = core::parse_trigger(c.text()).value_or(core::Trigger::schedule);
  run.attempt_uid = c.text();
  run.worker.host = c.text();
  run.worker.boot_id = c.text();
  run.worker.pid = static_cast<pid_t>(c.optional_int64().value_or(0));
  run.worker.started_at = c.optional_int64().value_or(0);
  run.child_pid = static_cast<pid_t>(c.optional_int64().value_or(0));
  run.child_started_at = c.optional_int64().value_or(0);
  run.lease_expires_at = c.optional_time();
  run.started_at = c.optional_time();
  run.deadline_at = c.optional_time();
  return run;
}

// `rows` rows of parameters for a VALUES list, numbered from `first`, each
// column cast to its type ('': as bound, text); PostgreSQL types VALUES by
// their own, not by what they are compared with. "(CAST(?2 AS bigint), ?3), ..."
std::string parameter_rows(std::size_t rows, std::size_t first, std::initializer_list<std::string_view> types) {
  std::string out;
  std::size_t parameter = first;
  for (std::size_t row = 0; row < rows; ++row) {
    out += row == 0 ? "(" : ", (";
    for (auto type = types.begin(); type != types.end(); ++type, ++parameter) {
      if (type != types.begin()) out += ", ";
      out += type->empty() ? fmt::format("?{}", parameter) : fmt::format("CAST(?{} AS {})", parameter, *type);
    }
    out += ")";
  }
  return out;
}

}  // namespace

// When a queued run `r` of task `t` may start at ?1 (see next_queued_runs).
// The unary + keeps SQLite from walking runs_claimable and sorting every
// queued run for each claim (quadratic over a queue of 10 000: see
// bench/dispatch.sh); it walks runs_queue in claim order and stops at the
// limit. The running runs of the task are found among all running runs
// (as many as the workers' slots), not among the task's whole history.
const std::string& claimable_run_condition() {
  static const std::string condition =
      "r.status = 'queued' AND +r.not_before <= ?1 AND (t.paused = 0 OR r.trigger = 'manual') "
      "AND NOT EXISTS (SELECT 1 FROM runs x INDEXED BY runs_running WHERE x.status = 'running' "
      "AND x.task_id = r.task_id) "
      "AND (t.group_name = '' OR NOT EXISTS (SELECT 1 FROM groups g WHERE g.name = t.group_name AND g.concurrency <= "
      "(SELECT count(*) FROM runs x JOIN tasks y ON y.id = x.task_id "
      "WHERE x.status = 'running' AND y.group_name = t.group_name))) "
      "AND (t.on_host = '' OR t.on_host = ?3)";
  return condition;
}

namespace {

constexpr const char* queued_run_insert =
    "INSERT INTO runs (task_id, status, trigger, priority, scheduled_at, enqueued_at, "
    "not_before, upstream_run_id) VALUES (?, 'queued', ?, ?, ?, ?, ?, ?) RETURNING id";

void bind_queued_run(Binder& b, const core::Task& task, Time slot, core::Trigger trigger, Time now,
                     std::optional<Time> not_before, std::optional<std::int64_t> upstream_run_id) {
  b.int64(task.id);
  b.text(core::to_string(trigger));
  b.int64(task.definition.priority);
  b.time(slot);
  b.time(now);
  b.time(not_before.value_or(now));
  b.optional_int(upstream_run_id);
}

}  // namespace

Result<std::int64_t> insert_queued_run(Database& db, const core::Task& task, Time slot, core::Trigger trigger,
                                       Time now, std::optional<Time> not_before,
                                       std::optional<std::int64_t> upstream_run_id) {
  return guarded(db, [&]() -> Result<std::int64_t> {
    auto insert = db.cached(queued_run_insert);
    Binder b(insert);
    bind_queued_run(b, task, slot, trigger, now, not_before, upstream_run_id);
    return insert.single_int64();
  });
}

Result<std::int64_t> queue_run_saving_state(Database& db, const core::Task& task, Time slot, core::Trigger trigger,
                                            Time now, std::optional<Time> not_before, const core::TaskState& state) {
  if (db.dialect() != Dialect::postgresql) {
    auto id = TRY(insert_queued_run(db, task, slot, trigger, now, not_before));
    TRY(save_state(db, task.id, state, now));
    return id;
  }
  return guarded(db, [&]() -> Result<std::int64_t> {
    static const std::string sql =
        fmt::format("WITH queued AS ({}), saved AS (UPDATE tasks SET {} WHERE id = ?) SELECT id FROM queued",
                    queued_run_insert, state_assignments);
    auto statement = db.cached(sql);
    Binder b(statement);
    bind_queued_run(b, task, slot, trigger, now, not_before, std::nullopt);
    bind_state(b, state, now);
    b.int64(task.id);
    return statement.single_int64();
  });
}

Result<std::int64_t> insert_retry_of(Database& db, const core::Task& task, const RunRecord& run, int attempt_no,
                                     Time now, Time not_before) {
  return guarded(db, [&]() -> Result<std::int64_t> {
    auto insert = db.cached(
        "INSERT INTO runs (task_id, status, trigger, priority, scheduled_at, enqueued_at, not_before, attempt_no, "
        "upstream_run_id) VALUES (?, 'queued', 'manual', ?, ?, ?, ?, ?, ?) RETURNING id");
    Binder b(insert);
    b.int64(task.id);
    b.int64(task.definition.priority);
    b.time(run.scheduled_at);
    b.time(now);
    b.time(not_before);
    b.int64(attempt_no);
    b.optional_int(run.upstream_run_id);
    return insert.single_int64();
  });
}

namespace {

// Slots per INSERT of insert_backfill_runs: well below either engine's
// limit on parameters.
constexpr std::size_t backfill_rows_per_insert = 500;

// Inserts the backfilled runs of `slots` in one statement; adds each slot's
// run id to `ids` (RETURNING gives no order: they are matched by slot).
void insert_backfill_chunk(Database& db, const core::Task& task, std::span<const Time> slots, int attempt_no,
                           Time now, Time not_before, std::unordered_map<std::int64_t, std::int64_t>& ids) {
  auto insert = db.prepare(fmt::format(
      "INSERT INTO runs (task_id, status, trigger, priority, scheduled_at, enqueued_at, not_before, attempt_no) "
      "SELECT CAST(?1 AS bigint), 'queued', 'manual', CAST(?2 AS bigint), v.column1, CAST(?3 AS bigint), "
      "CAST(?4 AS bigint), CAST(?5 AS bigint) FROM (VALUES {}) AS v ORDER BY v.column1 RETURNING id, scheduled_at",
      parameter_rows(slots.size(), 6, {"bigint"})));
  Binder b(insert);
  b.int64(task.id);
  b.int64(task.definition.priority);
  b.time(now);
  b.time(not_before);
  b.int64(attempt_no);
  for (auto slot : slots) b.time(slot);
  while (insert.step()) {
    Columns c(insert);
    auto id = c.int64();
    ids[c.int64()] = id;
  }
}

}  // namespace

Result<std::vector<std::int64_t>> insert_backfill_runs(Database& db, const core::Task& task,
                                                       const std::vector<Time>& slots, int attempt_no, Time now,
                                                       Time not_before) {
  return guarded(db, [&]() -> Result<std::vector<std::int64_t>> {
    std::unordered_map<std::int64_t, std::int64_t> id_of_slot;
    std::span<const Time> rest(slots);
    while (!rest.empty()) {
      auto chunk = rest.first(std::min(rest.size(), backfill_rows_per_insert));
      insert_backfill_chunk(db, task, chunk, attempt_no, now, not_before, id_of_slot);
      rest = rest.subspan(chunk.size());
    }
    std::vector<std::int64_t> ids;
    for (auto slot : slots) ids.push_back(id_of_slot.at(core::to_unix_ms(slot)));
    return ids;
  });
}

Result<std::vector<Time>> pending_backfill_slots(Database& db, std::int64_t task_id, Time from, Time until) {
  return guarded(db, [&]() -> Result<std::vector<Time>> {
    auto query = db.prepare(
        "SELECT scheduled_at FROM runs WHERE task_id = ? AND (status = 'queued' OR status = 'running') "
        "AND trigger = 'manual' AND scheduled_at < enqueued_at AND upstream_run_id IS NULL "
        "AND scheduled_at >= ? AND scheduled_at < ? "
        "ORDER BY scheduled_at");
    Binder b(query);
    b.int64(task_id);
    b.time(from);
    b.time(until);
    std::vector<Time> slots;
    while (query.step()) slots.push_back(Columns(query).time());
    return slots;
  });
}

Result<void> insert_skipped_run(Database& db, std::int64_t task_id, const core::SkippedSlots& skipped, Time now,
                                std::optional<std::int64_t> upstream_run_id) {
  return guarded(db, [&]() -> Result<void> {
    auto insert = db.cached(
        "INSERT INTO runs (task_id, status, trigger, scheduled_at, enqueued_at, not_before, "
        "finished_at, reason, upstream_run_id) VALUES (?, 'skipped', ?, ?, ?, ?, ?, ?, ?)");
    Binder b(insert);
    b.int64(task_id);
    b.text(upstream_run_id ? "manual" : "schedule");
    b.time(skipped.first);
    b.time(now);
    b.time(now);
    b.time(now);
    b.text(skipped.reason);
    b.optional_int(upstream_run_id);
    insert.exec();
    return {};
  });
}

Result<bool> has_active_run(Database& db, std::int64_t task_id) {
  return guarded(db, [&]() -> Result<bool> {
    auto query = db.cached("SELECT EXISTS (SELECT 1 FROM runs WHERE task_id = ? AND status IN ('queued', 'running'))");
    query.bind(1, task_id);
    return query.single_int64() != 0;
  });
}

// The claim's query (?1 now, ?2 the limit, ?3 the host), locking as
// `locking` says.
std::string queued_runs_sql(std::string_view locking) {
  return fmt::format("SELECT {} FROM runs r JOIN tasks t ON t.id = r.task_id WHERE {} "
                     "ORDER BY r.priority DESC, r.enqueued_at, r.id LIMIT ?2{}",
                     run_columns, claimable_run_condition(), locking);
}

// On a server, where claims of several hosts run at once (WriteScope::rows),
// the tasks of the runs claimed are locked, and the runs of a task another
// transaction holds are passed over (see wait_for_held_claimable_run).
const std::string& next_queued_runs_sql(const Database& db) {
  static const std::string sql = queued_runs_sql("");
  static const std::string locking = queued_runs_sql(" FOR UPDATE OF t SKIP LOCKED");
  return db.dialect() == Dialect::postgresql ? locking : sql;
}

Result<std::vector<RunRecord>> next_queued_runs(Database& db, Time now, int limit, std::string_view host) {
  return guarded(db, [&]() -> Result<std::vector<RunRecord>> {
    auto query = db.cached(next_queued_runs_sql(db));
    Binder b(query);
    b.time(now);
    b.int64(limit);
    b.text(host);
    return runs_from(query);
  });
}

Result<void> refresh_run_statistics(Database& db) {
  if (db.dialect() != Dialect::postgresql) return {};
  return guarded(db, [&]() -> Result<void> {
    db.prepare("ANALYZE runs").exec();
    return {};
  });
}

Result<bool> wait_for_held_claimable_run(Database& db, Time now, std::string_view host) {
  if (db.dialect() != Dialect::postgresql) return false;
  auto first = TRY(guarded(db, [&]() -> Result<std::vector<RunRecord>> {
    static const std::string sql = queued_runs_sql("");
    auto query = db.cached(sql);
    Binder b(query);
    b.time(now);
    b.int64(1);
    b.text(host);
    return runs_from(query);
  }));
  if (first.empty()) return false;
  TRY(wait_for_task(db, first.front().task_id));
  return true;
}

Result<void> lock_groups_of(Database& db, const std::vector<std::int64_t>& task_ids) {
  if (db.dialect() != Dialect::postgresql || task_ids.empty()) return {};
  return guarded(db, [&]() -> Result<void> {
    auto lock = db.cached("SELECT g.name FROM groups g WHERE g.concurrency IS NOT NULL AND g.name IN "
                          "(SELECT t.group_name FROM tasks t WHERE t.id = ANY(CAST(?1 AS bigint[]))) "
                          "ORDER BY g.name FOR UPDATE");
    Binder b(lock);
    b.id_array(task_ids);
    while (lock.step()) {
    }
    return {};
  });
}

Result<int> drop_queued_runs(Database& db, std::int64_t task_id, const std::string& reason, Time now) {
  return guarded(db, [&]() -> Result<int> {
    auto update = db.prepare("UPDATE runs SET status = 'dropped', finished_at = ?, reason = ? "
                                       "WHERE task_id = ? AND status = 'queued'");
    Binder b(update);
    b.time(now);
    b.text(reason);
    b.int64(task_id);
    return static_cast<int>(update.exec());
  });
}

Result<bool> mark_dropped(Database& db, std::int64_t run_id, const std::string& reason, Time now) {
  return guarded(db, [&]() -> Result<bool> {
    auto update = db.cached(
        "UPDATE runs SET status = 'dropped', finished_at = ?, reason = ? "
        "WHERE id = ? AND status = 'queued'");
    Binder b(update);
    b.time(now);
    b.text(reason);
    b.int64(run_id);
    return update.exec() == 1;
  });
}

namespace {

constexpr const char* start_assignments =
    "status = 'running', attempt_uid = ?, attempt_no = ?, run_index = ?, started_at = ?, deadline_at = ?, "
    "lease_expires_at = ?, worker_host = ?, worker_boot_id = ?, worker_pid = ?, worker_started_at = ?";

void bind_start(Binder& b, const StartRecord& start) {
  b.text(start.attempt_uid);
  b.int64(start.attempt_no);
  b.int64(start.run_index);
  b.time(start.started_at);
  b.time(start.deadline_at);
  b.time(start.lease_expires_at);
  b.text(start.worker.host);
  b.text(start.worker.boot_id);
  b.int64(start.worker.pid);
  b.int64(start.worker.started_at);
  b.int64(start.run_id);
}

Result<bool> mark_run_running(Database& db, const StartRecord& start) {
  return guarded(db, [&]() -> Result<bool> {
    static const std::string sql = fmt::format("UPDATE runs SET {} WHERE id = ? AND status = 'queued'", start_assignments);
    auto update = db.cached(sql);
    Binder b(update);
    bind_start(b, start);
    return update.exec() == 1;
  });
}

}  // namespace

Result<bool> mark_running(Database& db, const StartRecord& start, std::int64_t task_id, const core::TaskState& state,
                          Time now) {
  if (db.dialect() != Dialect::postgresql) {
    bool started = TRY(mark_run_running(db, start));
    if (started) TRY(save_state(db, task_id, state, now));
    return started;
  }
  return guarded(db, [&]() -> Result<bool> {
    static const std::string sql = fmt::format(
        "WITH started AS (UPDATE runs SET {} WHERE id = ? AND status = 'queued' RETURNING id), "
        "saved AS (UPDATE tasks SET {} WHERE id = ? AND EXISTS (SELECT 1 FROM started)) SELECT count(*) FROM started",
        start_assignments, state_assignments);
    auto statement = db.cached(sql);
    Binder b(statement);
    bind_start(b, start);
    bind_state(b, state, now);
    b.int64(task_id);
    return statement.single_int64() == 1;
  });
}

Result<void> set_children(Database& db, const std::vector<ChildRecord>& children) {
  return guarded(db, [&]() -> Result<void> {
    if (children.empty()) return {};
    // Cached per count of children: at most --concurrency statements.
    auto update = db.cached(fmt::format("UPDATE runs SET child_pid = c.column2, child_started_at = c.column3 "
                                        "FROM (VALUES {}) AS c WHERE runs.id = c.column1",
                                        parameter_rows(children.size(), 1, {"bigint", "bigint", "bigint"})));
    Binder b(update);
    for (const auto& child : children) {
      b.int64(child.run_id);
      b.int64(child.pid);
      b.int64(child.started_at);
    }
    update.exec();
    return {};
  });
}

namespace {

// The renewal of `count` leases (?1 the new lease, then each lease's run id
// and attempt): the id and stop request of each run renewed and, on a
// server, each run whose row another transaction holds (skipped, not waited
// for: a host frozen in the middle of one must not keep the others from
// renewing), flagged as held. A run that is neither was taken from its worker.
std::string renewal_sql(const Database& db, std::size_t count) {
  auto leases = parameter_rows(count, 2, {"bigint", ""});
  std::string_view lease = "?1 + 1000 * (SELECT kill_grace FROM tasks WHERE tasks.id = runs.task_id)";
  if (db.dialect() != Dialect::postgresql)
    return fmt::format(
        "UPDATE runs SET lease_expires_at = {} WHERE status = 'running' AND (id, attempt_uid) IN "
        "(VALUES {}) RETURNING id, stop_reason, 0",
        lease, leases);
  return fmt::format(
      "WITH held (id, attempt_uid) AS (VALUES {}), "
      "free AS (SELECT r.id FROM runs r JOIN held h ON r.id = h.id AND r.attempt_uid = h.attempt_uid "
      "WHERE r.status = 'running' FOR NO KEY UPDATE OF r SKIP LOCKED), "
      "renewed AS (UPDATE runs SET lease_expires_at = {} WHERE id IN (SELECT id FROM free) "
      "RETURNING id, stop_reason) "
      "SELECT h.id, coalesce(n.stop_reason, ''), n.id IS NULL FROM held h LEFT JOIN renewed n ON n.id = h.id "
      "WHERE n.id IS NOT NULL OR EXISTS (SELECT 1 FROM runs r WHERE r.id = h.id AND r.attempt_uid = h.attempt_uid "
      "AND r.status = 'running')",
      leases, lease);
}

}  // namespace

Result<std::vector<RenewedLease>> renew_leases(Database& db, const std::vector<HeldLease>& leases, Time until) {
  return guarded(db, [&]() -> Result<std::vector<RenewedLease>> {
    std::vector<RenewedLease> renewed;
    if (leases.empty()) return renewed;
    auto update = db.prepare(renewal_sql(db, leases.size()));
    Binder b(update);
    b.time(until);
    for (const auto& lease : leases) {
      b.int64(lease.run_id);
      b.text(lease.attempt_uid);
    }
    while (update.step()) {
      Columns c(update);
      auto id = c.int64();
      auto stop_reason = c.text();
      renewed.push_back({id, std::move(stop_reason), c.boolean()});
    }
    return renewed;
  });
}

Result<bool> write_output_so_far(Database& db, const HeldLease& attempt, std::string_view output, bool truncated) {
  return guarded(db, [&]() -> Result<bool> {
    return db.connection().write_unless_locked(
        "UPDATE runs SET output = ?1, output_truncated = ?2 WHERE id = ?3 AND attempt_uid = ?4 AND status = 'running'",
        [&](Query& update) {
          update.bind_blob(1, output);
          update.bind_int64(2, truncated);
          update.bind_int64(3, attempt.run_id);
          update.bind_text(4, attempt.attempt_uid);
        });
  });
}

Result<void> ask_to_stop(Database& db, std::int64_t run_id, const std::string& attempt_uid, const std::string& reason) {
  return guarded(db, [&]() -> Result<void> {
    auto update = db.prepare("UPDATE runs SET stop_reason = ? WHERE id = ? AND attempt_uid = ? AND status = 'running'");
    Binder b(update);
    b.text(reason);
    b.int64(run_id);
    b.text(attempt_uid);
    update.exec();
    db.connection().announce_stop();
    return {};
  });
}

Result<std::vector<InFlightRun>> running_runs(Database& db) {
  return guarded(db, [&]() -> Result<std::vector<InFlightRun>> {
    static const std::string sql = fmt::format("SELECT {} FROM runs r JOIN tasks t ON t.id = r.task_id "
                                               "WHERE r.status = 'running' ORDER BY r.id",
                                               in_flight_columns);
    auto query = db.cached(sql);
    std::vector<InFlightRun> runs;
    while (query.step()) runs.push_back(in_flight_from_row(query));
    return runs;
  });
}

Result<std::optional<InFlightRun>> running_run_of(Database& db, std::int64_t task_id) {
  return guarded(db, [&]() -> Result<std::optional<InFlightRun>> {
    auto query = db.prepare(fmt::format("SELECT {} FROM runs r JOIN tasks t ON t.id = r.task_id "
                                                  "WHERE r.status = 'running' AND r.task_id = ?",
                                                  in_flight_columns));
    query.bind(1, task_id);
    if (!query.step()) return std::optional<InFlightRun>();
    return std::optional<InFlightRun>(in_flight_from_row(query));
  });
}

namespace {

constexpr const char* finish_assignments =
    "status = ?, finished_at = ?, exit_code = ?, signal = ?, reason = ?, output = ?, output_truncated = ?, "
    "lease_expires_at = NULL, cpu_us = ?, peak_memory_bytes = ?";
constexpr const char* finished_attempt = "id = ? AND status = 'running' AND attempt_uid = ?";

void bind_finish(Binder& b, const FinishRecord& finish) {
  b.text(core::to_string(finish.status));
  b.time(finish.finished_at);
  b.optional_int(finish.exit_code);
  b.optional_int(finish.signal);
  b.text(finish.reason);
  b.blob(finish.output);
  b.int64(finish.output_truncated);
  b.optional_int(finish.usage.cpu ? std::optional(finish.usage.cpu->count()) : std::nullopt);
  b.optional_int(finish.usage.peak_memory_bytes);
  b.int64(finish.run_id);
  b.text(finish.attempt_uid);
}

// How many parameters (each a bare ?) the pieces of SQL `pieces` hold.
int parameters_in(std::initializer_list<std::string_view> pieces) {
  std::size_t count = 0;
  for (auto piece : pieces) count += static_cast<std::size_t>(std::ranges::count(piece, '?'));
  return static_cast<int>(count);
}

// The ended runs of task ?N beyond its newest ?N+1 (prune_history).
std::string pruned_runs(int task, int keep) {
  return fmt::format("DELETE FROM runs WHERE task_id = ?{0} AND status NOT IN ('queued', 'running') AND id <= "
                     "(SELECT id FROM runs WHERE task_id = ?{0} ORDER BY id DESC LIMIT 1 OFFSET ?{1})",
                     task, keep);
}

}  // namespace

Result<bool> finish_run(Database& db, const FinishRecord& finish) {
  return guarded(db, [&]() -> Result<bool> {
    static const std::string sql = fmt::format("UPDATE runs SET {} WHERE {}", finish_assignments, finished_attempt);
    auto update = db.cached(sql);
    Binder b(update);
    bind_finish(b, finish);
    return update.exec() == 1;
  });
}

Result<bool> finish_run_saving_state(Database& db, const FinishRecord& finish, std::int64_t task_id,
                                     const core::TaskState& state, int keep_runs, Time now) {
  if (db.dialect() != Dialect::postgresql) {
    bool finished = TRY(finish_run(db, finish));
    if (finished) TRY(save_state(db, task_id, state, now));
    TRY(prune_history(db, task_id, keep_runs));
    return finished;
  }
  return guarded(db, [&]() -> Result<bool> {
    // The DELETE sees the runs as they were before the statement: the run
    // it ends (the task's newest) is still running there, and kept.
    static const int task = parameters_in({finish_assignments, finished_attempt, state_assignments}) + 1;
    static const std::string sql = fmt::format(
        "WITH ended AS (UPDATE runs SET {} WHERE {} RETURNING id), "
        "saved AS (UPDATE tasks SET {} WHERE id = ?{} AND EXISTS (SELECT 1 FROM ended)), "
        "pruned AS ({}) SELECT count(*) FROM ended",
        finish_assignments, finished_attempt, state_assignments, task, pruned_runs(task, task + 1));
    auto statement = db.cached(sql);
    Binder b(statement);
    bind_finish(b, finish);
    bind_state(b, state, now);
    b.int64(task_id);
    b.int64(keep_runs);
    return statement.single_int64() == 1;
  });
}

Result<bool> requeue_run(Database& db, const RequeueRecord& requeue) {
  return guarded(db, [&]() -> Result<bool> {
    auto update = db.cached(
        "UPDATE runs SET status = 'queued', attempt_uid = '', attempt_no = ?, run_index = ?, reason = ?, "
        "started_at = NULL, finished_at = NULL, deadline_at = NULL, exit_code = NULL, signal = NULL, "
        "output = ?, output_truncated = 0, lease_expires_at = NULL, stop_reason = '', cpu_us = NULL, "
        "peak_memory_bytes = NULL, worker_host = '', worker_boot_id = '', worker_pid = NULL, "
        "worker_started_at = NULL, child_pid = NULL, child_started_at = NULL "
        "WHERE id = ? AND status = 'running' AND attempt_uid = ?");
    Binder b(update);
    b.int64(requeue.attempt_no);
    b.int64(requeue.run_index);
    b.text(requeue.reason);
    b.blob("");
    b.int64(requeue.run_id);
    b.text(requeue.attempt_uid);
    return update.exec() == 1;
  });
}

Result<int> prune_history(Database& db, std::int64_t task_id, int keep) {
  return guarded(db, [&]() -> Result<int> {
    static const std::string sql = pruned_runs(1, 2);
    auto prune = db.cached(sql);
    prune.bind(1, task_id);
    prune.bind(2, keep);
    return static_cast<int>(prune.exec());
  });
}

Result<int> prune_runs_before(Database& db, Time cutoff, int batch) {
  return guarded(db, [&]() -> Result<int> {
    auto prune = db.cached(
        "DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE scheduled_at < ?1 AND "
        "status <> 'queued' AND status <> 'running' ORDER BY scheduled_at LIMIT ?2)");
    Binder b(prune);
    b.time(cutoff);
    b.int64(batch);
    return static_cast<int>(prune.exec());
  });
}

Result<bool> has_runs_before(Database& db, Time cutoff) {
  return guarded(db, [&]() -> Result<bool> {
    auto query = db.cached(
        "SELECT EXISTS (SELECT 1 FROM runs WHERE scheduled_at < ? AND status <> 'queued' AND status <> 'running')");
    Binder b(query);
    b.time(cutoff);
    return query.single_int64() != 0;
  });
}

Result<std::optional<Time>> oldest_run_slot(Database& db, std::int64_t task_id) {
  return guarded(db, [&]() -> Result<std::optional<Time>> {
    auto query = db.cached("SELECT min(scheduled_at) FROM runs WHERE task_id = ?");
    Binder(query).int64(task_id);
    if (!query.step()) return std::nullopt;
    return Columns(query).optional_time();
  });
}

namespace {

// The index a filter reads: one task's runs are few (its --keep-runs), so
// runs_task whatever else is asked; queued and running runs are few too, so
// their own partial index (SQLite would rather walk the whole table
// backwards in id order); else the planner picks, among runs_unusual,
// runs_unscheduled and runs_slot, or reads backwards in id order (succeeded
// and scheduled runs are most of them).
bool is_unusual(core::RunStatus status) {
  using core::RunStatus;
  return status != RunStatus::succeeded && status != RunStatus::queued && status != RunStatus::running;
}

bool only(const std::vector<core::RunStatus>& statuses, core::RunStatus status) {
  return statuses.size() == 1 && statuses.front() == status;
}

std::string_view index_for(const RunFilter& filter) {
  if (filter.task_id != 0) return "INDEXED BY runs_task ";
  if (only(filter.statuses, core::RunStatus::queued)) return "INDEXED BY runs_claimable ";
  if (only(filter.statuses, core::RunStatus::running)) return "INDEXED BY runs_running ";
  return "";
}

// The terms that select runs of any of `statuses` (one, the common case,
// as an equality); when all are rare, the WHERE clause of runs_unusual too.
std::string status_terms(const std::vector<core::RunStatus>& statuses) {
  if (statuses.empty()) return "";
  std::vector<std::string> quoted;
  for (auto status : statuses) quoted.push_back(fmt::format("'{}'", core::to_string(status)));
  std::string terms = quoted.size() == 1 ? fmt::format(" AND r.status = {}", quoted.front())
                                         : fmt::format(" AND r.status IN ({})", fmt::join(quoted, ", "));
  if (std::ranges::all_of(statuses, is_unusual))
    terms += " AND r.status <> 'succeeded' AND r.status <> 'queued' AND r.status <> 'running'";
  return terms;
}

// The filtered query with only the terms the filter uses. A rare status or
// trigger repeats the WHERE clause of its partial index, so that SQLite may
// use it. With a time window the runs come newest slot first, in
// runs_slot's order, so that no window sorts the history.
struct FilteredRuns {
  std::string sql;
  std::vector<std::int64_t> values;  // to bind, in order
};

FilteredRuns filtered_runs(const RunFilter& filter) {
  FilteredRuns query;
  std::string where = "TRUE";
  auto add_value = [&](std::string_view term, std::int64_t value) {
    where += term;
    query.values.push_back(value);
  };
  if (filter.task_id != 0) add_value(" AND r.task_id = ?", filter.task_id);
  where += status_terms(filter.statuses);
  if (filter.trigger) where += fmt::format(" AND r.trigger = '{}'", core::to_string(*filter.trigger));
  if (filter.trigger && *filter.trigger != core::Trigger::schedule) where += " AND r.trigger <> 'schedule'";
  if (filter.since) add_value(" AND r.scheduled_at >= ?", core::to_unix_ms(*filter.since));
  if (filter.until) add_value(" AND r.scheduled_at < ?", core::to_unix_ms(*filter.until));
  bool windowed = filter.since || filter.until;
  // The listing's order as a key: the next page starts right after the last
  // one's final run, even among the runs of one slot, whatever came since.
  if (filter.before != 0)
    add_value(windowed ? " AND (r.scheduled_at, r.id) < (SELECT scheduled_at, id FROM runs WHERE id = ?)" : " AND r.id < ?",
              filter.before);
  query.sql = fmt::format("SELECT {} FROM runs r {}JOIN tasks t ON t.id = r.task_id WHERE {} ORDER BY {}r.id DESC",
                          run_columns, index_for(filter), where,
                          windowed ? "r.scheduled_at DESC, " : "");
  if (filter.limit) {
    query.sql += " LIMIT ?";
    query.values.push_back(*filter.limit);
  }
  return query;
}

}  // namespace

std::string run_query_sql(const RunFilter& filter) { return filtered_runs(filter).sql; }

Result<void> for_each_run(Database& db, const RunFilter& filter, const RunVisitor& visit) {
  return guarded(db, [&]() -> Result<void> {
    auto filtered = filtered_runs(filter);
    auto query = db.prepare(filtered.sql);
    for (std::size_t i = 0; i < filtered.values.size(); ++i) query.bind(static_cast<int>(i + 1), filtered.values[i]);
    while (query.step()) {
      TRY(visit(run_from(Columns(query))));
    }
    return {};
  });
}

Result<std::vector<RunRecord>> list_runs(Database& db, std::int64_t task_id, int limit) {
  std::vector<RunRecord> runs;
  TRY(for_each_run(db, {.task_id = task_id, .limit = limit}, [&](const RunRecord& run) -> Result<void> {
    runs.push_back(run);
    return {};
  }));
  return runs;
}

Result<std::optional<RunRecord>> find_run(Database& db, std::int64_t run_id) {
  return guarded(db, [&]() -> Result<std::optional<RunRecord>> {
    auto query = db.prepare(fmt::format("SELECT {} FROM runs r JOIN tasks t ON t.id = r.task_id WHERE r.id = ?", run_columns));
    query.bind(1, static_cast<std::int64_t>(run_id));
    if (!query.step()) return std::optional<RunRecord>();
    return std::optional<RunRecord>(run_from_row(query));
  });
}

Result<std::string> run_output(Database& db, std::int64_t run_id) {
  return guarded(db, [&]() -> Result<std::string> {
    auto query = db.prepare("SELECT output FROM runs WHERE id = ?");
    query.bind(1, static_cast<std::int64_t>(run_id));
    if (!query.step()) return std::string();
    return std::string(query.query().text(0));
  });
}

Result<std::optional<StoredOutput>> stored_output(Database& db, std::int64_t run_id) {
  return guarded(db, [&]() -> Result<std::optional<StoredOutput>> {
    auto query = db.prepare("SELECT status, output, output_truncated FROM runs WHERE id = ?");
    query.bind(1, static_cast<std::int64_t>(run_id));
    if (!query.step()) return std::optional<StoredOutput>();
    Columns c(query);
    auto status = core::parse_run_status(c.text()).value_or(core::RunStatus::failed);
    auto output = c.text();
    return std::optional<StoredOutput>(StoredOutput{status, std::move(output), c.boolean()});
  });
}

Result<Upcoming> upcoming_after(Database& db, Time now, std::string_view host) {
  return guarded(db, [&]() -> Result<Upcoming> {
    // One round trip, three index probes: tasks_due answers the first in
    // O(log n), runs_claimable the second, runs_running the third. The
    // first is ORDER BY ... LIMIT 1, not min(): PostgreSQL's generic plan
    // of min() over the partial index read every later entry (0.6 ms at
    // 1 000 tasks, at every pass of every loop).
    auto query = db.cached(
        "SELECT (SELECT next_run_at FROM tasks WHERE next_run_at > ?1 AND next_run_at IS NOT NULL AND paused = 0 "
        "AND disabled_until_update = 0 ORDER BY next_run_at LIMIT 1), "
        "(SELECT min(r.not_before) FROM runs r JOIN tasks t ON t.id = r.task_id WHERE r.status = 'queued' "
        "AND r.not_before > ?1 AND t.paused = 0 AND (t.on_host = '' OR t.on_host = ?2)), "
        "(SELECT min(lease_expires_at) FROM runs WHERE status = 'running')");
    Binder b(query);
    b.time(now);
    b.text(host);
    query.step();
    Columns c(query);
    Upcoming upcoming;
    upcoming.next_due = c.optional_time();
    upcoming.next_claimable = c.optional_time();
    upcoming.earliest_lease_end = c.optional_time();
    return upcoming;
  });
}

Result<std::int64_t> data_version(Database& db) {
  return guarded(db, [&]() -> Result<std::int64_t> { return db.connection().data_version(); });
}

}  // namespace taskd::store
