#include "exec/run_files.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include "core/text.hpp"

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

// The status file's contents, and the file removed; "" when the run wrote none.
std::string take_status_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return {};
  std::string contents = fd >= 0 ? read_all(fd) : std::string();
  if (fd >= 0) ::close(fd);
  ::unlink(path.c_str());
  return contents;
}

// The open state file `fd` (its fstat: `info`), as the run left it.
core::Result<std::string> read_state(int fd, const struct stat& info, std::size_t limit) {
  if (static_cast<std::size_t>(info.st_size) > limit)
    return core::fail(core::ErrorKind::bad_input,
                      fmt::format("$TASKD_STATE is {} bytes, over the limit of {} bytes; the previous state is kept",
                                  info.st_size, limit));
  if (S_ISREG(info.st_mode) && info.st_size == 0) return std::string();
  return read_all(fd);
}

// Whether the open state file `fd` (its fstat: `info`, opened without
// following a symbolic link) can be another run's: a plain file with no
// other name, that no other process has open (a write lease is granted only
// then; it goes with the descriptor).
bool may_serve_again(int fd, const struct stat& info) {
  return S_ISREG(info.st_mode) && info.st_nlink == 1 && ::fcntl(fd, F_SETLEASE, F_WRLCK) == 0;
}

}  // namespace

core::Result<RunDirectory> RunDirectory::create() {
  std::string pattern = temp_root() + "/taskd-run-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    return core::fail(core::ErrorKind::internal,
                      fmt::format("cannot create a run directory in {}: {}", temp_root(), std::strerror(errno)));
  return RunDirectory(pattern);
}

RunDirectory::RunDirectory(RunDirectory&& other) noexcept
    : path_(std::move(other.path_)), spares_(std::move(other.spares_)), spares_named_(other.spares_named_) {
  other.path_.clear();
}

RunDirectory::~RunDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

namespace {

// Whether `path` is named as make() names a run directory: taskd-run-XXXXXX
// (mkdtemp's letters and digits) right in the temporary directory.
bool named_as_run_directory(const std::filesystem::path& path) {
  auto name = path.filename().native();
  constexpr std::string_view prefix = "taskd-run-";
  return path.parent_path() == std::filesystem::path(temp_root()) && name.size() == prefix.size() + 6 &&
         name.starts_with(prefix) && std::ranges::all_of(name.substr(prefix.size()), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) != 0;
         });
}

}  // namespace

core::Result<RunDirectory> RunDirectory::adopt(Handed handed) {
  struct stat directory {};
  if (!named_as_run_directory(handed.path) || ::lstat(handed.path.c_str(), &directory) != 0 ||
      !S_ISDIR(directory.st_mode) || directory.st_uid != ::geteuid() || (directory.st_mode & 077) != 0)
    return core::fail(core::ErrorKind::bad_input, fmt::format("{} is not a run directory of taskd's", handed.path));
  // A spare is a file right in it, nothing else (removed with it at the end).
  std::erase_if(handed.spares, [&](const std::string& spare) {
    std::filesystem::path path(spare);
    return path.parent_path() != std::filesystem::path(handed.path) || path.filename() == "." ||
           path.filename() == "..";
  });
  RunDirectory adopted(std::move(handed.path));
  adopted.spares_ = std::move(handed.spares);
  adopted.spares_named_ = handed.spares_named;
  return adopted;
}

RunFiles RunDirectory::files_of(std::int64_t run_id) const {
  return RunFiles(fmt::format("{}/{}.state", path_, run_id), fmt::format("{}/{}.status", path_, run_id));
}

core::Result<RunFiles> RunDirectory::files_for(std::int64_t run_id, std::string_view state) {
  for (bool first_try : {true, false}) {
    auto files = files_of(run_id);
    if (place_state_file(files.state_path(), state)) return files;
    if (!first_try || errno != ENOENT) break;
    // The directory is gone (a /tmp cleaner). A new one, never made again
    // under the same name: someone else may own that name by now.
    auto fresh = TRY(create());
    path_ = std::exchange(fresh.path_, {});
    spares_.clear();
  }
  return core::fail(core::ErrorKind::internal,
                    fmt::format("cannot write the run files in {}: {}", path_, std::strerror(errno)));
}

bool RunDirectory::place_state_file(const std::string& path, std::string_view state) {
  // A spare takes the run's name: no inode to allocate (on ext4 without a
  // journal that searched past every recently deleted one).
  while (!spares_.empty()) {
    std::string spare = std::move(spares_.back());
    spares_.pop_back();
    if (::rename(spare.c_str(), path.c_str()) == 0) return state.empty() || write_file(path, state);
  }
  return write_file(path, state);
}

core::Result<std::string> RunDirectory::take_state_file(const std::string& state_path, std::size_t state_limit) {
  std::string spare = fmt::format("{}/spare-{}", path_, spares_named_);
  if (::rename(state_path.c_str(), spare.c_str()) != 0) return std::string();  // the run removed it: no state
  ++spares_named_;
  int fd = ::open(spare.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  bool plain = fd >= 0;
  if (!plain) fd = ::open(spare.c_str(), O_RDONLY | O_CLOEXEC);  // a symbolic link the run put there: read, not reused
  if (fd < 0) {
    ::unlink(spare.c_str());
    return std::string();
  }
  struct stat info {};
  ::fstat(fd, &info);
  bool reusable = plain && may_serve_again(fd, info);
  auto state = read_state(fd, info, state_limit);
  ::close(fd);  // and the lease with it
  if (reusable && (info.st_size == 0 || ::truncate(spare.c_str(), 0) == 0)) spares_.push_back(std::move(spare));
  else ::unlink(spare.c_str());
  return state;
}

RunLeftovers RunDirectory::collect(RunFiles files, std::size_t state_limit) {
  RunLeftovers left{take_state_file(files.state_path_, state_limit), last_line(take_status_file(files.status_path_))};
  files.state_path_.clear();  // taken: nothing left for its destructor to remove
  return left;
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

std::string last_line(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  auto start = text.find_last_of('\n');
  std::string_view line = start == std::string_view::npos ? text : text.substr(start + 1);
  constexpr std::size_t most = 500;
  if (line.size() > most) {
    // Cut before a character, not in it: back over up to 3 continuation bytes.
    std::size_t end = most;
    for (int i = 0; i < 3 && end > 0 && (static_cast<unsigned char>(line[end]) & 0xC0) == 0x80; ++i) --end;
    line = line.substr(0, end);
  }
  return core::valid_utf8(line);
}

}  // namespace taskd::exec
