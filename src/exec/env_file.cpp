#include "exec/env_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/env_file.hpp"
#include "core/text.hpp"

namespace taskd::exec {
namespace {

std::unexpected<core::Error> refused(const std::string& path, std::string_view problem) {
  return core::fail(core::ErrorKind::bad_input, fmt::format("env file {}: {}", core::printable(path), problem));
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string open_error(int error) {
  if (error == ELOOP) return "is a symbolic link (name the file itself)";
  return fmt::format("cannot open it: {}", std::strerror(error));
}

// What is wrong with the opened file `st` as an env file; none when nothing.
std::optional<std::string> problem_of(const struct stat& st, std::optional<uid_t> task_user) {
  if (!S_ISREG(st.st_mode)) return S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "its group or others may write it (chmod go-w)";
  if (st.st_uid != 0 && st.st_uid != ::geteuid() && st.st_uid != task_user)
    return fmt::format("it is owned by uid {}, neither root, taskd's user nor the task's --user", st.st_uid);
  if (static_cast<std::size_t>(st.st_size) > core::max_env_file_size)
    return fmt::format("it is larger than {} KiB", core::max_env_file_size / 1024);
  return std::nullopt;
}

// The whole file, at most the limit: a file that grew after fstat is refused too.
core::Result<std::string> read_all(int fd, const std::string& path) {
  std::string text(core::max_env_file_size + 1, '\0');
  std::size_t size = 0;
  while (size < text.size()) {
    auto got = ::read(fd, text.data() + size, text.size() - size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return refused(path, fmt::format("cannot read it: {}", std::strerror(errno)));
    if (got == 0) break;
    size += static_cast<std::size_t>(got);
  }
  if (size > core::max_env_file_size)
    return refused(path, fmt::format("it is larger than {} KiB", core::max_env_file_size / 1024));
  text.resize(size);
  return text;
}

}  // namespace

core::Result<std::vector<core::EnvVar>> read_env_file(const std::string& path, std::optional<uid_t> task_user) {
  Descriptor file(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (file.get() < 0) return refused(path, open_error(errno));
  struct stat st {};
  if (::fstat(file.get(), &st) != 0) return refused(path, fmt::format("cannot stat it: {}", std::strerror(errno)));
  if (auto problem = problem_of(st, task_user)) return refused(path, *problem);
  auto text = TRY(read_all(file.get(), path));
  return core::parse_env_file(text, path);
}

}  // namespace taskd::exec
