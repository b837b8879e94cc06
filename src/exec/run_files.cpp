#include "exec/run_files.hpp"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace taskd::exec {
namespace {

std::string temp_root() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir && *tmpdir ? tmpdir : "/tmp";
}

// Run files are written and read with plain system calls: they are made and
// read for every run (see bench/dispatch.sh).
bool write_file(const std::string& path, std::string_view contents) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  while (!contents.empty()) {
    ssize_t n = ::write(fd, contents.data(), contents.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    contents.remove_prefix(static_cast<std::size_t>(n));
  }
  return ::close(fd) == 0 && contents.empty();
}

std::string read_all(int fd) {
  std::string contents;
  std::array<char, 8192> buffer;
  while (true) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return contents;
    contents.append(buffer.data(), static_cast<std::size_t>(n));
  }
}

// The file's contents; "" when there is no such file.
std::string read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  auto contents = read_all(fd);
  ::close(fd);
  return contents;
}

}  // namespace

core::Result<RunDirectory> RunDirectory::create() {
  std::string pattern = temp_root() + "/taskd-run-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    return core::fail(core::ErrorKind::internal,
                      fmt::format("cannot create a run directory in {}: {}", temp_root(), std::strerror(errno)));
  return RunDirectory(pattern);
}

RunDirectory::RunDirectory(RunDirectory&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

RunDirectory::~RunDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

core::Result<RunFiles> RunDirectory::files_for(std::int64_t run_id, std::string_view state) {
  if (::access(path_.c_str(), F_OK) != 0) {
    // Never made again under the same name: someone else may own that name by now.
    auto fresh = create();
    if (!fresh) return std::unexpected(fresh.error());
    path_ = std::exchange(fresh->path_, {});
  }
  RunFiles files(fmt::format("{}/{}.state", path_, run_id), fmt::format("{}/{}.status", path_, run_id));
  // $TASKD_STATUS is left for the run to create: one file fewer to make per
  // run (inode allocation on ext4 was a sixth of taskd's time per run).
  if (!write_file(files.state_path(), state))
    return core::fail(core::ErrorKind::internal, fmt::format("cannot write the run files in {}", path_));
  return files;
}

RunFiles::RunFiles(RunFiles&& other) noexcept
    : state_path_(std::move(other.state_path_)), status_path_(std::move(other.status_path_)) {
  other.state_path_.clear();
  other.status_path_.clear();
}

RunFiles::~RunFiles() {
  if (state_path_.empty()) return;
  ::unlink(state_path_.c_str());
  ::unlink(status_path_.c_str());
}

core::Result<std::string> RunFiles::read_state(std::size_t limit) const {
  int fd = ::open(state_path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string();  // the run removed it: no state
  struct stat info {};
  if (::fstat(fd, &info) == 0 && static_cast<std::size_t>(info.st_size) > limit) {
    ::close(fd);
    return core::fail(core::ErrorKind::bad_input,
                      fmt::format("$TASKD_STATE is {} bytes, over the limit of {} bytes; the previous state is kept",
                                  info.st_size, limit));
  }
  auto contents = read_all(fd);
  ::close(fd);
  return contents;
}

std::string RunFiles::last_status_line() const { return last_line(read_file(status_path())); }

std::string last_line(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  auto start = text.find_last_of('\n');
  std::string_view line = start == std::string_view::npos ? text : text.substr(start + 1);
  if (line.size() > 500) line = line.substr(0, 500);
  return std::string(line);
}

}  // namespace taskd::exec
