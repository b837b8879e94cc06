#include "cli/input_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

namespace taskd::cli {
namespace {

using core::ErrorKind;
using core::fail;
using core::Result;

constexpr std::string_view standard_input = "standard input";

std::unexpected<core::Error> cannot_read(std::string_view name, std::string_view why) {
  return fail(ErrorKind::bad_input, fmt::format("cannot read {}: {}", name, why));
}

std::unexpected<core::Error> too_large(std::string_view name) {
  return cannot_read(name,
                     fmt::format("it is larger than {} MiB, the most taskd reads from a file", max_input_size >> 20));
}

std::string_view kind_of_file(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

// Closes the descriptor it holds when it goes.
class OpenFile {
 public:
  explicit OpenFile(int fd) : fd_(fd) {}
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

// Waits until `fd`, left non-blocking by whoever opened it, has bytes or an end.
bool wait_readable(int fd) {
  pollfd waiting{fd, POLLIN, 0};
  return ::poll(&waiting, 1, -1) >= 0 || errno == EINTR;
}

// What `fd` holds, up to its end; one byte past max_input_size is enough to
// know that it is too large, so no more is ever read.
Result<std::string> read_bounded(int fd, std::string_view name) {
  std::string bytes;
  constexpr std::size_t chunk = 64 * 1024;
  while (bytes.size() <= max_input_size) {
    auto had = bytes.size();
    bytes.resize(had + std::min(chunk, max_input_size + 1 - had));
    ssize_t got = ::read(fd, bytes.data() + had, bytes.size() - had);
    bytes.resize(had + static_cast<std::size_t>(std::max<ssize_t>(got, 0)));
    if (got == 0) return bytes;
    if (got > 0 || errno == EINTR) continue;
    if (errno == EAGAIN && wait_readable(fd)) continue;
    return cannot_read(name, std::strerror(errno));
  }
  return too_large(name);
}

}  // namespace

Result<std::string> read_input_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO does not wait for a writer; O_NOCTTY: a
  // terminal named here does not become ours.
  OpenFile file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (file.fd() < 0) return cannot_read(path, std::strerror(errno));
  struct stat info {};
  if (::fstat(file.fd(), &info) != 0) return cannot_read(path, std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    return cannot_read(path, fmt::format("it is {}, not a regular file", kind_of_file(info.st_mode)));
  if (static_cast<std::size_t>(info.st_size) > max_input_size) return too_large(path);
  return read_bounded(file.fd(), path);
}

Result<std::string> read_standard_input() { return read_bounded(STDIN_FILENO, standard_input); }

}  // namespace taskd::cli
