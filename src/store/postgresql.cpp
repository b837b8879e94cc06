#include "store/postgresql.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <libpq-fe.h>
#include <poll.h>
#include <unistd.h>
#include <vector>

#include "taskd_schema_postgresql_sql.hpp"
#include "store/migrations.hpp"

namespace taskd::store {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// 'task' in ASCII: the advisory lock every write transaction holds (shared
// by those of WriteScope::rows), and the one the migrations hold (plus one).
constexpr std::int64_t write_lock = 0x7461736b;
constexpr std::int64_t migration_lock = write_lock + 1;
// How long taskd waits for a connection when the URI sets no connect_timeout.
constexpr milliseconds default_connect_timeout{10000};
constexpr unsigned bytea_oid = 17, bool_oid = 16, int8_oid = 20, int2_oid = 21, int4_oid = 23, float4_oid = 700,
                   float8_oid = 701, numeric_oid = 1700;

// SQLite's parameters (? and ?N) as PostgreSQL's ($N), and SQLite's index
// hints (INDEXED BY name) left out: PostgreSQL's planner takes no hints.
struct Translated {
  std::string sql;
  int parameters = 0;
};

Translated translate(std::string_view sql) {
  Translated out;
  bool quoted = false;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    char c = sql[i];
    if (c == '\'') quoted = !quoted;
    if (!quoted && sql.substr(i).starts_with("INDEXED BY ")) {
      i = sql.find(' ', i + 11);  // the index's name ends at the next space
      if (i == std::string_view::npos) break;
      continue;
    }
    if (quoted || c != '?') {
      out.sql += c;
      continue;
    }
    int number = 0;
    while (i + 1 < sql.size() && sql[i + 1] >= '0' && sql[i + 1] <= '9') number = number * 10 + (sql[++i] - '0');
    if (number == 0) number = out.parameters + 1;  // as SQLite numbers a bare ?
    out.parameters = std::max(out.parameters, number);
    out.sql += fmt::format("${}", number);
  }
  return out;
}

// The SQLSTATE classes that mean the server cannot serve us now: connection
// (08), resources (53), operator intervention (57), authorization (28),
// permission (42501), a missing database (3D000), a deadlock (40P01: the
// server rolled this transaction back to break a cycle of waits among
// hosts, which the next try does not meet), a server that takes no writes
// (25006: a standby, or a primary demoted by a failover; the next
// connection may reach the new primary), and this session ended by the
// server for sitting idle in a transaction past its bound (25P03: this
// taskd was frozen or starved of CPU).
constexpr std::string_view read_only_server = "25006";
constexpr std::string_view idle_session_ended = "25P03";
// A lock another session held past lock_timeout: busy, not out of reach.
constexpr std::string_view lock_not_available = "55P03";

// TCP keepalives on both ends of taskd's sessions (libpq's may be set
// otherwise in the URI): an idle connection whose other end went away
// without a word (a machine paused, or cut off) is given up in about 10 s
// rather than the system's two hours, so that abandoned sessions do not
// pile up towards max_connections, and a server that went away is noticed
// by a taskd that only listens.
constexpr std::string_view server_keepalives =
    "-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=1 -c tcp_keepalives_count=5";
constexpr std::array<const char*, 3> client_keepalive_keywords{"keepalives_idle", "keepalives_interval",
                                                               "keepalives_count"};
constexpr std::array<const char*, 3> client_keepalive_values{"5", "1", "5"};

// The payload of the notice that a run was asked to stop (announce_stop);
// a commit's own notice has none.
constexpr std::string_view stop_payload = "stop";
bool is_unavailable(std::string_view state) {
  return state.starts_with("08") || state.starts_with("53") || state.starts_with("57") || state.starts_with("28") ||
         state == "42501" || state == "3D000" || state == "40P01" || state == read_only_server ||
         state == idle_session_ended;
}

// " -c taskd.host=NAME": this machine's name, from which the server's
// counter_shard seeks a transaction's shard (schema-postgresql.sql); none
// for a name with a character the options string would have to escape.
std::string host_option() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') return "";
  std::string_view host(name.data());
  auto plain = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'; };
  if (!std::ranges::all_of(host, plain)) return "";
  return fmt::format(" -c taskd.host={}", host);
}

