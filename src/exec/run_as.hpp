#pragma once
// Running a task as another user (--user): whom its run becomes, read from
// the password and group databases in taskd itself before the child starts
// (the child makes system calls only, no lookups: it shares taskd's memory
// until it executes).
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/task.hpp"

namespace taskd::exec {

// The identity the child takes before it executes: its supplementary
// groups (as initgroups would set them), then its group, then its user.
// No default: a forgotten one would be root's.
struct Credentials {
  Credentials(uid_t user, gid_t group, std::vector<gid_t> supplementary)
      : uid(user), gid(group), groups(std::move(supplementary)) {}
  uid_t uid;
  gid_t gid;
  std::vector<gid_t> groups;
};

// A user a run switches to, and what cron gives its commands of them.
struct RunAsUser {
  Credentials credentials;
  std::string name;
  std::string home;
  std::string shell;
};

// The user and group `run_as` names as the databases have them now (an
// earlier answer when the databases come from the files alone, which have
// not changed since). An error says why the run cannot switch to them:
// taskd does not run as root (only root can switch), or the user or the
// group does not exist.
core::Result<RunAsUser> resolve_run_as(const core::RunAs& run_as);

}  // namespace taskd::exec
