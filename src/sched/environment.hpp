#pragma once
// The environment of a command taskd starts for a task (its run, or its
// --notify command).
#include <string>
#include <vector>

#include "core/task.hpp"

namespace taskd::sched {

// A run as taskd's own user: taskd's environment but for what would hand it
// the database (TASKD_DB, libpq's password variables), then `from_file`
// (the run's --env-file; none for a --notify command), then the task's
// --env, then `variables`.
std::vector<std::string> command_environment(const core::TaskDefinition& definition,
                                             const std::vector<core::EnvVar>& variables,
                                             const std::vector<core::EnvVar>& from_file = {});

// A run as another user (--user), as cron's: PATH=/usr/bin:/bin and taskd's
// LANG, LC_* and TZ, then `account` (HOME, USER, LOGNAME and SHELL of the
// user), then `from_file` (its --env-file), then the task's --env, then
// `variables`. Nothing else of taskd's.
std::vector<std::string> user_environment(const core::TaskDefinition& definition,
                                          const std::vector<core::EnvVar>& variables,
                                          const std::vector<core::EnvVar>& account,
                                          const std::vector<core::EnvVar>& from_file);

// A command taskd runs as itself for a task whose runs are another user's
// (its --notify command): what user_environment starts from, and
// `variables`; none of the task's --env, which its user may have written.
std::vector<std::string> fixed_environment(const std::vector<core::EnvVar>& variables);

}  // namespace taskd::sched
