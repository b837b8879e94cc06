#pragma once
// The two files a run shares with taskd: $TASKD_STATE (kept between runs, so
// a timeboxed task resumes where it stopped) and $TASKD_STATUS (a
// user-friendly status line). They live in a private directory per run.
#include <cstddef>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace taskd::exec {

class RunFiles {
 public:
  // Creates the directory (0700) with the state file holding `state`.
  static core::Result<RunFiles> create(std::string_view state);
  RunFiles(RunFiles&& other) noexcept;
  RunFiles& operator=(RunFiles&&) = delete;
  RunFiles(const RunFiles&) = delete;
  ~RunFiles();

  std::string state_path() const { return dir_ + "/state"; }
  std::string status_path() const { return dir_ + "/status"; }

  // The state file as the run left it; an error when it outgrew `limit`.
  core::Result<std::string> read_state(std::size_t limit) const;
  // The last non-empty line of the status file, or "".
  std::string last_status_line() const;

 private:
  explicit RunFiles(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// The last non-empty line of `text`, without its newline, at most 500 bytes.
std::string last_line(std::string_view text);

}  // namespace taskd::exec
