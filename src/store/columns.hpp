#pragma once
// A query in use, read column by column and bound parameter after parameter
// with taskd's types (times as Unix ms, durations as seconds, NULL as none).
// Only store/*.cpp include this.
#include <cstdint>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/duration.hpp"
#include "core/time.hpp"
#include "store/connection.hpp"

namespace taskd::store {

// A query of the connection's cache (borrowed) or made for one use (owned).
// It is reset when the handle goes away, so that a query read only in part
// neither keeps a read snapshot open (which would hide other processes'
// commits) nor holds the connection.
class Statement {
 public:
  explicit Statement(Query& cached) : query_(&cached) {}
  explicit Statement(std::unique_ptr<Query> owned) : owned_(std::move(owned)), query_(owned_.get()) {}
  ~Statement() {
    if (query_) query_->reset();
  }
  Statement(Statement&& other) noexcept : owned_(std::move(other.owned_)), query_(other.query_) {
    other.query_ = nullptr;
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;

  void bind(int i, std::int64_t value) { query_->bind_int64(i, value); }
  void bind(int i, int value) { query_->bind_int64(i, value); }
  void bind(int i, std::string_view value) { query_->bind_text(i, value); }
  bool step() { return query_->step(); }
  // Runs a statement that returns no row; the rows it changed.
  std::int64_t exec() {
    while (query_->step()) {
    }
    return query_->changes();
  }
  // The first column of the first row, as an integer (0 without a row);
  // the query is run to its end.
  std::int64_t single_int64() {
    std::int64_t value = step() ? query_->int64(0) : 0;
    while (step()) {
    }
    return value;
  }
  Query& query() const { return *query_; }

 private:
  std::unique_ptr<Query> owned_;
  Query* query_;
};

// Reads the columns of the current row in order.
class Columns {
 public:
  explicit Columns(const Query& row, int first = 0) : row_(row), next_(first) {}
  explicit Columns(const Statement& statement) : row_(statement.query()) {}

  std::int64_t int64() { return row_.int64(next_++); }
  int int32() { return static_cast<int>(int64()); }
  bool boolean() { return int64() != 0; }
  std::string text() { return std::string(row_.text(next_++)); }
  core::Time time() { return core::from_unix_ms(int64()); }
  std::optional<std::int64_t> optional_int64() {
    int i = next_++;
    if (row_.is_null(i)) return std::nullopt;
    return row_.int64(i);
  }
  std::optional<core::Time> optional_time() {
    auto value = optional_int64();
    if (!value) return std::nullopt;
    return core::from_unix_ms(*value);
  }

 private:
  const Query& row_;
  int next_ = 0;
};

// Binds parameters 1, 2, ... in order.
class Binder {
 public:
  explicit Binder(Statement& statement) : query_(statement.query()) {}

  void null() { query_.bind_null(++next_); }
  void int64(std::int64_t value) { query_.bind_int64(++next_, value); }
  void text(std::string_view value) { query_.bind_text(++next_, value); }
  void blob(std::string_view value) { query_.bind_blob(++next_, value); }
  void seconds(core::Seconds value) { int64(value.count()); }
  void fractional_seconds(core::Millis value) {
    if (value % core::Seconds{1} == core::Millis{0}) return seconds(std::chrono::duration_cast<core::Seconds>(value));
    query_.bind_real(++next_, static_cast<double>(value.count()) / 1000);
  }
  void time(core::Time value) { int64(core::to_unix_ms(value)); }
  void time(const std::optional<core::Time>& value) { value ? time(*value) : null(); }
  template <class T>
  void optional_int(const std::optional<T>& value) {
    value ? int64(*value) : null();
  }
  // A list of ids as a PostgreSQL array ('{1,2,3}'), for = ANY(CAST(? AS bigint[])).
  void id_array(const std::vector<std::int64_t>& ids) { text(fmt::format("{{{}}}", fmt::join(ids, ","))); }

 private:
  Query& query_;
  int next_ = 0;
};

}  // namespace taskd::store
