#pragma once
// The environment of a command taskd starts for a task (its run, or its
// --notify command): taskd's own but for what would hand it the database
// (TASKD_DB, libpq's password variables), then `account` (HOME, USER,
// LOGNAME and SHELL of the user a run switches to), then the task's --env,
// then `variables`.
#include <string>
#include <vector>

#include "core/task.hpp"

namespace taskd::sched {

std::vector<std::string> command_environment(const core::TaskDefinition& definition,
                                             const std::vector<core::EnvVar>& variables,
                                             const std::vector<core::EnvVar>& account = {});

}  // namespace taskd::sched
