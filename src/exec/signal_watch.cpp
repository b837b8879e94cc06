#include "exec/signal_watch.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fmt/format.h>
#include <sys/signalfd.h>
#include <unistd.h>

namespace taskd::exec {
namespace {

sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR2);
  return set;
}

}  // namespace

core::Result<void> SignalWatch::block() {
  sigset_t set = watched_signals();
  if (::sigprocmask(SIG_BLOCK, &set, nullptr) != 0)
    return core::fail(core::ErrorKind::internal, fmt::format("cannot block signals: {}", std::strerror(errno)));
  return {};
}

core::Result<SignalWatch> SignalWatch::open() {
  TRY(block());
  sigset_t set = watched_signals();
  int fd = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) {
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    return core::fail(core::ErrorKind::internal, fmt::format("cannot open a signalfd: {}", std::strerror(errno)));
  }
  return SignalWatch(fd);
}

SignalWatch::SignalWatch(SignalWatch&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

SignalWatch::~SignalWatch() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<int> SignalWatch::take() {
  std::vector<int> signals;
  signalfd_siginfo info{};
  while (::read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info))
    signals.push_back(static_cast<int>(info.ssi_signo));
  return signals;
}

}  // namespace taskd::exec
