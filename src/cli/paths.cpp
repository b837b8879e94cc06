#include <cstdlib>

#include "cli/context.hpp"

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

fs::path Context::db_path() const { return default_db_path(db_option); }

core::Result<store::Database> Context::open_db(store::IfMissing if_missing) const {
  return store::Database::open(db_path(), {.if_missing = if_missing});
}

core::Result<std::optional<core::Seconds>> optional_duration(const std::string& text, std::string_view option) {
  if (text.empty()) return std::optional<core::Seconds>();
  auto parsed = core::parse_duration(text);
  if (!parsed) return core::fail(core::ErrorKind::bad_input, std::string(option) + ": " + parsed.error().message);
  return std::optional<core::Seconds>(*parsed);
}

}  // namespace taskd::cli
