#pragma once
// A column of a stored task row as the readers of its values see it, and
// the readers that the task fields (task_fields.hpp) and the store's row
// reader (store/task_row.cpp) share: each returns the value, or what is
// wrong with the one stored.
#include <cstdint>
#include <fmt/format.h>
#include <optional>
#include <string>
#include <string_view>

#include "core/duration.hpp"
#include "core/error.hpp"

namespace taskd::core {

// One column of the current row; the store reads it from its engine.
class StoredCell {
 public:
  virtual bool is_null() const = 0;
  virtual bool is_integer() const = 0;
  virtual std::int64_t integer() const = 0;  // when is_integer()
  virtual std::string_view text() const = 0;

 protected:
  ~StoredCell() = default;
};

// `what` is wrong with `value`: not a JSON array of strings: "{" (of a long
// value, its first 40 bytes and "...").
std::unexpected<Error> malformed_value(std::string_view what, std::string_view value);
// `value` is not `range`: "0 is not from 1 to 2147483647".
std::unexpected<Error> out_of_range(std::int64_t value, std::string_view range);

Result<std::int64_t> stored_integer(const StoredCell& c);
Result<bool> stored_flag(const StoredCell& c);
Result<std::string> stored_text(const StoredCell& c);
// Whole seconds from 0 to core::longest_duration.
Result<Seconds> stored_duration(const StoredCell& c);

// An integer from `least` to `most`, as a T.
template <class T, std::int64_t least, std::int64_t most>
Result<T> stored_integer_from(const StoredCell& c) {
  auto value = TRY(stored_integer(c));
  if (value < least || value > most) return out_of_range(value, fmt::format("from {} to {}", least, most));
  return static_cast<T>(value);
}

// A column that may be NULL (none), else read as `read` reads it.
template <auto read>
auto stored_optional(const StoredCell& c) -> Result<std::optional<typename decltype(read(c))::value_type>> {
  if (c.is_null()) return std::nullopt;
  return std::optional(TRY(read(c)));
}

// A column of names that `parse` reads ("skip", "cron").
template <auto parse>
auto stored_name(const StoredCell& c) -> decltype(parse(std::string_view())) {
  return parse(c.text());
}

}  // namespace taskd::core
