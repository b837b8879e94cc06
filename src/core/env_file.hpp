#pragma once
// A task's --env-file: the path it names, and the NAME=VALUE lines of the
// file, read by the scheduler when each run starts (exec/ opens and checks
// the file; this reads its text). The values are secrets: no error here
// quotes a line, only its number.
#include <cstddef>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/task.hpp"

namespace taskd::core {

// The most an env file may hold: bytes, and variables (each is set over
// the environment by a linear search, which stays cheap at this many).
inline constexpr std::size_t max_env_file_size = 64 * 1024;
inline constexpr std::size_t max_env_file_variables = 1000;

// Bad input unless `path` is absolute (empty: no file).
Result<void> validate_env_file_path(std::string_view path);

// The variables of an env file's `text`, in order, as docker's --env-file
// reads them: one NAME=VALUE per line (blanks before it are skipped), NAME
// of letters, digits and _ (not starting with a digit), VALUE verbatim to the end of the line (quotes and
// spaces are part of it); lines that are blank or whose first non-blank
// character is # are skipped. Any other line (an `export` prefix, a NAME
// alone, a NUL byte), and a variable past max_env_file_variables, is an
// error naming `path` and the line's number, never its text.
Result<std::vector<EnvVar>> parse_env_file(std::string_view text, std::string_view path);

}  // namespace taskd::core
