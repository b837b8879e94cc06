#pragma once
// Task files written from definitions (`export`), in the form that
// read_task_file (task_file.hpp) reads back.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/calendar.hpp"
#include "core/task.hpp"

namespace taskd::cli {

// The start of a task file: a comment, the owner it names (if any) and the
// group caps.
std::string task_file_head(const std::optional<std::string>& owner, const std::map<std::string, int>& group_caps);

// Appends the [[task]] table of `definition` to a task file's text; its
// owner unless it is `file_owner`, the one the file names.
void write_task(std::string& out, const core::TaskDefinition& definition,
                const std::optional<std::string>& file_owner = std::nullopt);

// Appends a [[calendar]] table: its days as the lines of a dates file.
void write_calendar(std::string& out, std::string_view name, const std::vector<core::CalendarDate>& dates);

// A task file that `apply` reads back to these definitions and group caps.
std::string write_task_file(const std::vector<core::TaskDefinition>& definitions,
                            const std::map<std::string, int>& group_caps);

}  // namespace taskd::cli
