#include "store/file_trust.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace taskd::store {
namespace {

namespace fs = std::filesystem;
using core::ErrorKind;
using core::fail;

// As the kernel's MAXSYMLINKS: more on one path is a loop.
constexpr int max_symbolic_links = 40;

std::unexpected<core::Error> cannot_check(const fs::path& path, std::string_view why) {
  return fail(ErrorKind::unavailable, fmt::format("cannot check {}: {}", path.string(), why));
}

bool writable_by_others(const struct stat& info) { return info.st_mode & (S_IWGRP | S_IWOTH); }

core::Result<void> refuse_writable(const fs::path& path, const struct stat& info) {
  return fail(ErrorKind::unavailable,
              fmt::format("{} is writable by group or others (mode {:04o}); whoever can write it can make taskd "
                          "run any command (fix: chmod go-w {})",
                          path.string(), info.st_mode & 07777, path.string()));
}

core::Result<void> check_private(const fs::path& path, const struct stat& info) {
  TRY(check_owner(path, info));
  if (writable_by_others(info)) return refuse_writable(path, info);
  return {};
}

// A component on the way to a file: a directory that others can write must
// be sticky, so that only their owners can replace its entries.
core::Result<void> check_on_the_way(const fs::path& path, const struct stat& info) {
  TRY(check_owner(path, info));
  if (S_ISDIR(info.st_mode) && writable_by_others(info) && !(info.st_mode & S_ISVTX))
    return refuse_writable(path, info);
  return {};
}

// Stacks the components of `path` below its root, the first on top.
void push_components(std::vector<fs::path>& pending, const fs::path& path) {
  fs::path below_root = path.relative_path();
  std::vector<fs::path> names(below_root.begin(), below_root.end());
  pending.insert(pending.end(), names.rbegin(), names.rend());
}

// `path` absolute, with its symbolic links resolved one component at a
// time, each component checked on the way (lstat: a link is judged itself,
// then followed).
core::Result<fs::path> resolve_trusted(const fs::path& path) {
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  if (error) return cannot_check(path, error.message());
  std::vector<fs::path> pending;
  push_components(pending, absolute);
  fs::path resolved = "/";
  int links = 0;
  while (!pending.empty()) {
    fs::path name = std::move(pending.back());
    pending.pop_back();
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      resolved = resolved.parent_path();  // no link in `resolved`: its parent is the kernel's ".."
      continue;
    }
    fs::path next = resolved / name;
    struct stat info {};
    if (::lstat(next.c_str(), &info) != 0) return cannot_check(next, std::strerror(errno));
    TRY(check_on_the_way(next, info));
    if (!S_ISLNK(info.st_mode)) {
      resolved = std::move(next);
      continue;
    }
    if (++links > max_symbolic_links) return cannot_check(path, std::strerror(ELOOP));
    fs::path target = fs::read_symlink(next, error);
    if (error) return cannot_check(next, error.message());
    if (target.is_absolute()) resolved = "/";
    push_components(pending, target);
  }
  return resolved;
}

// The fstat of `path` opened with `flags`, never through a last symbolic
// link (a link is opened itself). O_PATH: closing a descriptor opened
// otherwise would release every POSIX lock this process holds on the file,
// SQLite's on its database among them; and it reads nothing, nor waits for
// a FIFO's writer.
core::Result<struct stat> stat_opened(const fs::path& path, int flags) {
  int fd = ::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC | flags);
  if (fd < 0) return cannot_check(path, std::strerror(errno));
  struct stat info {};
  int result = ::fstat(fd, &info);
  int error = errno;
  ::close(fd);
  if (result != 0) return cannot_check(path, std::strerror(error));
  return info;
}

core::Result<struct stat> private_opened(const fs::path& path, int flags) {
  auto info = TRY(stat_opened(path, flags));
  TRY(check_private(path, info));
  return info;
}

}  // namespace

core::Result<void> check_owner(const fs::path& path, const struct stat& info) {
  uid_t self = ::geteuid();
  if (info.st_uid == self || info.st_uid == 0) return {};
  return fail(ErrorKind::unavailable,
              fmt::format("{}{} is owned by uid {}, not by you (uid {}) or root",
                          S_ISLNK(info.st_mode) ? "the symbolic link " : "", path.string(), info.st_uid, self));
}

core::Result<struct stat> check_private_file(const fs::path& path) {
  auto resolved = TRY(resolve_trusted(path));
  TRY(private_opened(resolved.parent_path(), O_DIRECTORY));
  auto file = private_opened(resolved, 0);
  if (file && !S_ISREG(file->st_mode))
    return fail(ErrorKind::unavailable, fmt::format("{} is not a regular file", resolved.string()));
  return file;
}

core::Result<void> check_private_directory(const fs::path& path) {
  auto resolved = TRY(resolve_trusted(path));
  TRY(private_opened(resolved, O_DIRECTORY));
  return {};
}

}  // namespace taskd::store
