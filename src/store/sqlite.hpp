#pragma once
// SQLiteCpp behind the store: the connection's statement cache and the
// error a SQLite failure becomes. Only store/*.cpp (and the store's tests
// and benchmarks) include this; the rest of taskd sees store/database.hpp.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <filesystem>

#include "store/database.hpp"

namespace taskd::store {

// A prepared statement of the connection's cache, in use: it is reset when
// the handle goes away, so that a query read only in part never keeps a read
// snapshot open (which would hide other processes' commits).
class CachedStatement {
 public:
  explicit CachedStatement(SQLite::Statement& statement) : statement_(statement) {}
  ~CachedStatement() { statement_.tryReset(); }
  CachedStatement(const CachedStatement&) = delete;
  CachedStatement& operator=(const CachedStatement&) = delete;

  SQLite::Statement& operator*() const { return statement_; }
  SQLite::Statement* operator->() const { return &statement_; }

 private:
  SQLite::Statement& statement_;
};

// The error a SQLite failure becomes (see current_error).
core::Error error_from(const SQLite::Exception& e, const std::filesystem::path& path);

}  // namespace taskd::store
