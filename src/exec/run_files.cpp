#include "exec/run_files.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <map>
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
bool write_all(int fd, std::string_view contents) {
  while (!contents.empty()) {
    ssize_t n = ::write(fd, contents.data(), contents.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    contents.remove_prefix(static_cast<std::size_t>(n));
  }
  return contents.empty();
}

bool write_file(const std::string& path, std::string_view contents) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool written = write_all(fd, contents);
  return ::close(fd) == 0 && written;
}

// A new private directory "PREFIX-XXXXXX" in $TMPDIR, else /tmp, with
// `mode`; "" (errno says why) when it cannot be made.
std::string make_directory(std::string_view prefix, mode_t mode) {
  std::string path = fmt::format("{}/{}-XXXXXX", temp_root(), prefix);
  if (::mkdtemp(path.data()) == nullptr) return {};
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  bool ready = fd >= 0 && ::fchmod(fd, mode) == 0;
  int error = errno;
  if (fd >= 0) ::close(fd);
  if (ready) return path;
  ::rmdir(path.c_str());
  errno = error;
  return {};
}

// Whether the open directory `fd` is `uid`'s alone, 0700 (else errno is EPERM).
bool users_alone(int fd, uid_t uid) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return false;
  if (info.st_uid == uid && (info.st_mode & 07777) == 0700) return true;
  errno = EPERM;
  return false;
}

// The directory `path` of `owner`'s runs, made (0700, the owner's) and
// opened; one there already is taken only if it is the owner's alone, and
// never through a symbolic link (its descriptor is checked, not its name).
// -1 (errno says why) when it cannot be.
int open_user_directory(const std::string& path, const Credentials& owner) {
  bool made = ::mkdir(path.c_str(), 0700) == 0;
  if (!made && errno != EEXIST) return -1;
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  if (made ? ::fchmod(fd, 0700) == 0 && ::fchown(fd, owner.uid, owner.gid) == 0 : users_alone(fd, owner.uid))
    return fd;
  int error = errno;
  ::close(fd);
  errno = error;
  return -1;
}

// `name` in `dir_fd` opened to be read if it is a plain file `owner` owns
// (its fstat: `info`), never through a symbolic link nor waiting on a FIFO;
// else -1.
int open_owned(int dir_fd, const char* name, uid_t owner, struct stat& info) {
  int fd = ::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == owner) return fd;
  ::close(fd);
  errno = EPERM;
  return -1;
}

// Removes `name` in `parent_fd` and, when it is a directory, all in it,
// through descriptors: a user's run may swap a directory for a symbolic
// link while taskd removes it. Deeper than `depth` it stays.
void remove_tree(int parent_fd, const char* name, int depth) {
  int fd = ::openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && depth > 0) {
    DIR* dir = ::fdopendir(fd);
    while (dirent* entry = dir ? ::readdir(dir) : nullptr) {
      std::string_view entry_name = entry->d_name;
      if (entry_name == "." || entry_name == "..") continue;
      if (::unlinkat(::dirfd(dir), entry->d_name, 0) != 0 && errno == EISDIR)
        remove_tree(::dirfd(dir), entry->d_name, depth - 1);
    }
    if (dir) ::closedir(dir);
    else ::close(fd);
  } else if (fd >= 0) {
    ::close(fd);
  }
  ::unlinkat(parent_fd, name, AT_REMOVEDIR);
}

