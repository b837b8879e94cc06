#include "core/env_file.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/text.hpp"

namespace taskd::core {
namespace {

bool is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

bool is_variable_name(std::string_view name) {
  return !name.empty() && is_name_start(name.front()) && std::ranges::all_of(name, is_name_char);
}

// Whether the line says nothing: blank, or a comment.
bool is_skipped(std::string_view line) {
  auto first = line.find_first_not_of(" \t");
  return first == std::string_view::npos || line[first] == '#';
}

}  // namespace

Result<void> validate_env_file_path(std::string_view path) {
  if (path.empty() || path.front() == '/') return {};
  return fail(ErrorKind::bad_input, fmt::format("\"{}\" is not an absolute path", printable(path)));
}

Result<std::vector<EnvVar>> parse_env_file(std::string_view text, std::string_view path) {
  std::vector<EnvVar> variables;
  int number = 0;
  while (!text.empty()) {
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    if (is_skipped(line)) continue;
    line.remove_prefix(line.find_first_not_of(" \t"));
    auto equals = line.find('=');
    auto name = line.substr(0, equals);
    if (equals == std::string_view::npos || !is_variable_name(name) || line.find('\0') != std::string_view::npos)
      return fail(ErrorKind::bad_input,
                  fmt::format("{}:{}: not a line NAME=VALUE (NAME of letters, digits and _, not starting with a "
                              "digit)",
                              printable(path), number));
    if (variables.size() == max_env_file_variables)
      return fail(ErrorKind::bad_input, fmt::format("{}:{}: more than {} variables", printable(path), number,
                                                    max_env_file_variables));
    variables.emplace_back(std::string(name), std::string(line.substr(equals + 1)));
  }
  return variables;
}

}  // namespace taskd::core
