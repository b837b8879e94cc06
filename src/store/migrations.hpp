#pragma once
// A schema file's migrations: each "-- migrate: N" section brings a
// database at version N-1 to N.
#include <algorithm>
#include <charconv>
#include <string_view>
#include <vector>

namespace taskd::store {

struct Migration {
  int version;
  std::string_view sql;
};

inline std::vector<Migration> migrations(std::string_view schema) {
  constexpr std::string_view marker = "-- migrate: ";
  std::vector<Migration> out;
  std::size_t at = schema.find(marker);
  while (at != std::string_view::npos) {
    std::size_t number_start = at + marker.size();
    int version = 0;
    std::from_chars(schema.data() + number_start, schema.data() + schema.size(), version);
    std::size_t body_start = std::min(schema.find('\n', number_start), schema.size());
    std::size_t next = schema.find(marker, number_start);
    out.push_back({version, schema.substr(body_start, next == std::string_view::npos ? next : next - body_start)});
    at = next;
  }
  return out;
}

// What a migration brings: the comment line its section opens with (none:
// empty).
inline std::string_view summary(std::string_view sql) {
  constexpr std::string_view comment = "-- ";
  std::size_t start = std::min(sql.find_first_not_of('\n'), sql.size());
  auto line = sql.substr(start, std::min(sql.find('\n', start), sql.size()) - start);
  return line.starts_with(comment) ? line.substr(comment.size()) : std::string_view();
}

}  // namespace taskd::store
