#pragma once
// Task files written from definitions (`export`), in the form that
// read_task_file (task_file.hpp) reads back.
#include <map>
#include <string>
#include <vector>

#include "core/task.hpp"

namespace taskd::cli {

// The start of a task file: a comment and the group caps.
std::string task_file_head(const std::map<std::string, int>& group_caps);

// Appends the [[task]] table of `definition` to a task file's text.
void write_task(std::string& out, const core::TaskDefinition& definition);

// A task file that `apply` reads back to these definitions and group caps.
std::string write_task_file(const std::vector<core::TaskDefinition>& definitions,
                            const std::map<std::string, int>& group_caps);

}  // namespace taskd::cli
