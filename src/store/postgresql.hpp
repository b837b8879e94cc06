#pragma once
// The PostgreSQL store: a libpq connection whose every wait has a deadline,
// so that a hung server or network never hangs taskd. Tables live in the
// schema "taskd" (created if missing), migrated from schema-postgresql.sql.
#include <memory>
#include <string>

#include "store/connection.hpp"
#include "store/database.hpp"

namespace taskd::store {

std::unique_ptr<Connection> open_postgresql(const std::string& uri, const OpenOptions& options);

// The schema version this taskd writes to a server (schema-postgresql.sql).
int postgresql_schema_version();

// The connection's socket, and whether another connection's commit was
// announced on it since the last call (LISTEN taskd). For the loop's wait.
int notification_socket(Connection& connection);
bool take_notifications(Connection& connection);
// How many commits of other connections were announced so far: the
// counterpart of SQLite's PRAGMA data_version.
std::int64_t notifications_seen(Connection& connection);

}  // namespace taskd::store
