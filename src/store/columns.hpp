#pragma once
// Reading a row column by column and binding parameters one after another,
// with taskd's types (times as Unix ms, durations as seconds, NULL as none).
#include <SQLiteCpp/Statement.h>
#include <cmath>
#include <optional>
#include <string>

#include "core/duration.hpp"
#include "core/time.hpp"

namespace taskd::store {

class Columns {
 public:
  explicit Columns(SQLite::Statement& row) : row_(row) {}

  std::int64_t int64() { return row_.getColumn(next_++).getInt64(); }
  int int32() { return row_.getColumn(next_++).getInt(); }
  bool boolean() { return int64() != 0; }
  std::string text() { return row_.getColumn(next_++).getString(); }
  core::Seconds seconds() { return core::Seconds{int64()}; }
  core::Time time() { return core::from_unix_ms(int64()); }
  // Seconds that may carry milliseconds as a fraction (a REAL value).
  core::Millis fractional_seconds() {
    auto column = row_.getColumn(next_++);
    if (column.isInteger()) return core::Seconds{column.getInt64()};
    return core::Millis{std::llround(column.getDouble() * 1000)};
  }
  std::optional<std::string> optional_text() {
    auto column = row_.getColumn(next_++);
    if (column.isNull()) return std::nullopt;
    return column.getString();
  }
  std::optional<std::int64_t> optional_int64() {
    auto column = row_.getColumn(next_++);
    if (column.isNull()) return std::nullopt;
    return column.getInt64();
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
  SQLite::Statement& row_;
  int next_ = 0;
};

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
