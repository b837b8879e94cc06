#pragma once
// The SQLite store: a file opened with SQLiteCpp, queried on SQLite's C API.
// Only store/*.cpp (and the store's tests and benchmarks, which look at the
// file itself) include this; the rest of taskd sees store/database.hpp.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <filesystem>
#include <memory>

#include "store/connection.hpp"
#include "store/database.hpp"

namespace taskd::store {

// Opens (creating or migrating) the file at `path`, or an empty database in
// memory standing in for a missing one.
std::unique_ptr<Connection> open_sqlite(const std::filesystem::path& path, const OpenOptions& options);

// Refuses a database file that someone else could write or swap (see
// check_safe_to_run): the file SQLite holds open, the path it was opened
// by, and the path the user named, which must lead to that same file.
core::Result<void> check_opened_file_safe(const Database& db);

// The SQLite connection of a database on a file (tests and benchmarks).
SQLite::Database& sqlite_handle(Database& db);

}  // namespace taskd::store
