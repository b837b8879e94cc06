#include "exec/handover.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "core/duration.hpp"
#include "exec/cgroup.hpp"

namespace taskd::exec {
namespace {

// The longest field a record holds: the output kept of a run is bounded by
// its --keep-output, far below this.
constexpr std::size_t max_field = std::size_t{1} << 34;

core::Error malformed(std::string_view what, std::string_view why) {
  return {core::ErrorKind::bad_input, fmt::format("the hand-over record's {} {}", what, why)};
}

}  // namespace

void RecordWriter::text(std::string_view value) {
  record_ += std::to_string(value.size());
  record_ += ':';
  record_ += value;
}

void RecordWriter::number(std::int64_t value) { text(std::to_string(value)); }

void RecordWriter::optional(const std::optional<std::int64_t>& value) {
  flag(value.has_value());
  if (value) number(*value);
}

void RecordWriter::steady(std::chrono::steady_clock::time_point at) {
  number(std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count());
}

core::Result<std::string> RecordReader::text(std::string_view what) {
  auto colon = rest_.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 12) return std::unexpected(malformed(what, "is missing"));
  std::size_t length = 0;
  auto [end, error] = std::from_chars(rest_.data(), rest_.data() + colon, length);
  if (error != std::errc{} || end != rest_.data() + colon || length > max_field || length > rest_.size() - colon - 1)
    return std::unexpected(malformed(what, "has a bad length"));
  std::string value(rest_.substr(colon + 1, length));
  rest_.remove_prefix(colon + 1 + length);
  return value;
}

core::Result<std::int64_t> RecordReader::number(std::string_view what) {
  auto digits = TRY(text(what));
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc{} || end != digits.data() + digits.size())
    return std::unexpected(malformed(what, "is not a number"));
  return value;
}

core::Result<bool> RecordReader::flag(std::string_view what) { return TRY(number_in(what, 0, 1)) == 1; }

core::Result<std::optional<std::int64_t>> RecordReader::optional(std::string_view what) {
  if (!TRY(flag(what))) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(TRY(number(what)));
}

core::Result<std::chrono::steady_clock::time_point> RecordReader::steady(std::string_view what, std::int64_t latest) {
  auto nanoseconds = std::chrono::nanoseconds(TRY(number_in(what, 0, latest)));
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(nanoseconds));
}

core::Result<std::int64_t> RecordReader::number_in(std::string_view what, std::int64_t low, std::int64_t high) {
  auto value = TRY(number(what));
  if (value < low || value > high) return std::unexpected(malformed(what, fmt::format("{} is out of range", value)));
  return value;
}

void write_shutdown_list(RecordWriter& record, const ShutdownList& list) {
  record.number(static_cast<std::int64_t>(list.runs.size()));
  for (const auto& run : list.runs) {
    record.number(run.run_id);
    record.number(run.task_id);
    record.text(run.task);
    record.text(run.attempt_uid);
    record.number(run.trigger);
    record.number(run.pid);
    record.number(run.output_fd);
    record.number(run.kill_grace_seconds);
    record.number(run.run_attempt_no);
    record.number(run.run_index);
    record.number(run.before_attempt_no);
    record.number(run.before_run_index);
    record.optional(run.before_last_run_at_ms);
  }
  record.number(static_cast<std::int64_t>(list.other_fds.size()));
  for (auto fd : list.other_fds) record.number(fd);
  record.text(list.cgroup_tree);
  record.text(list.cgroup_home);
}

core::Result<ShutdownList> read_shutdown_list(RecordReader& record) {
  constexpr auto most = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t max_fd = std::numeric_limits<int>::max();
  ShutdownList list;
  auto runs = TRY(record.number_in("count of runs", 0, 1 << 20));
  for (std::int64_t i = 0; i < runs; ++i) {
    ShutdownEntry run;
    run.run_id = TRY(record.number_in("run id", 1, most));
    run.task_id = TRY(record.number_in("task id", 1, most));
    run.task = TRY(record.text("task name"));
    run.attempt_uid = TRY(record.text("attempt token"));
    run.trigger = TRY(record.number_in("trigger", 0, 2));
    run.pid = TRY(record.number_in("child pid", 2, std::numeric_limits<pid_t>::max()));
    run.output_fd = TRY(record.number_in("output descriptor", -1, max_fd));
    run.kill_grace_seconds = TRY(record.number_in("kill grace", 0, core::longest_duration.count()));
    run.run_attempt_no = TRY(record.number("run's attempt number"));
    run.run_index = TRY(record.number("run index"));
    run.before_attempt_no = TRY(record.number("task's attempt number"));
    run.before_run_index = TRY(record.number("task's run index"));
    run.before_last_run_at_ms = TRY(record.optional("task's last run"));
    list.runs.push_back(std::move(run));
  }
  auto fds = TRY(record.number_in("count of descriptors", 0, 16));
  for (std::int64_t i = 0; i < fds; ++i) list.other_fds.push_back(TRY(record.number_in("descriptor", 0, max_fd)));
  list.cgroup_tree = TRY(record.text("cgroup tree"));
  list.cgroup_home = TRY(record.text("cgroup home"));
  return list;
}

