#include "exec/run_as.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
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

}  // namespace

core::Result<RunAsUser> resolve_run_as(const core::RunAs& run_as) {
  if (::geteuid() != 0)
    return cannot_switch(run_as, fmt::format("only a scheduler running as root can switch users, and this one runs as "
                                             "uid {}; the task did not run",
                                             ::geteuid()));
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

}  // namespace taskd::exec
