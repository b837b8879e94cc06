#pragma once
// Text for people: aligned tables and times relative to now.
#include <string>
#include <vector>

#include "core/task.hpp"

namespace taskd::cli {

// Prints rows under a header, each column as wide as its widest cell.
void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// "in 4m", "3m ago", "now"; "-" for none.
std::string relative_time(const std::optional<core::Time>& time, core::Time now);

// "every 5m", "every 5m after finish", "manual".
std::string describe_schedule(const core::TaskDefinition& definition);

// A word as a shell reads it: quoted when it has to be.
std::string shell_word(const std::string& word);

// The command as a shell would show it.
std::string describe_command(const core::Command& command);

// "paused", "disabled", or "active".
std::string task_condition(const core::TaskState& state);

}  // namespace taskd::cli
