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

// A query of taskd's as the server is sent it ($N parameters, no index
// hints): the plan tests PREPARE it by name.
std::string postgresql_sql(std::string_view sql);

}  // namespace taskd::store
