#pragma once
// The two files a run shares with taskd: $TASKD_STATE (kept between runs, so
// a timeboxed task resumes where it stopped) and $TASKD_STATUS (a
// user-friendly status line). They live in a private directory that a taskd
// process makes for its runs at its first run and removes when it is done;
// each run's files are removed when the run ends. (A directory per run cost
// a synchronous rmdir per run, milliseconds on ext4: see BENCHMARKS.md.)
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace taskd::exec {

class RunFiles;

// The private directory (0700) in $TMPDIR, else /tmp, that holds the files
// of this process's runs; removed with everything in it when destroyed.
class RunDirectory {
 public:
  static core::Result<RunDirectory> create();
  RunDirectory(RunDirectory&& other) noexcept;
  RunDirectory& operator=(RunDirectory&&) = delete;
  RunDirectory(const RunDirectory&) = delete;
  ~RunDirectory();

  // The files of run `run_id`: the state file, made holding `state`, and the
  // name of the status file, which the run makes if it writes a status. If
  // something (a /tmp cleaner) removed the directory, a new one takes its place.
  core::Result<RunFiles> files_for(std::int64_t run_id, std::string_view state);

 private:
  explicit RunDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

class RunFiles {
 public:
  RunFiles(RunFiles&& other) noexcept;
  RunFiles& operator=(RunFiles&&) = delete;
  RunFiles(const RunFiles&) = delete;
  ~RunFiles();

  const std::string& state_path() const { return state_path_; }
  const std::string& status_path() const { return status_path_; }

  // The state file as the run left it; an error when it outgrew `limit`.
  core::Result<std::string> read_state(std::size_t limit) const;
  // The last non-empty line of the status file, or "" (also when there is none).
  std::string last_status_line() const;

 private:
  friend class RunDirectory;
  RunFiles(std::string state_path, std::string status_path)
      : state_path_(std::move(state_path)), status_path_(std::move(status_path)) {}
  std::string state_path_;
  std::string status_path_;
};

// The last non-empty line of `text`, without its newline, at most 500 bytes.
std::string last_line(std::string_view text);

}  // namespace taskd::exec
