#pragma once
// The signals a long-running taskd obeys (SIGTERM, SIGINT, SIGHUP, SIGUSR2), read
// from a descriptor instead of handled asynchronously, so the loop sees
// them in the same poll() as its children and the database.
#include <vector>

#include "core/error.hpp"

namespace taskd::exec {

class SignalWatch {
 public:
  // Blocks the signals, so that one that comes before open() waits for it
  // instead of ending the process.
  static core::Result<void> block();
  // Blocks the signals and opens a signalfd for them.
  static core::Result<SignalWatch> open();
  SignalWatch(SignalWatch&& other) noexcept;
  SignalWatch& operator=(SignalWatch&&) = delete;
  SignalWatch(const SignalWatch&) = delete;
  // Closes the descriptor. The signals stay blocked: taskd is about to exit,
  // and one that arrives now must not turn a clean exit into a killed one;
  // or about to execute itself again, whose new image finds it pending.
  ~SignalWatch();

  int fd() const { return fd_; }
  // The signals that arrived since the last call, in order.
  std::vector<int> take();

 private:
  explicit SignalWatch(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace taskd::exec