// libpq's message on one line: its lines (a hint is indented with a tab)
// joined with a space.
std::string one_line(std::string_view message) {
  std::string out;
  bool space = false;
  for (char c : message) {
    if (c == '\n' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

class PgConnection;

class PgQuery final : public Query {
 public:
  PgQuery(PgConnection& connection, const std::string& sql, std::string name)
      : connection_(connection), name_(std::move(name)) {
    auto translated = translate(sql);
    sql_ = std::move(translated.sql);
    values_.resize(static_cast<std::size_t>(translated.parameters));
    nulls_.assign(values_.size(), true);
    formats_.assign(values_.size(), 0);
  }
  ~PgQuery() override { reset(); }
  PgQuery(const PgQuery&) = delete;
  PgQuery& operator=(const PgQuery&) = delete;

  void bind_null(int i) override { set(i, {}, true, 0); }
  void bind_int64(int i, std::int64_t value) override { set(i, std::to_string(value), false, 0); }
  void bind_real(int i, double value) override { set(i, fmt::format("{:.17g}", value), false, 0); }
  void bind_text(int i, std::string_view value) override { set(i, std::string(value), false, 0); }
  void bind_blob(int i, std::string_view value) override { set(i, std::string(value), false, 1); }
  bool step() override;
  std::int64_t changes() const override { return changes_; }
  void reset() noexcept override;

  std::int64_t int64(int i) const override {
    const char* value = PQgetvalue(row_, 0, i);
    if (PQftype(row_, i) == bool_oid) return value[0] == 't';
    return std::strtoll(value, nullptr, 10);
  }
  double real(int i) const override { return std::strtod(PQgetvalue(row_, 0, i), nullptr); }
  ValueType type(int i) const override {
    if (PQgetisnull(row_, 0, i)) return ValueType::null;
    auto type = PQftype(row_, i);
    if (type == int8_oid || type == int4_oid || type == int2_oid || type == bool_oid) return ValueType::integer;
    if (type == float8_oid || type == float4_oid || type == numeric_oid) return ValueType::real;
    return type == bytea_oid ? ValueType::blob : ValueType::text;
  }
  int column_count() const override { return PQnfields(row_); }
  std::string_view column_name(int i) const override { return PQfname(row_, i); }
  std::string_view text(int i) const override {
    if (PQftype(row_, i) != bytea_oid) return {PQgetvalue(row_, 0, i), static_cast<std::size_t>(PQgetlength(row_, 0, i))};
    std::size_t length = 0;
    unsigned char* bytes = PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(row_, 0, i)), &length);
    bytes_.assign(reinterpret_cast<const char*>(bytes), length);
    PQfreemem(bytes);
    return bytes_;
  }

 private:
  friend class PgConnection;
  void set(int i, std::string value, bool null, int format) {
    auto at = static_cast<std::size_t>(i - 1);
    if (at >= values_.size()) throw Failure(FailureKind::internal, fmt::format("no parameter {} in: {}", i, sql_));
    values_[at] = std::move(value);
    nulls_[at] = null;
    formats_[at] = format;
  }
  void clear_row() {
    if (row_) PQclear(row_);
    row_ = nullptr;
  }

  PgConnection& connection_;
  std::string sql_;
  std::string name_;  // empty: the unnamed statement, for one use
  int prepared_generation_ = -1;
  std::vector<std::string> values_;
  std::vector<bool> nulls_;
  std::vector<int> formats_;
  PGresult* row_ = nullptr;
  bool running_ = false;
  std::int64_t changes_ = 0;
  mutable std::string bytes_;
};

class PgConnection final : public Connection {
 public:
  PgConnection(std::string uri, std::string display, milliseconds reply_timeout, SessionBounds bounds)
      : uri_(std::move(uri)), display_(std::move(display)), reply_timeout_(reply_timeout), bounds_(bounds) {
    connect();
  }
  ~PgConnection() override {
    if (conn_) PQfinish(conn_);
  }
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  Dialect dialect() const override { return Dialect::postgresql; }
  std::unique_ptr<Query> prepare(const std::string& sql, bool cached) override {
    return std::make_unique<PgQuery>(*this, sql, cached ? fmt::format("taskd_{}", ++statements_) : std::string());
  }
  void begin_write(WriteScope scope) override { begin(write_lock, scope == WriteScope::rows); }
  // A transaction holding the advisory lock `lock` (`shared`ly) until it ends.
  void begin(std::int64_t lock, bool shared = false) {
    start_transaction(fmt::format("BEGIN; SELECT pg_advisory_xact_lock{}({})", shared ? "_shared" : "", lock));
  }
  // A transaction whose lock waits only the reply timeout bounds: another
  // host's migration, and the old hosts' locks a migration waits behind.
  void begin_unbounded(std::int64_t lock) {
    start_transaction(fmt::format("BEGIN; SET LOCAL lock_timeout = 0; SELECT pg_advisory_xact_lock({})", lock));
  }
  // A lock that was not had (busy) leaves the BEGIN's transaction open and
  // aborted on the server: it is rolled back, or the session's next
  // statements would all fail.
  void start_transaction(const std::string& sql) {
    try {
      run(sql);
    } catch (...) {
      rollback();
      throw;
    }
    in_transaction_ = true;
  }
  void commit() override {
    run("COMMIT");
    in_transaction_ = false;
  }
  void rollback() noexcept override {
    in_transaction_ = false;
    if (!conn_ || PQstatus(conn_) != CONNECTION_OK) return;
    if (reconnect_) return drop();  // the transaction ends with its connection
    try {
      run("ROLLBACK");
    } catch (const Failure&) {
      drop();  // a connection that cannot roll back is given up
    }
  }

  // Runs `sql` (one or more statements, no parameters) to the end.
  void run(const std::string& sql) {
    usable();
    if (!PQsendQuery(conn_, sql.c_str())) throw lost("cannot send a query");
    flush();
    finish_results();
  }

  void send(PgQuery& query) {
    usable();
    if (!query.name_.empty() && query.prepared_generation_ != generation_) {
      if (!PQsendPrepare(conn_, query.name_.c_str(), query.sql_.c_str(), static_cast<int>(query.values_.size()), nullptr))
        throw lost("cannot send a query");
      flush();
      finish_results();
      query.prepared_generation_ = generation_;
    }
    std::vector<const char*> values(query.values_.size());
    std::vector<int> lengths(query.values_.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] = query.nulls_[i] ? nullptr : query.values_[i].data();
      lengths[i] = static_cast<int>(query.values_[i].size());
    }
    auto count = static_cast<int>(values.size());
    int sent = query.name_.empty()
                   ? PQsendQueryParams(conn_, query.sql_.c_str(), count, nullptr, values.data(), lengths.data(),
                                       query.formats_.data(), 0)
                   : PQsendQueryPrepared(conn_, query.name_.c_str(), count, values.data(), lengths.data(),
                                         query.formats_.data(), 0);
    if (!sent) throw lost("cannot send a query");
    flush();
    PQsetSingleRowMode(conn_);  // a listing of a million rows holds one at a time
  }

  // Sends what libpq still holds of a query: on a nonblocking connection a
  // query larger than the socket's buffer (copy-db's batches) is sent in
  // parts, as the server reads it, each wait bounded by the reply timeout.
  void flush() {
    while (true) {
      int left = PQflush(conn_);
      if (left == 0) return;
      if (left < 0) throw lost("cannot send a query");
      wait_for(POLLIN | POLLOUT, Clock::now() + reply_timeout_, reply_timeout_);
      if (!PQconsumeInput(conn_)) throw lost("the connection broke");
    }
  }

  // The next result of the query in flight, waiting at most the reply
  // timeout for each part of it; none when the query is done.
  PGresult* next_result() {
    if (!conn_) return nullptr;  // given up: nothing more comes
    while (PQisBusy(conn_)) {
      wait_for(POLLIN, Clock::now() + reply_timeout_, reply_timeout_);
      if (!PQconsumeInput(conn_)) throw lost("the connection broke");
    }
    return PQgetResult(conn_);
  }

  // Reads the results of the query in flight to the end; throws the first error.
  void finish_results() {
    std::optional<Failure> failure;
    while (PGresult* result = next_result()) {
      try {
        fail_on_error(result);
      } catch (const Failure& e) {
        if (!failure) failure = e;
      }
      PQclear(result);
    }
    if (failure) throw *failure;
  }

  void fail_on_error(const PGresult* result) {
    auto status = PQresultStatus(result);
    if (status != PGRES_FATAL_ERROR && status != PGRES_BAD_RESPONSE) return;
    const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
    std::string_view code = state ? state : "";
    std::string message = fmt::format("database {}: {}", display_, one_line(PQresultErrorMessage(result)));
    if (code == "23505") throw Failure(FailureKind::duplicate, message);
    if (code == lock_not_available)
      throw Failure(FailureKind::busy, fmt::format("{} (another session held a lock for {} ms; try again)", message,
                                                   bounds_.lock_wait.count()));
    if (code == read_only_server) reconnect_ = true;
    if (is_unavailable(code) || PQstatus(conn_) != CONNECTION_OK) throw Failure(FailureKind::unavailable, message);
    throw Failure(FailureKind::internal, message);
  }

  // Gives the connection up (a timeout, a broken socket): the next query
  // connects again, and prepares its statements again.
  void drop() noexcept {
    if (conn_) PQfinish(conn_);
    conn_ = nullptr;
    in_transaction_ = false;
  }
  // LISTEN taskd from the first call on (again on every new connection).
  // After the connection was given up: -1, until a query makes it again.
  int notice_socket() override {
    if (!listening_) {
      run("LISTEN taskd");
      listening_ = true;
    }
    return conn_ ? PQsocket(conn_) : -1;
  }
  // A Unix socket is as safe as its directory; over TCP only verify-full
  // both encrypts and checks that the server is the one named.
  std::string transport_warning() override {
    usable();
    const char* host = PQhost(conn_);
    if (!host || !*host || host[0] == '/' || host[0] == '@') return {};
    std::string sslmode = "prefer";
    PQconninfoOption* options = PQconninfo(conn_);
    for (auto* option = options; option && option->keyword; ++option)
      if (std::string_view(option->keyword) == "sslmode" && option->val) sslmode = option->val;
    PQconninfoFree(options);
    if (sslmode == "verify-full") return {};
    return fmt::format("the connection to {} is TCP {} (sslmode={}): whoever is on the way can read or change "
                       "what taskd runs; use sslmode=verify-full",
                       host, PQsslInUse(conn_) ? "with TLS but no check of the server's name" : "without TLS",
                       sslmode);
  }
  void limit_waits(WaitLimit limit) override { wait_limit_ = std::move(limit); }
  // Called outside a transaction. A new connection takes the bounds with
  // its options, at no cost; this one is told in one round trip.
  void bound_session(const SessionBounds& bounds) override {
    bounds_ = bounds;
    if (!conn_) return;
    try {
      run(fmt::format("SET lock_timeout = {}; SET idle_in_transaction_session_timeout = {}; SET tcp_user_timeout = {}",
                      bounds.lock_wait.count(), bounds.idle_in_transaction.count(), bounds.unacknowledged.count()));
    } catch (const Failure&) {
      drop();
    }
  }
  // A connection given up is not made again here: the caller's next query does.
  bool take_notices() override {
    if (!conn_) return false;
    PGconn* conn = conn_;
    if (!PQconsumeInput(conn)) {
      drop();  // the next query connects again; a look at the store is due
      ++notifications_;
      return true;
    }
    bool other = false;
    while (PGnotify* notify = PQnotifies(conn)) {
      bool own = notify->be_pid == PQbackendPID(conn);
      if (!own) other = true;
      if (!own && std::string_view(notify->extra) == stop_payload) ++stop_announcements_;
      PQfreemem(notify);
    }
    if (other) ++notifications_;
    return other;
  }
  void announce_stop() override {
    run(fmt::format("SELECT pg_notify('taskd', '{}')", stop_payload));
    ++stop_announcements_;
  }
  std::int64_t stop_announcements() const override { return stop_announcements_; }
  bool write_unless_locked(const std::string& sql, const std::function<void(Query&)>& bind) override {
    auto query = prepare(sql, false);
    bind(*query);
    while (query->step()) {
    }
    return true;
  }
  int stored_schema_version() override;
  std::string_view schema_sql() const override { return taskd_schema_postgresql_sql; }
  std::optional<std::filesystem::path> backup_path(int) const override { return std::nullopt; }
  void migrate_schema() override;
  // Listens from the first call on. The round trip first: a notice sent
  // before it (by a commit that returned before this call) is then read.
  std::int64_t data_version() override {
    notice_socket();
    run("SELECT 1");
    take_notices();
    return notifications_;
  }

 private:
  Failure lost(std::string_view what) {
    std::string message = fmt::format("database {}: {}: {}", display_, what, one_line(conn_ ? PQerrorMessage(conn_) : ""));
    drop();
    return Failure(FailureKind::unavailable, message);
  }

  // Waits for `events` on the socket until `deadline`, the end of `budget`,
  // or the wait limit, whichever comes first.
  void wait_for(short events, Clock::time_point deadline, milliseconds budget) {
    pollfd watched{PQsocket(conn_), events, 0};
    auto limit = wait_limit_ ? wait_limit_() : std::nullopt;
    bool limited = limit && *limit < deadline;
    if (limited) deadline = *limit;
    while (true) {
      auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        auto message =
            limited ? fmt::format("database {}: no answer from the server before the leases of the runs in "
                                  "flight had to be given up; gave the connection up", display_)
                    : fmt::format("database {}: no answer from the server within {} s; gave the connection up",
                                  display_, std::chrono::duration_cast<std::chrono::seconds>(budget).count());
        drop();
        throw Failure(FailureKind::unavailable, message);
      }
      int ready = ::poll(&watched, 1, static_cast<int>(left));
      if (ready > 0) return;
      if (ready < 0 && errno != EINTR) throw lost("cannot wait for the server");
    }
  }

  // A connection in use, or a new one: a connection given up, or to a
  // server that took no writes, is made again (outside a transaction only:
  // a transaction dies with its connection).
  void usable() {
    if (reconnect_ && !in_transaction_) {
      drop();
      reconnect_ = false;
    }
    if (conn_ && PQstatus(conn_) == CONNECTION_OK) return;
    if (in_transaction_) throw lost("the connection broke in a transaction");
    drop();
    connect();
  }

  // search_path: taskd's tables, unqualified. client_min_messages: the
  // server's notices ("schema taskd already exists, skipping") are not the
  // user's business; libpq would print them on stderr. jit: the claim's
  // estimated cost (its group-cap subplan, times the queued runs) passes
  // jit_above_cost once the queue is long, and compiling it took 30 ms to
  // 0.8 s of the server's CPU at every claim; taskd's statements read a few
  // rows each and never gain from it. Then the session's bounds, and the
  // keepalives.
  std::string session_options() const {
    return fmt::format(
        "-c search_path=taskd -c client_min_messages=warning -c jit=off -c lock_timeout={} "
        "-c idle_in_transaction_session_timeout={} -c tcp_user_timeout={} {}{}",
        bounds_.lock_wait.count(), bounds_.idle_in_transaction.count(), bounds_.unacknowledged.count(),
        server_keepalives, host_option());
  }

  void connect() {
    // The keywords before dbname are defaults the URI may override; those
    // after it override the URI.
    auto options = session_options();
    std::vector<const char*> keywords(client_keepalive_keywords.begin(), client_keepalive_keywords.end());
    std::vector<const char*> values(client_keepalive_values.begin(), client_keepalive_values.end());
    keywords.insert(keywords.end(), {"dbname", "options", "fallback_application_name", nullptr});
    values.insert(values.end(), {uri_.c_str(), options.c_str(), "taskd", nullptr});
    conn_ = PQconnectStartParams(keywords.data(), values.data(), 1);
    if (!conn_) throw Failure(FailureKind::unavailable, fmt::format("database {}: out of memory", display_));
    if (PQstatus(conn_) == CONNECTION_BAD) throw lost("cannot connect");
    auto budget = connect_timeout();
    auto deadline = Clock::now() + budget;
    for (auto polled = PGRES_POLLING_WRITING; polled != PGRES_POLLING_OK;) {
      if (polled == PGRES_POLLING_FAILED) throw lost("cannot connect");
      wait_for(polled == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline, budget);
      polled = PQconnectPoll(conn_);
    }
    if (PQsetnonblocking(conn_, 1) != 0) throw lost("cannot use the connection");
    ++generation_;
    if (listening_) run("LISTEN taskd");
  }

  milliseconds connect_timeout() const {
    PQconninfoOption* options = PQconninfo(conn_);
    milliseconds timeout = default_connect_timeout;
    for (auto* option = options; option && option->keyword; ++option) {
      if (std::strcmp(option->keyword, "connect_timeout") == 0 && option->val && std::atoi(option->val) > 0)
        timeout = std::chrono::seconds(std::atoi(option->val));
    }
    PQconninfoFree(options);
    return timeout;
  }

  std::string uri_;
  std::string display_;
  milliseconds reply_timeout_;
  SessionBounds bounds_;
  WaitLimit wait_limit_;
  PGconn* conn_ = nullptr;
  int generation_ = 0;  // counts connections: a statement prepared on an earlier one is prepared again
  int statements_ = 0;
  bool in_transaction_ = false;
  bool reconnect_ = false;  // the server took no writes: the next query connects again
  bool listening_ = false;
  std::int64_t notifications_ = 0;
  std::int64_t stop_announcements_ = 0;
};

