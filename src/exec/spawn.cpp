#include "exec/spawn.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

namespace taskd::exec {
namespace {

constexpr const char* default_path = "/usr/local/bin:/usr/bin:/bin";

std::string path_of(const std::vector<std::string>& env) {
  for (const auto& entry : env) {
    if (entry.starts_with("PATH=")) return entry.substr(5);
  }
  return default_path;
}

bool is_executable_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// posix_spawn's attributes and file actions, released on every path out.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    posix_spawnattr_destroy(&attr_);
    posix_spawn_file_actions_destroy(&actions_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  void configure(int output_write_fd, const std::string& cwd) {
    sigset_t empty;
    sigset_t all;
    sigemptyset(&empty);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr_, &empty);
    posix_spawnattr_setsigdefault(&attr_, &all);  // taskd's handlers are not the child's
    posix_spawnattr_setpgroup(&attr_, 0);          // its own group, so a timeout kills it all
    posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawn_file_actions_addopen(&actions_, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions_, output_write_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions_, output_write_fd, STDERR_FILENO);
    // Descriptors taskd itself inherited (a flock from crontab, say) are not the child's.
    posix_spawn_file_actions_addclosefrom_np(&actions_, STDERR_FILENO + 1);
    if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions_, cwd.c_str());
  }

  const posix_spawnattr_t* attr() const { return &attr_; }
  const posix_spawn_file_actions_t* actions() const { return &actions_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

core::Result<void> check_cwd(const std::string& cwd) {
  if (cwd.empty()) return {};
  struct stat info {};
  if (::stat(cwd.c_str(), &info) != 0)
    return core::fail(core::ErrorKind::bad_input, fmt::format("cannot change to directory \"{}\": {}", cwd, std::strerror(errno)));
  if (!S_ISDIR(info.st_mode))
    return core::fail(core::ErrorKind::bad_input, fmt::format("cannot change to directory \"{}\": not a directory", cwd));
  return {};
}

}  // namespace

std::string find_program(const std::string& name, const std::string& path_list) {
  if (name.find('/') != std::string::npos) return name;
  std::size_t start = 0;
  while (start <= path_list.size()) {
    std::size_t end = path_list.find(':', start);
    if (end == std::string::npos) end = path_list.size();
    std::string dir = path_list.substr(start, end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable_file(candidate)) return candidate;
    start = end + 1;
  }
  return {};
}

core::Result<SpawnedChild> spawn_child(const SpawnRequest& request) {
  if (request.argv.empty() || request.argv.front().empty())
    return core::fail(core::ErrorKind::bad_input, "cannot execute an empty command");
  const std::string& name = request.argv.front();
  std::string path_list = path_of(request.env);
  std::string program = find_program(name, path_list);
  if (program.empty())
    return core::fail(core::ErrorKind::bad_input, fmt::format("cannot execute \"{}\": not found in PATH ({})", name, path_list));
  if (auto cwd_ok = check_cwd(request.cwd); !cwd_ok) return std::unexpected(cwd_ok.error());

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return core::fail(core::ErrorKind::internal, fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  SpawnSetup setup;
  setup.configure(fds[1], request.cwd);
  auto argv = c_strings(request.argv);
  auto envp = c_strings(request.env);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, program.c_str(), setup.actions(), setup.attr(), argv.data(), envp.data());
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return core::fail(core::ErrorKind::bad_input, fmt::format("cannot execute \"{}\": {}", program, std::strerror(rc)));
  }
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  return SpawnedChild{pid, fds[0]};
}

}  // namespace taskd::exec
