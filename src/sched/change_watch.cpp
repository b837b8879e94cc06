#include "sched/change_watch.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <sys/inotify.h>
#include <unistd.h>

namespace taskd::sched {

core::Result<ChangeWatch> ChangeWatch::open(store::Database& db) {
  if (!db.file()) {
    TRY(store::notice_socket(db));
    return ChangeWatch(-1, {}, &db);
  }
  const auto& database = *db.file();
  int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0)
    return core::fail(core::ErrorKind::internal, fmt::format("cannot start inotify: {}", std::strerror(errno)));
  // The directory, not the files: the -wal comes and goes with the connections.
  auto dir = database.parent_path().empty() ? std::filesystem::path(".") : database.parent_path();
  if (::inotify_add_watch(fd, dir.c_str(), IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
    int error = errno;
    ::close(fd);
    return core::fail(core::ErrorKind::internal,
                      fmt::format("cannot watch {} for changes: {}", dir.string(), std::strerror(error)));
  }
  return ChangeWatch(fd, database, nullptr);
}

ChangeWatch::ChangeWatch(ChangeWatch&& other) noexcept
    : fd_(other.fd_), name_(std::move(other.name_)), server_(other.server_) {
  other.fd_ = -1;
}

int ChangeWatch::fd() {
  if (!server_) return fd_;
  return store::notice_socket(*server_).value_or(-1);
}

ChangeWatch::~ChangeWatch() {
  if (fd_ >= 0) ::close(fd_);
}

bool ChangeWatch::drain() {
  if (server_) return store::take_notices(*server_).value_or(true);
  alignas(inotify_event) std::array<char, 4096> buffer;
  bool database_changed = false;
  while (true) {
    ssize_t n = ::read(fd_, buffer.data(), buffer.size());
    if (n <= 0) return database_changed;
    for (ssize_t offset = 0; offset < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer.data() + offset);
      std::string_view name = event->len > 0 ? std::string_view(event->name) : std::string_view();
      bool lost_events = (event->mask & IN_Q_OVERFLOW) != 0;
      if (lost_events || name == name_ || name == name_ + "-wal") database_changed = true;
      offset += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
}

}  // namespace taskd::sched