bool PgQuery::step() {
  clear_row();
  if (!running_) {
    connection_.send(*this);
    running_ = true;
    changes_ = 0;
  }
  PGresult* result = connection_.next_result();
  if (!result) {
    running_ = false;
    return false;
  }
  auto status = PQresultStatus(result);
  if (status == PGRES_SINGLE_TUPLE) {
    row_ = result;
    return true;
  }
  if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) changes_ = std::atoll(PQcmdTuples(result));
  try {
    connection_.fail_on_error(result);
  } catch (...) {
    PQclear(result);
    reset();
    throw;
  }
  PQclear(result);
  connection_.finish_results();
  running_ = false;
  return false;
}

void PgQuery::reset() noexcept {
  clear_row();
  if (running_) {
    running_ = false;
    try {
      connection_.finish_results();  // the rows not read
    } catch (const Failure&) {
      connection_.drop();
    }
  }
  nulls_.assign(values_.size(), true);
  formats_.assign(values_.size(), 0);
}

// The first column of the first row of `sql`, or none.
std::optional<std::string> value_of(PgConnection& connection, const std::string& sql) {
  auto query = connection.prepare(sql, false);
  std::optional<std::string> value;
  if (query->step() && !query->is_null(0)) value = std::string(query->text(0));
  return value;
}