void end_children(const ShutdownList& list) {
  auto now = std::chrono::steady_clock::now();
  auto kill_at = now;
  std::vector<pid_t> left;
  for (const auto& run : list.runs) {
    auto pid = static_cast<pid_t>(run.pid);
    // Only a child of this process's: a hostile list names no other.
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) continue;
    ::kill(-pid, SIGTERM);
    kill_at = std::max(kill_at, now + std::chrono::seconds(run.kill_grace_seconds));
    left.push_back(pid);
  }
  // Polled: these are children the loop does not watch yet.
  while (!left.empty() && std::chrono::steady_clock::now() < kill_at) {
    std::erase_if(left, [](pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) == pid; });
    if (!left.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (pid_t pid : left) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  // Taken down as it goes, this process moving home first.
  CgroupTree::Handed tree{list.cgroup_tree, list.cgroup_home, 0};
  if (!list.cgroup_tree.empty() && CgroupTree::check_handed(tree)) auto taken_down = CgroupTree::adopt(std::move(tree));
}

core::Result<int> seal_record(std::string_view record) {
  int fd = ::memfd_create("taskd-handover", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return core::fail(core::ErrorKind::internal, fmt::format("cannot make a memfd: {}", std::strerror(errno)));
  std::string_view rest = record;
  while (!rest.empty()) {
    ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      auto error = core::fail(core::ErrorKind::internal,
                              fmt::format("cannot write the hand-over record: {}", std::strerror(errno)));
      ::close(fd);
      return error;
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) != 0) {
    auto error = core::fail(core::ErrorKind::internal,
                            fmt::format("cannot seal the hand-over record: {}", std::strerror(errno)));
    ::close(fd);
    return error;
  }
  return fd;
}

void keep_across_exec(std::span<const int> fds, bool keep) {
  for (int fd : fds) {
    int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0) ::fcntl(fd, F_SETFD, keep ? flags & ~FD_CLOEXEC : flags | FD_CLOEXEC);
  }
}

bool Handover::inherits(std::int64_t fd) const { return std::ranges::binary_search(inherited, fd); }

void close_inherited(std::span<const int> inherited, std::span<const int> kept) {
  for (int fd : inherited)
    if (std::ranges::find(kept, fd) == kept.end()) ::close(fd);
}

void give_up_inherited(std::span<const int> inherited, std::chrono::milliseconds bound) {
  close_inherited(inherited, {});
  auto until = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < until) {
    pid_t reaped = ::waitpid(-1, nullptr, WNOHANG);
    if (reaped < 0 && errno == ECHILD) return;
    if (reaped <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

namespace {

// The descriptors above 2 open without FD_CLOEXEC, which is set on each.
std::vector<int> inherited_descriptors() {
  std::vector<int> fds;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    int fd = -1;
    auto name = entry.path().filename().native();
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc{} || fd <= 2) continue;
    int flags = ::fcntl(fd, F_GETFD);
    if (flags < 0 || (flags & FD_CLOEXEC) != 0) continue;
    ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    fds.push_back(fd);
  }
  std::ranges::sort(fds);
  return fds;
}

core::Result<std::string> read_record(const std::string& number) {
  std::string variable(handover_variable);
  int fd = -1;
  auto parsed = std::from_chars(number.data(), number.data() + number.size(), fd);
  if (number.empty() || parsed.ec != std::errc{} || parsed.ptr != number.data() + number.size() || fd < 3)
    return core::fail(core::ErrorKind::bad_input, fmt::format("${} is not a descriptor: \"{}\"", variable, number));
  // Ours only if it is a memfd sealed as seal_record seals it, of a size a
  // record may have; read to that size, no further.
  constexpr int seals_needed = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
  int seals = ::fcntl(fd, F_GET_SEALS);
  struct stat status {};
  std::string why = seals < 0                                                ? std::strerror(errno)
                    : (seals & seals_needed) != seals_needed                 ? "it is not sealed"
                    : ::fstat(fd, &status) != 0                              ? std::strerror(errno)
                    : static_cast<std::uint64_t>(status.st_size) > max_field ? "it is too large"
                                                                             : "";
  if (seals >= 0 && !why.empty()) ::close(fd);
  if (!why.empty())
    return core::fail(core::ErrorKind::bad_input,
                      fmt::format("${}={} names no hand-over record: {}", variable, number, why));
  std::string record(static_cast<std::size_t>(status.st_size), '\0');
  for (std::size_t at = 0; at < record.size();) {
    ssize_t n = ::pread(fd, record.data() + at, record.size() - at, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      auto error = core::fail(core::ErrorKind::bad_input,
                              fmt::format("cannot read the hand-over record: {}",
                                          n < 0 ? std::strerror(errno) : "it is shorter than its size"));
      ::close(fd);
      return error;
    }
    at += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return record;
}

}  // namespace

std::optional<Handover> take_handover() {
  std::string variable(handover_variable);
  const char* value = std::getenv(variable.c_str());
  if (!value) return std::nullopt;
  std::string number = value;
  ::unsetenv(variable.c_str());
  auto inherited = inherited_descriptors();
  auto record = read_record(number);
  std::erase_if(inherited, [](int fd) { return ::fcntl(fd, F_GETFD) < 0; });  // the record's, closed
  return Handover{std::move(record), std::move(inherited)};
}

}  // namespace taskd::exec
