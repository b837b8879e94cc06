#include "exec/spawn_ledger.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <utility>

namespace taskd::exec {

// A file already at `path` is a crashed process's, that had the same pid
// and start, or was put there for taskd to write into: it is unlinked, never
// opened, and the ledger is a new file of its own.
core::Result<SpawnLedger> SpawnLedger::create(std::string path) {
  ::unlink(path.c_str());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return core::fail(core::ErrorKind::internal,
                      fmt::format("cannot create the spawn ledger {}: {}", path, std::strerror(errno)));
  return SpawnLedger(std::move(path), fd);
}

SpawnLedger::SpawnLedger(SpawnLedger&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

SpawnLedger::~SpawnLedger() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(path_.c_str());
}

void SpawnLedger::clear() { (void)!::ftruncate(fd_, 0); }

std::string spawn_ledger_path(const std::filesystem::path& db_path, pid_t pid, std::int64_t start_ticks) {
  return fmt::format("{}-spawns.{}.{}", db_path.string(), pid, start_ticks);
}

pid_t find_in_spawn_ledger(const std::string& path, std::string_view tag) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::string_view entry(line);
    if (!entry.starts_with(tag) || entry.size() <= tag.size() || entry[tag.size()] != ' ') continue;
    entry.remove_prefix(tag.size() + 1);
    pid_t pid = 0;
    auto [end, error] = std::from_chars(entry.data(), entry.data() + entry.size(), pid);
    if (error == std::errc() && end == entry.data() + entry.size() && pid > 0) return pid;
  }
  return 0;
}

void remove_spawn_ledger(const std::string& path) { ::unlink(path.c_str()); }

}  // namespace taskd::exec