// The schema's version (0: no taskd tables yet); a schema "taskd" that holds
// other tables is refused. pg_tables is read with the statement's snapshot
// (to_regclass() looks in the session's catalog cache, which taking an
// advisory lock does not refresh, and missed the tables another host had
// just committed), and both counts in one statement: read apart, a host's
// migration committed between them made its tables look foreign.
int schema_version_of(PgConnection& connection, const std::string& display) {
  auto counts = connection.prepare(
      "SELECT count(*) FILTER (WHERE tablename = 'meta'), count(*) FROM pg_tables WHERE schemaname = 'taskd'", false);
  counts->step();
  bool has_meta = counts->int64(0) > 0;
  auto tables = counts->int64(1);
  counts->reset();
  if (has_meta)
    return std::atoi(value_of(connection, "SELECT value FROM taskd.meta WHERE key = 'schema_version'").value_or("0").c_str());
  if (tables > 0)
    throw Failure(FailureKind::unavailable,
                  fmt::format("database {}: schema \"taskd\" holds tables that are not taskd's; use another database",
                              display));
  return 0;
}

// The schema version this taskd writes to a server.
int postgresql_schema_version() { return migrations(taskd_schema_postgresql_sql).back().version; }

// Under a transaction-level advisory lock: two hosts upgrading at once
// take turns, and the second finds the work done.
void migrate(PgConnection& connection, const std::string& display) {
  connection.begin_unbounded(migration_lock);
  try {
    connection.run("CREATE SCHEMA IF NOT EXISTS taskd");
    int version = schema_version_of(connection, display);
    for (const auto& step : migrations(taskd_schema_postgresql_sql)) {
      if (step.version <= version) continue;
      connection.run(std::string(step.sql));
      connection.run(fmt::format("UPDATE meta SET value = '{}' WHERE key = 'schema_version'", step.version));
    }
    connection.commit();
  } catch (...) {
    connection.rollback();
    throw;
  }
}

// Refuses a newer schema; gives a database with no schema yet this taskd's;
// one of an older schema is migrated, refused or left as `older_schema` says.
void bring_schema(PgConnection& connection, const std::string& display, OlderSchema older_schema) {
  int version = schema_version_of(connection, display);
  int current = postgresql_schema_version();
  if (version > current || (older_schema == OlderSchema::refuse && version > 0 && version < current))
    throw schema_refused(display, version, current);
  if (version == current || older_schema == OlderSchema::leave) return;
  migrate(connection, display);
}

int PgConnection::stored_schema_version() { return schema_version_of(*this, display_); }
void PgConnection::migrate_schema() { migrate(*this, display_); }

}  // namespace

std::string postgresql_sql(std::string_view sql) { return translate(sql).sql; }

std::unique_ptr<Connection> open_postgresql(const std::string& uri, const OpenOptions& options) {
  auto display = without_password(uri);
  auto reply_timeout = std::max(milliseconds(options.busy_timeout), milliseconds(30000));
  SessionBounds bounds{options.busy_timeout, options.busy_timeout};
  auto connection = std::make_unique<PgConnection>(uri, display, reply_timeout, bounds);
  bring_schema(*connection, display, options.older_schema);
  return connection;
}

}  // namespace taskd::store
