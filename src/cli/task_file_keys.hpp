#pragma once
// The keys of a [[task]] table, each with how its TOML value sets a FileTask;
// the task-file reader's (task_file_read.cpp) table.
#include <toml++/toml.h>

#include <functional>
#include <map>
#include <string>

#include "cli/task_file.hpp"

namespace taskd::cli {

// Sets the field of `task` that a key names; the error says what the value should have been.
using Setter = std::function<core::Result<void>(const toml::node& value, FileTask& task)>;

// Every key of a [[task]] table: the options of `add` without dashes.
const std::map<std::string, Setter, std::less<>>& task_keys();

}  // namespace taskd::cli
