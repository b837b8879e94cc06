#include "sched/log.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/text.hpp"
#include "store/file_trust.hpp"

namespace taskd::sched {
namespace {

constexpr std::string_view level_names[] = {"debug", "info", "warn", "error"};

bool needs_quotes(std::string_view value) {
  if (value.empty()) return true;
  for (unsigned char c : value) {
    if (c <= ' ' || c == '=' || c == '"' || c == 0x7f) return true;
  }
  return core::needs_escaping(value);
}

// Quoted, with \", \\ and \r escapes, and the rest as core::printable shows it
// (\n, \t, \xNN): a reason is whatever a run wrote, and the log may be a
// terminal.
void append_value(std::string& line, std::string_view value) {
  if (!needs_quotes(value)) {
    line += value;
    return;
  }
  std::string quoted;
  for (char c : value) {
    switch (c) {
      case '"': quoted += "\\\""; break;
      case '\\': quoted += "\\\\"; break;
      case '\r': quoted += "\\r"; break;
      default: quoted += c;
    }
  }
  line += '"';
  line += core::printable(quoted);
  line += '"';
}

std::unexpected<core::Error> cannot_open_log_file(const std::string& path, int error) {
  return core::fail(core::ErrorKind::unavailable,
                    fmt::format("cannot open the log file {}: {}", path, std::strerror(error)));
}

std::unexpected<core::Error> refuse_log_file(std::string_view why) {
  return core::fail(core::ErrorKind::unavailable, fmt::format("refusing the log file: {}", why));
}

// The log file open at `fd` is one this user or root owns; then writes
// block again, as they did before into a pipe.
core::Result<void> check_opened_log_file(const std::string& path, int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return cannot_open_log_file(path, errno);
  if (auto owned = store::check_owner(path, info); !owned) return refuse_log_file(owned.error().message);
  if (::fcntl(fd, F_SETFL, O_APPEND) != 0) return cannot_open_log_file(path, errno);
  return {};
}

// Appends to the file itself: never through a symbolic link, nor to a file
// another user owns (either could send taskd's lines into a file of their
// choosing); a FIFO with no reader is refused, not waited for.
core::Result<int> open_log_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
  if (fd < 0) {
    int error = errno;
    struct stat link {};
    if (error == ELOOP && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
      return refuse_log_file(fmt::format("{} is a symbolic link (name the file it leads to)", path));
    return cannot_open_log_file(path, error);
  }
  if (auto checked = check_opened_log_file(path, fd); !checked) {
    ::close(fd);
    return std::unexpected(checked.error());
  }
  return fd;
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a full disk must not stop the scheduler
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string_view event_of(const RunReport& report) {
  if (report.stale) return "run.stale";
  switch (report.status) {
    // With the attempt's duration: it ran, and taskd's shutdown queued it again.
    case core::RunStatus::queued: return report.duration ? "run.requeued" : "run.queued";
    case core::RunStatus::running: return "run.started";
    case core::RunStatus::skipped: return "run.skipped";
    case core::RunStatus::dropped: return "run.dropped";
    case core::RunStatus::lost: return "run.lost";
    default: return "run.finished";
  }
}

LogLevel level_of(const RunReport& report) {
  if (report.stale) return LogLevel::warn;
  switch (report.status) {
    case core::RunStatus::failed:
    case core::RunStatus::timed_out:
    case core::RunStatus::lost: return LogLevel::warn;
    default: return LogLevel::info;
  }
}

}  // namespace

core::Result<LogLevel> parse_log_level(std::string_view text) {
  for (std::size_t i = 0; i < std::size(level_names); ++i) {
    if (text == level_names[i]) return static_cast<LogLevel>(i);
  }
  return core::fail(core::ErrorKind::usage,
                    fmt::format("--log-level: \"{}\" is not one of debug, info, warn, error", text));
}

std::string logfmt_line(core::Time ts, LogLevel level, std::string_view event, const std::vector<LogField>& fields) {
  std::string line = fmt::format("ts={} level={} event=", core::format_rfc3339(ts, core::Precision::milliseconds),
                                 level_names[static_cast<int>(level)]);
  append_value(line, event);
  for (const auto& field : fields) {
    line += ' ';
    line += field.key;
    line += '=';
    append_value(line, field.value);
  }
  return line;
}

core::Result<Logger> Logger::open(std::string path, LogLevel threshold, const Clock& clock) {
  if (path.empty()) return Logger(std::move(path), STDERR_FILENO, threshold, clock);
  auto fd = TRY(open_log_file(path));
  return Logger(std::move(path), fd, threshold, clock);
}

Logger::Logger(Logger&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), threshold_(other.threshold_), clock_(other.clock_) {
  other.fd_ = -1;
}

Logger::~Logger() {
  if (fd_ > STDERR_FILENO) ::close(fd_);
}

void Logger::log(LogLevel level, std::string_view event, const std::vector<LogField>& fields) {
  if (!enabled(level)) return;
  write_all(fd_, logfmt_line(clock_.now(), level, event, fields) + "\n");
}

core::Result<void> Logger::reopen() {
  if (path_.empty()) return {};
  auto fd = TRY(open_log_file(path_));
  ::close(fd_);
  fd_ = fd;
  return {};
}

void log_report(Logger& log, const RunReport& report) {
  std::vector<LogField> fields{{"task", report.task}};
  if (report.run_id != 0) fields.push_back({"run", std::to_string(report.run_id)});
  fields.push_back({"status", std::string(core::to_string(report.status))});
  if (report.duration)
    fields.push_back({"duration", fmt::format("{:.3f}", std::chrono::duration<double>(*report.duration).count())});
  if (!report.reason.empty()) fields.push_back({"reason", report.reason});
  log.log(level_of(report), event_of(report), fields);
}

}  // namespace taskd::sched
