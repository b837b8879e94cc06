#pragma once
// The files a command takes its input from (a task file, a crontab): a
// regular file or standard input, read to at most max_input_size bytes, so
// that /dev/zero, a FIFO or a file of /proc can neither grow a command's
// memory without bound nor keep it waiting.
#include <cstddef>
#include <string>

#include "core/error.hpp"

namespace taskd::cli {

// 16 MiB: a crontab is a few kilobytes, and 100 000 short tasks, well beyond
// a task file that people edit, come to about 10 MiB. The limit also bounds
// what parsing costs: apply holds about 75 bytes per byte of a task file.
inline constexpr std::size_t max_input_size = std::size_t{16} << 20;

// The contents of the file at `path`, which must be a regular file (a FIFO,
// a device or a directory is refused, without waiting for a FIFO's writer).
// Every error is bad input whose message names `path`: it cannot be opened
// or read, it is not a regular file, or it is larger than max_input_size.
core::Result<std::string> read_input_file(const std::string& path);

// The contents of standard input, whatever it is (a pipe, a file), read to
// its end; more than max_input_size bytes, or a read error, is bad input.
core::Result<std::string> read_standard_input();

}  // namespace taskd::cli