// At most `most` bytes of `fd` from `offset` on: a run (or what it left
// running) may make its files as large as it likes, or keep them growing.
std::string read_at_most(int fd, std::size_t most, off_t offset = 0) {
  std::string contents;
  std::array<char, 8192> buffer;
  while (contents.size() < most) {
    std::size_t wanted = std::min(buffer.size(), most - contents.size());
    ssize_t n = ::pread(fd, buffer.data(), wanted, offset + static_cast<off_t>(contents.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    contents.append(buffer.data(), static_cast<std::size_t>(n));
  }
  return contents;
}

// What of a status file taskd reads: its end, where its last line is.
constexpr std::size_t status_tail = 4096;

// The end of the status file `name` in `dir_fd` (a path with AT_FDCWD), and
// the file removed; "" when the run wrote none (or, run as `owner`, none of
// the owner's).
std::string take_status_file(int dir_fd, const char* name, std::optional<uid_t> owner) {
  struct stat info {};
  int fd = owner ? open_owned(dir_fd, name, *owner, info) : ::openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return {};
  std::string contents;
  if (fd >= 0 && (owner || ::fstat(fd, &info) == 0)) {
    off_t start = std::max<off_t>(0, info.st_size - static_cast<off_t>(status_tail));
    contents = read_at_most(fd, status_tail, start);
  }
  if (fd >= 0) ::close(fd);
  ::unlinkat(dir_fd, name, 0);
  return contents;
}

std::unexpected<core::Error> state_over_limit(std::string_view size, std::size_t limit) {
  return core::fail(core::ErrorKind::bad_input,
                    fmt::format("$TASKD_STATE is {}, over the limit of {} bytes; the previous state is kept", size,
                                limit));
}

// The open state file `fd` (its fstat: `info`), as the run left it: never
// more than `limit` bytes read, even if a process the run left behind makes
// it grow after the fstat.
core::Result<std::string> read_state(int fd, const struct stat& info, std::size_t limit) {
  if (static_cast<std::size_t>(info.st_size) > limit) return state_over_limit(fmt::format("{} bytes", info.st_size), limit);
  if (S_ISREG(info.st_mode) && info.st_size == 0) return std::string();
  std::string state = read_at_most(fd, limit + 1);
  if (state.size() > limit) return state_over_limit("more bytes", limit);
  return state;
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
    : path_(std::move(other.path_)),
      users_path_(std::move(other.users_path_)),
      user_directories_(std::move(other.user_directories_)),
      retired_users_paths_(std::move(other.retired_users_paths_)),
      spares_(std::move(other.spares_)),
      user_spares_(std::move(other.user_spares_)),
      spares_named_(other.spares_named_) {
  other.path_.clear();
  other.users_path_.clear();
  other.user_directories_.clear();
}

RunDirectory::~RunDirectory() {
  remove_users_directories();
  if (!path_.empty()) remove_tree(AT_FDCWD, path_.c_str(), 8);
}

void RunDirectory::remove_users_directories() {
  for (const auto& [uid, directory] : user_directories_) ::close(directory.fd);
  user_directories_.clear();
  if (!users_path_.empty()) remove_tree(AT_FDCWD, std::exchange(users_path_, {}).c_str(), 8);
  for (const auto& retired : retired_users_paths_) remove_tree(AT_FDCWD, retired.c_str(), 8);
  retired_users_paths_.clear();
}

core::Result<void> RunDirectory::renew() {
  auto fresh = TRY(create());
  path_ = std::exchange(fresh.path_, {});
  spares_.clear();
  user_spares_.clear();
  return {};
}

std::optional<std::string> RunDirectory::move_to_spare(int from_fd, const char* name) {
  for (bool first_try : {true, false}) {
    std::string spare = fmt::format("{}/spare-{}", path_, spares_named_);
    if (::renameat(from_fd, name, AT_FDCWD, spare.c_str()) == 0) {
      ++spares_named_;
      return spare;
    }
    // Still there, so the directory to move it into is what went.
    struct stat still {};
    if (!first_try || errno != ENOENT || ::fstatat(from_fd, name, &still, AT_SYMLINK_NOFOLLOW) != 0 || !renew())
      break;
  }
  return std::nullopt;
}

void RunDirectory::forget_user_directory(uid_t uid) {
  if (auto known = user_directories_.find(uid); known != user_directories_.end()) {
    ::close(known->second.fd);
    user_directories_.erase(known);
  }
  // The other users' directories in it stay open and in use: it goes at the end.
  if (!users_path_.empty()) retired_users_paths_.push_back(std::exchange(users_path_, {}));
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

core::Result<RunFiles> RunDirectory::files_for(std::int64_t run_id, std::string_view state, const Credentials* owner) {
  for (bool first_try : {true, false}) {
    if (auto files = place_files(run_id, state, owner)) return std::move(*files);
    if (!first_try || errno != ENOENT) break;
    // The directory is gone (a /tmp cleaner). A new one, never made again
    // under the same name: someone else may own that name by now.
    if (owner) {
      forget_user_directory(owner->uid);
      continue;
    }
    TRY(renew());
  }
  return core::fail(core::ErrorKind::internal,
                    fmt::format("cannot write the run files in {}: {}", path_, std::strerror(errno)));
}

std::optional<RunFiles> RunDirectory::place_files(std::int64_t run_id, std::string_view state,
                                                  const Credentials* owner) {
  if (owner) {
    const UserDirectory* dir = user_directory(*owner);
    if (!dir) return std::nullopt;
    std::string name = fmt::format("{}.state", run_id);
    if (!place_owned_state_file(*dir, name, state, *owner)) return std::nullopt;
    return RunFiles(dir->path + '/' + name, fmt::format("{}/{}.status", dir->path, run_id), owner->uid);
  }
  std::string state_path = fmt::format("{}/{}.state", path_, run_id);
  if (!place_state_file(state_path, state)) return std::nullopt;
  return RunFiles(std::move(state_path), fmt::format("{}/{}.status", path_, run_id));
}

const RunDirectory::UserDirectory* RunDirectory::user_directory(const Credentials& owner) {
  if (auto known = user_directories_.find(owner.uid); known != user_directories_.end()) return &known->second;
  if (users_path_.empty()) users_path_ = make_directory("taskd-users", 0711);
  if (users_path_.empty()) return nullptr;
  std::string path = fmt::format("{}/u{}", users_path_, owner.uid);
  int fd = open_user_directory(path, owner);
  if (fd < 0) return nullptr;
  return &user_directories_.emplace(owner.uid, UserDirectory{std::move(path), fd}).first->second;
}

bool RunDirectory::place_owned_state_file(const UserDirectory& dir, const std::string& name, std::string_view state,
                                          const Credentials& owner) {
  // A spare of the owner's, filled in taskd's own directory, takes the
  // run's name (and the place of whatever the user put there under it).
  auto& spares = user_spares_[{owner.uid, owner.gid}];
  while (!spares.empty()) {
    std::string spare = std::move(spares.back());
    spares.pop_back();
    if ((state.empty() || write_file(spare, state)) && ::renameat(AT_FDCWD, spare.c_str(), dir.fd, name.c_str()) == 0)
      return true;
    ::unlink(spare.c_str());
  }
  ::unlinkat(dir.fd, name.c_str(), 0);
  int fd = ::openat(dir.fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool written = ::fchown(fd, owner.uid, owner.gid) == 0 && write_all(fd, state);
  return ::close(fd) == 0 && written;
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
  auto moved = move_to_spare(AT_FDCWD, state_path.c_str());
  if (!moved) return std::string();  // the run removed it: no state
  std::string spare = std::move(*moved);
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

core::Result<std::string> RunDirectory::take_owned_state_file(const UserDirectory& dir, const char* name, uid_t owner,
                                                              std::size_t state_limit) {
  // Moved out of the user's reach first, then checked and read, as a state
  // file of taskd's own runs is.
  auto moved = move_to_spare(dir.fd, name);
  if (!moved) return std::string();  // the run removed it: no state
  std::string spare = std::move(*moved);
  struct stat info {};
  int fd = open_owned(AT_FDCWD, spare.c_str(), owner, info);
  if (fd < 0) {
    // Not a plain file of the user's: never read; a directory goes back
    // where the run put it, removed with the user's directory at the end.
    if (::unlink(spare.c_str()) != 0) ::renameat(AT_FDCWD, spare.c_str(), dir.fd, name);
    return std::string();
  }
  bool reusable = (info.st_mode & 07777) == 0600 && may_serve_again(fd, info);
  auto state = read_state(fd, info, state_limit);
  ::close(fd);  // and the lease with it
  if (reusable && (info.st_size == 0 || ::truncate(spare.c_str(), 0) == 0))
    user_spares_[{info.st_uid, info.st_gid}].push_back(std::move(spare));
  else ::unlink(spare.c_str());
  return state;
}

RunLeftovers RunDirectory::collect(RunFiles files, std::size_t state_limit) {
  RunLeftovers left{std::string(), ""};
  if (!files.owner_) {
    left = {take_state_file(files.state_path_, state_limit),
            last_line(take_status_file(AT_FDCWD, files.status_path_.c_str(), std::nullopt))};
  } else if (auto dir = user_directories_.find(*files.owner_);
             dir != user_directories_.end() && files.state_path_.starts_with(dir->second.path + '/')) {
    // Through the directory opened at the user's first run, never its name again.
    auto in_directory = [&](const std::string& path) { return path.c_str() + dir->second.path.size() + 1; };
    left = {take_owned_state_file(dir->second, in_directory(files.state_path_), *files.owner_, state_limit),
            last_line(take_status_file(dir->second.fd, in_directory(files.status_path_), files.owner_))};
  }  // else its directory went (a /tmp cleaner) and the files with it
  files.state_path_.clear();  // taken: nothing left for its destructor to remove
  return left;
}

RunFiles::RunFiles(RunFiles&& other) noexcept
    : state_path_(std::move(other.state_path_)), status_path_(std::move(other.status_path_)), owner_(other.owner_) {
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
