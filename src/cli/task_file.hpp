#pragma once
// Task files (taskd.toml(5)): TOML whose [[task]] tables carry the options of
// `add` as keys. They are read into TaskOptions, so `add`'s checks are the
// only ones, and written back from definitions by `export`
// (task_file_write.hpp); `apply` compares what it read with what is stored
// (ops/task_diff.hpp).
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cli/task_options.hpp"
#include "core/calendar.hpp"

namespace taskd::cli {

// A [[task]] table with [defaults] filled in, and where the file said it.
struct FileTask {
  TaskOptions options;
  bool start_now = false;
  std::string where;                        // "FILE:LINE:COLUMN" of the [[task]] header
  std::map<std::string, std::string> keys;  // each key given, and where (in the task or in [defaults])
};

// A [[calendar]] table: a calendar apply creates or replaces before it
// writes the tasks, which may use it.
struct FileCalendar {
  std::string name;
  std::vector<core::CalendarDate> dates;
  std::string where;  // "FILE:LINE:COLUMN" of the [[calendar]] header
};

struct TaskFile {
  // The owner its tasks get unless they say, and the one apply --prune
  // prunes: apply --owner, else the top-level owner (or [defaults] owner),
  // else the file's absolute path.
  std::string owner;
  std::vector<FileTask> tasks;
  std::map<std::string, int> group_caps;  // [group.NAME] concurrency = N
  std::vector<FileCalendar> calendars;
};

// Reads the task file at `path` (named in messages as given). Every error is
// bad input that says FILE:LINE:COLUMN and, inside a task, which task.
// `owner` (apply --owner; empty: none) must agree with the one the file names.
core::Result<TaskFile> read_task_file(const std::filesystem::path& path, std::string_view owner = {});

// Parses a task file's text; `path` names it in messages, is the default
// owner (made absolute), and anchors relative `cwd`s.
core::Result<TaskFile> parse_task_file(std::string_view text, const std::filesystem::path& path,
                                       std::string_view owner = {});

// The task a file's task describes at `now` (its definition and schedule),
// checked as `add` checks it; an error says where in the file and which task.
core::Result<core::Task> build_file_task(const FileTask& task, core::Time now);

}  // namespace taskd::cli
