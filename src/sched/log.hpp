#pragma once
// The event log of the long-running commands: one logfmt line per event
// (`ts=… level=info event=run.finished task=backup run=12 …`), to stderr or
// appended to a file that SIGHUP reopens (for logrotate).
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "sched/clock.hpp"
#include "sched/report.hpp"

namespace taskd::sched {

enum class LogLevel { debug, info, warn, error };

// "debug", "info", "warn" or "error"; anything else is a usage error.
core::Result<LogLevel> parse_log_level(std::string_view text);

struct LogField {
  std::string_view key;
  std::string value;
};

// One line without its newline. A value is quoted when it is empty or holds
// a space, '=', '"' or a control character; '"', '\' and newlines are escaped.
std::string logfmt_line(core::Time ts, LogLevel level, std::string_view event, const std::vector<LogField>& fields);

class Logger {
 public:
  // Logs to stderr when `path` is empty, else appends to the file (0600 when
  // created); a symbolic link, or a file that neither this user nor root
  // owns, is refused.
  static core::Result<Logger> open(std::string path, LogLevel threshold, const Clock& clock);
  Logger(Logger&& other) noexcept;
  Logger& operator=(Logger&&) = delete;
  Logger(const Logger&) = delete;
  ~Logger();

  // Writes the line if `level` reaches the threshold; a line is one write(2).
  void log(LogLevel level, std::string_view event, const std::vector<LogField>& fields);
  bool enabled(LogLevel level) const { return level >= threshold_; }
  // Opens the file again (after a rotation); stderr needs nothing.
  core::Result<void> reopen();

 private:
  Logger(std::string path, int fd, LogLevel threshold, const Clock& clock)
      : path_(std::move(path)), fd_(fd), threshold_(threshold), clock_(clock) {}
  std::string path_;
  int fd_;
  LogLevel threshold_;
  const Clock& clock_;
};

// The event line of a run report: run.queued, run.skipped, run.started,
// run.dropped, run.finished, run.lost, or run.stale (an outcome ignored).
void log_report(Logger& log, const RunReport& report);

}  // namespace taskd::sched
