#include "exec/reexec.hpp"

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/handover.hpp"

namespace taskd::exec {

Image this_image(std::vector<std::string> argv) {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error).native();
  constexpr std::string_view deleted = " (deleted)";
  if (path.ends_with(deleted)) path.resize(path.size() - deleted.size());
  if (error && !argv.empty()) path = argv.front();
  return {std::move(path), std::move(argv)};
}

namespace {

// How long a binary may take to answer --handover-format.
constexpr auto answer_wait = std::chrono::seconds(2);

core::Error cannot_execute(const Image& image, int error) {
  return {core::ErrorKind::unavailable, fmt::format("cannot execute {}: {}", image.path, std::strerror(error))};
}

// What `image --handover-format` prints on its standard output within
// answer_wait (its standard input and error /dev/null).
core::Result<std::string> answer_of(const Image& image) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return std::unexpected(cannot_execute(image, errno));
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  ::posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::string argv0 = image.argv.empty() ? image.path : image.argv.front();
  std::string option(handover_format_option);
  std::array<char*, 3> args{argv0.data(), option.data(), nullptr};
  pid_t pid = 0;
  int spawned = ::posix_spawn(&pid, image.path.c_str(), &actions, nullptr, args.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (spawned != 0) {
    ::close(out[0]);
    return std::unexpected(cannot_execute(image, spawned));
  }
  std::string answer;
  auto until = std::chrono::steady_clock::now() + answer_wait;
  for (std::chrono::milliseconds left = answer_wait; left.count() > 0 && answer.size() < 64;
       left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now())) {
    pollfd readable{out[0], POLLIN, 0};
    if (::poll(&readable, 1, static_cast<int>(left.count())) <= 0) break;
    std::array<char, 64> buffer;
    ssize_t n = ::read(out[0], buffer.data(), buffer.size());
    if (n <= 0) break;
    answer.append(buffer.data(), static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  ::kill(pid, SIGKILL);  // an answer is all it is for
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return answer;
}

}  // namespace

core::Result<bool> takes_handover(const Image& image) {
  auto answer = TRY(answer_of(image));
  return answer == fmt::format("{}\n", handover_version);
}

core::Error execute_again(const Image& image, std::optional<int> record, std::span<const int> kept) {
  std::vector<char*> args;
  for (const auto& word : image.argv) args.push_back(const_cast<char*>(word.c_str()));
  args.push_back(nullptr);
  std::string variable(handover_variable);
  if (record) {
    ::setenv(variable.c_str(), std::to_string(*record).c_str(), 1);
    keep_across_exec({&*record, 1}, true);
  }
  keep_across_exec(kept, true);
  ::execv(image.path.c_str(), args.data());
  int why = errno;
  keep_across_exec(kept, false);
  if (record) {
    ::close(*record);
    ::unsetenv(variable.c_str());
  }
  return cannot_execute(image, why);
}

}  // namespace taskd::exec
