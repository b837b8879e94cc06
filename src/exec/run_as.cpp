#include "exec/run_as.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <grp.h>
#include <map>
#include <mutex>
#include <optional>
#include <pwd.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace taskd::exec {
namespace {

// What a getpwnam_r or getgrnam_r call needs room for; grown while it says ERANGE.
constexpr std::size_t first_lookup_buffer = 1024;

std::unexpected<core::Error> cannot_switch(const core::RunAs& run_as, std::string_view why) {
  return core::fail(core::ErrorKind::bad_input, fmt::format("cannot run as user {}: {}", run_as.user, why));
}

// The passwd entry of `name` into `entry`, its strings in `buffer`; false
// when there is none, an error when the database cannot be read.
core::Result<bool> find_user(const std::string& name, passwd& entry, std::vector<char>& buffer) {
  passwd* found = nullptr;
  int error = 0;
  while ((error = ::getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found)) == ERANGE)
    buffer.resize(buffer.size() * 2);
  if (error != 0)
    return core::fail(core::ErrorKind::internal,
                      fmt::format("cannot read the password database for user {}: {}", name, std::strerror(error)));
  return found != nullptr;
}

// The group id of `name`; none when there is no such group.
core::Result<std::optional<gid_t>> find_group(const std::string& name) {
  std::vector<char> buffer(first_lookup_buffer);
  group entry{};
  group* found = nullptr;
  int error = 0;
  while ((error = ::getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found)) == ERANGE)
    buffer.resize(buffer.size() * 2);
  if (error != 0)
    return core::fail(core::ErrorKind::internal,
                      fmt::format("cannot read the group database for group {}: {}", name, std::strerror(error)));
  if (!found) return std::nullopt;
  return found->gr_gid;
}

// The groups `user` is a member of, and `gid`, as initgroups would set them.
std::vector<gid_t> groups_of(const char* user, gid_t gid) {
  std::vector<gid_t> groups(16);
  int count = static_cast<int>(groups.size());
  while (::getgrouplist(user, gid, groups.data(), &count) < 0) groups.resize(static_cast<std::size_t>(count) + 16);
  groups.resize(static_cast<std::size_t>(count));
  return groups;
}

// Looks `run_as` up in the databases; cannot_switch's error when there is no such user or group.
core::Result<RunAsUser> look_up(const core::RunAs& run_as) {
  std::vector<char> buffer(first_lookup_buffer);
  passwd entry{};
  if (!TRY(find_user(run_as.user, entry, buffer))) return cannot_switch(run_as, "no such user");
  gid_t gid = entry.pw_gid;
  if (!run_as.group.empty()) {
    auto group = TRY(find_group(run_as.group));
    if (!group) return cannot_switch(run_as, fmt::format("no such group {}", run_as.group));
    gid = *group;
  }
  return RunAsUser{{entry.pw_uid, gid, groups_of(entry.pw_name, gid)}, entry.pw_name, entry.pw_dir, entry.pw_shell};
}

// A file as stat found it: a lookup made while it was the same still holds.
// The change time too, which no one can set back as a copy keeping the
// modification time does.
struct FileStamp {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  std::int64_t modified_s = 0;
  long modified_ns = 0;
  std::int64_t changed_s = 0;
  long changed_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

std::optional<FileStamp> stamp_of(const char* path) {
  struct stat info {};
  if (::stat(path, &info) != 0) return std::nullopt;
  return FileStamp{info.st_dev,         info.st_ino,          info.st_size,        info.st_mtim.tv_sec,
                   info.st_mtim.tv_nsec, info.st_ctim.tv_sec, info.st_ctim.tv_nsec};
}

constexpr const char* nsswitch_conf = "/etc/nsswitch.conf";
constexpr const char* passwd_file = "/etc/passwd";
constexpr const char* group_file = "/etc/group";

using Stamps = std::array<std::optional<FileStamp>, 3>;

Stamps stamps_now() { return {stamp_of(nsswitch_conf), stamp_of(passwd_file), stamp_of(group_file)}; }

// Whether nsswitch.conf takes users and groups from the files alone
// (passwd and group name `files` and nothing else, initgroups too when it
// is there): then the files' stamps tell when an answer may have changed.
bool files_alone(const char* path) {
  std::ifstream conf(path);
  bool passwd = false, group = false, initgroups = true;
  for (std::string line; std::getline(conf, line);) {
    line = line.substr(0, line.find('#'));
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::istringstream words(line.substr(colon + 1));
    std::string first, more;
    words >> first >> more;
    bool files = first == "files" && more.empty();
    std::istringstream key_words(line.substr(0, colon));
    std::string key;
    key_words >> key;
    if (key == "passwd") passwd = files;
    else if (key == "group") group = files;
    else if (key == "initgroups") initgroups = files;
  }
  return passwd && group && initgroups;
}

// The users looked up in this process, kept while nsswitch.conf, the
// password file and the group file stay as they were (a re-stat of three
// files against a dozen opens and reads of the databases at every run);
// nothing is kept when the databases have other sources than the files.
class LookupCache {
 public:
  core::Result<RunAsUser> resolve(const core::RunAs& run_as) {
    auto stamps = stamps_now();
    std::lock_guard lock(mutex_);
    if (stamps != stamps_) {
      users_.clear();
      stamps_ = stamps;
      cacheable_ = std::ranges::all_of(stamps, [](const auto& stamp) { return stamp.has_value(); }) &&
                   files_alone(nsswitch_conf);
    }
    auto key = std::pair(run_as.user, run_as.group);
    if (auto kept = users_.find(key); kept != users_.end()) return kept->second;
    auto user = TRY(look_up(run_as));
    // A user looked up while a file changed may be half the old answer.
    if (cacheable_ && stamps == stamps_now())
      users_.emplace(std::move(key), user);
    return user;
  }

 private:
  std::mutex mutex_;
  Stamps stamps_;
  bool cacheable_ = false;
  std::map<std::pair<std::string, std::string>, RunAsUser> users_;
};

}  // namespace

core::Result<RunAsUser> resolve_run_as(const core::RunAs& run_as) {
  if (::geteuid() != 0)
    return cannot_switch(run_as, fmt::format("only a scheduler running as root can switch users, and this one runs as "
                                             "uid {}; the task did not run",
                                             ::geteuid()));
  static LookupCache cache;
  return cache.resolve(run_as);
}

}  // namespace taskd::exec
