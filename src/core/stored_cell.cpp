#include "core/stored_cell.hpp"

namespace taskd::core {
namespace {

// A value is quoted in a problem with at most this many bytes.
constexpr std::size_t quoted_most = 40;

}  // namespace

std::unexpected<Error> malformed_value(std::string_view what, std::string_view value) {
  bool cut = value.size() > quoted_most;
  return fail(ErrorKind::bad_input, fmt::format("{}: \"{}{}\"", what, value.substr(0, quoted_most), cut ? "..." : ""));
}

std::unexpected<Error> out_of_range(std::int64_t value, std::string_view range) {
  return fail(ErrorKind::bad_input, fmt::format("{} is not {}", value, range));
}

Result<std::int64_t> stored_integer(const StoredCell& c) {
  if (!c.is_integer()) return malformed_value("not an integer", c.text());
  return c.integer();
}

Result<bool> stored_flag(const StoredCell& c) { return TRY(stored_integer(c)) != 0; }

Result<std::string> stored_text(const StoredCell& c) { return std::string(c.text()); }

Result<Seconds> stored_duration(const StoredCell& c) {
  auto seconds = TRY(stored_integer(c));
  if (seconds < 0 || seconds > longest_duration.count())
    return out_of_range(seconds, "a duration from 0 to 10 years in seconds");
  return Seconds{seconds};
}

}  // namespace taskd::core
