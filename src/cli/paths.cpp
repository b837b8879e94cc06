#include <cstdlib>
#include <fmt/format.h>

#include "cli/context.hpp"
#include "store/location.hpp"

namespace taskd::cli {

namespace fs = std::filesystem;

fs::path default_db_path(const std::string& db_option) {
  if (!db_option.empty()) return db_option;
  auto env = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value ? value : "";
  };
  if (auto db = env("TASKD_DB"); !db.empty()) return db;
  if (auto state = env("XDG_STATE_HOME"); !state.empty()) return fs::path(state) / "taskd" / "taskd.db";
  auto home = env("HOME");
  return fs::path(home.empty() ? "." : home) / ".local" / "state" / "taskd" / "taskd.db";
}

CLI::Validator non_empty_path() {
  return {[](const std::string& value) {
            return value.empty() ? std::string("empty (name a path, or leave the option out for its default)")
                                 : std::string();
          },
          ""};
}

fs::path Context::db_path() const { return default_db_path(db_option); }

namespace {

std::string_view clock_variable() {
  const char* value = std::getenv("TASKD_CLOCK");
  return value ? value : "";
}

}  // namespace

sched::ClockSource clock_source() {
  return clock_variable() == "host" ? sched::ClockSource::host : sched::ClockSource::server;
}

// On a server, the clock follows the server's from here on (see Clock).
core::Result<store::Database> Context::open_db(store::IfMissing if_missing, store::OlderSchema older_schema) const {
  if (auto source = clock_variable(); !source.empty() && source != "host" && source != "server")
    return core::fail(core::ErrorKind::usage,
                      fmt::format("TASKD_CLOCK=\"{}\": the clock is \"server\" (the default) or \"host\"", source));
  auto db = TRY(store::Database::open(
      db_path().string(), {.if_missing = if_missing, .older_schema = older_schema, .state_dir = state_dir}));
  TRY(sched::follow_server_clock(db, clock));
  return db;
}

core::Result<store::Database> Context::open_db_to_run() const {
  auto db = TRY(open_db(store::IfMissing::create));
  TRY(store::check_safe_to_run(db));
  return db;
}

core::Result<store::Database> Context::open_db_to_read() const {
  return open_db(store::IfMissing::use_empty, store::OlderSchema::refuse);
}

core::Result<store::Database> Context::open_existing_db(store::OlderSchema older_schema) const {
  auto path = db_path();
  if (store::is_server_uri(path.string())) return open_db(store::IfMissing::use_empty, older_schema);
  std::error_code error;
  bool found = std::filesystem::exists(path, error);
  if (error)
    return core::fail(core::ErrorKind::unavailable,
                      fmt::format("cannot look at the database {}: {}", path.string(), error.message()));
  if (!found) return core::fail(core::ErrorKind::unavailable, fmt::format("no database at {}", path.string()));
  return open_db(store::IfMissing::use_empty, older_schema);
}

void add_keep_days_option(CLI::App& command, int& keep_days) {
  command.add_option("--keep-days", keep_days, "Delete runs whose slot is older than N days (default: keep)");
}

core::Result<std::optional<sched::Retention>> retention_of(int keep_days) {
  if (keep_days < 0) return core::fail(core::ErrorKind::usage, "--keep-days must be a number of days, at least 1");
  if (keep_days == 0) return std::optional<sched::Retention>();
  return std::optional<sched::Retention>(sched::Retention{.keep = std::chrono::days{keep_days}});
}

void add_host_id_option(CLI::App& command, std::string& host_id) {
  command.add_option("--host-id", host_id,
                     "This taskd's host name on a shared database: tasks added --on-host ID run here (default: the "
                     "hostname)");
}

core::Result<std::string> host_id_of(const std::string& host_id) {
  if (host_id.empty()) return host_id;
  auto valid = core::validate_host_id(host_id);
  if (!valid) return core::fail(core::ErrorKind::bad_input, "--host-id: " + valid.error().message);
  return valid;
}

namespace {

constexpr core::Seconds default_lease{30};
constexpr core::Seconds shortest_lease{2};

}  // namespace

void add_containment_option(CLI::App& command, std::string& containment) {
  command.add_option("--containment", containment,
                     "How a run's descendants are kept with it: auto (a cgroup where taskd can make one, else "
                     "subreaper), cgroup, or subreaper (default: auto)");
}

core::Result<exec::Containment> containment_of(const std::string& containment) {
  return exec::parse_containment(containment.empty() ? "auto" : containment);
}

void add_lease_option(CLI::App& command, std::string& lease) {
  command.add_option("--lease", lease,
                     "On a server: a run's lease lasts this long past each renewal, plus its kill grace; a run "
                     "unrenewed for half of it is ended by its own taskd (default: 30s)");
}

core::Result<std::optional<core::Millis>> lease_of(const std::string& lease, const store::Database& db) {
  auto given = TRY(optional_duration(lease, "--lease"));
  if (db.file()) {
    if (given)
      return core::fail(core::ErrorKind::usage,
                        "--lease is for a server: on a SQLite file, one machine's, a run's lease is its deadline "
                        "plus its kill grace");
    return std::optional<core::Millis>();
  }
  if (given && *given < shortest_lease)
    return core::fail(core::ErrorKind::usage,
                      fmt::format("--lease must be at least {}", core::format_duration(shortest_lease)));
  return std::optional<core::Millis>(given.value_or(default_lease));
}

core::Result<std::optional<core::Seconds>> optional_duration(const std::string& text, std::string_view option) {
  if (text.empty()) return std::optional<core::Seconds>();
  auto parsed = core::parse_duration(text);
  if (!parsed) return core::fail(core::ErrorKind::bad_input, std::string(option) + ": " + parsed.error().message);
  return std::optional<core::Seconds>(*parsed);
}

}  // namespace taskd::cli
