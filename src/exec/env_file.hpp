#pragma once
// A task's --env-file, read by the scheduler as each run starts (before a
// switch to the task's --user), so that its values never pass through the
// database, the command line or taskd's own environment.
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "core/error.hpp"
#include "core/task.hpp"

namespace taskd::exec {

// The variables of the env file at `path`. It is opened once, not through
// a symbolic link and without waiting (a FIFO), and judged by what was
// opened: a regular file of at most core::max_env_file_size bytes that
// neither its group nor others may write, owned by root, by taskd's user
// or by `task_user` (the uid of the task's --user). The error names the
// file and what is wrong with it (a line by its number), never a value.
core::Result<std::vector<core::EnvVar>> read_env_file(const std::string& path, std::optional<uid_t> task_user);

}  // namespace taskd::exec
