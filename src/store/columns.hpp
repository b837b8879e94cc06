#pragma once
// Reading a row column by column and binding parameters one after another,
// with taskd's types (times as Unix ms, durations as seconds, NULL as none).
// A row is read from a SQLiteCpp statement, or, where a listing reads a
// million rows, from a RawQuery on SQLite's C API: SQLiteCpp's Column
// objects cost more than the read itself.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>
#include <cmath>
#include <optional>
#include <sqlite3.h>
#include <string>
#include <string_view>

#include "core/duration.hpp"
#include "core/time.hpp"

namespace taskd::store {

// The columns of a SQLiteCpp statement's current row.
class StatementRow {
 public:
  StatementRow(SQLite::Statement& statement) : statement_(statement) {}  // NOLINT: converts, as Columns(query) reads
  std::int64_t int64(int i) const { return statement_.getColumn(i).getInt64(); }
  double real(int i) const { return statement_.getColumn(i).getDouble(); }
  bool is_null(int i) const { return statement_.isColumnNull(i); }
  bool is_integer(int i) const { return statement_.getColumn(i).isInteger(); }
  // Valid until the next step.
  std::string_view text(int i) const {
    auto column = statement_.getColumn(i);
    return {column.getText(), static_cast<std::size_t>(column.getBytes())};
  }

 private:
  SQLite::Statement& statement_;
};

// A query prepared on the connection's handle and stepped with SQLite's C
// API; an error throws SQLite::Exception, as SQLiteCpp does, for guarded().
class RawQuery {
 public:
  RawQuery(SQLite::Database& db, const std::string& sql) : db_(db.getHandle()) {
    check(sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &statement_, nullptr));
  }
  ~RawQuery() { sqlite3_finalize(statement_); }
  RawQuery(const RawQuery&) = delete;
  RawQuery& operator=(const RawQuery&) = delete;

  void bind(int i, std::string_view text) {
    check(sqlite3_bind_text(statement_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT));
  }
  void bind(int i, std::int64_t value) { check(sqlite3_bind_int64(statement_, i, value)); }
  // True with a row to read, false at the end.
  bool step() {
    int result = sqlite3_step(statement_);
    if (result == SQLITE_ROW) return true;
    if (result != SQLITE_DONE) check(result);
    return false;
  }

  std::int64_t int64(int i) const { return sqlite3_column_int64(statement_, i); }
  double real(int i) const { return sqlite3_column_double(statement_, i); }
  bool is_null(int i) const { return sqlite3_column_type(statement_, i) == SQLITE_NULL; }
  bool is_integer(int i) const { return sqlite3_column_type(statement_, i) == SQLITE_INTEGER; }
  std::string_view text(int i) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, i));
    return text ? std::string_view(text, static_cast<std::size_t>(sqlite3_column_bytes(statement_, i)))
                : std::string_view();
  }

 private:
  void check(int result) const {
    if (result != SQLITE_OK) throw SQLite::Exception(db_, result);
  }

  sqlite3* db_;
  sqlite3_stmt* statement_ = nullptr;
};

// Reads the columns of a row in order: from a StatementRow (Columns), or
// from a RawQuery (BasicColumns<const RawQuery&>).
template <class Row>
class BasicColumns {
 public:
  explicit BasicColumns(Row row) : row_(row) {}

  std::int64_t int64() { return row_.int64(next_++); }
  int int32() { return static_cast<int>(int64()); }
  bool boolean() { return int64() != 0; }
  std::string text() { return std::string(row_.text(next_++)); }
  core::Seconds seconds() { return core::Seconds{int64()}; }
  core::Time time() { return core::from_unix_ms(int64()); }
  // Seconds that may carry milliseconds as a fraction (a REAL value).
  core::Millis fractional_seconds() {
    int i = next_++;
    if (row_.is_integer(i)) return core::Seconds{row_.int64(i)};
    return core::Millis{std::llround(row_.real(i) * 1000)};
  }
  std::optional<std::string> optional_text() {
    int i = next_++;
    if (row_.is_null(i)) return std::nullopt;
    return std::string(row_.text(i));
  }
  std::optional<std::int64_t> optional_int64() {
    int i = next_++;
    if (row_.is_null(i)) return std::nullopt;
    return row_.int64(i);
  }
  std::optional<core::Seconds> optional_seconds() {
    auto value = optional_int64();
    if (!value) return std::nullopt;
    return core::Seconds{*value};
  }
  std::optional<core::Time> optional_time() {
    auto value = optional_int64();
    if (!value) return std::nullopt;
    return core::from_unix_ms(*value);
  }

 private:
  Row row_;
  int next_ = 0;
};

// Columns of a SQLiteCpp statement: Columns c(query).
using Columns = BasicColumns<StatementRow>;
using RawColumns = BasicColumns<const RawQuery&>;

class Binder {
 public:
  explicit Binder(SQLite::Statement& statement) : statement_(statement) {}

  void null() { statement_.bind(++next_); }
  void int64(std::int64_t value) { statement_.bind(++next_, static_cast<std::int64_t>(value)); }
  void text(std::string_view value) { statement_.bind(++next_, std::string(value)); }
  void blob(const std::string& value) { statement_.bind(++next_, value.data(), static_cast<int>(value.size())); }
  void seconds(core::Seconds value) { int64(value.count()); }
  void seconds(const std::optional<core::Seconds>& value) { value ? seconds(*value) : null(); }
  void fractional_seconds(core::Millis value) {
    if (value % core::Seconds{1} == core::Millis{0}) return seconds(std::chrono::duration_cast<core::Seconds>(value));
    statement_.bind(++next_, static_cast<double>(value.count()) / 1000);
  }
  void time(core::Time value) { int64(core::to_unix_ms(value)); }
  void time(const std::optional<core::Time>& value) { value ? time(*value) : null(); }
  template <class T>
  void optional_int(const std::optional<T>& value) {
    value ? int64(*value) : null();
  }

 private:
  SQLite::Statement& statement_;
  int next_ = 0;
};

}  // namespace taskd::store
