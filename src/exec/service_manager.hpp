#pragma once
// systemd's notify protocol (sd_notify(3)), for `taskd run` and `taskd work`
// started by a unit of Type=notify: READY=1 once the loop has passed once,
// WATCHDOG=1 from the loop itself while it goes round (a loop that is stuck
// stops the pings, and systemd restarts it), a STATUS= line, and STOPPING=1
// when it stops. Without $NOTIFY_SOCKET every call does nothing. The
// variables stay in taskd's environment (an upgrade in place executes with
// it) and are withheld from the tasks (sched/environment).
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace taskd::exec {

class ServiceManager {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;

  // Whether systemd waits to be told, and its watchdog's interval if any.
  static ServiceManager from_environment();
  bool notifying() const { return notifying_; }

  void ready(std::string_view status);
  // Sent only when it differs from the last one sent.
  void status(std::string_view status);
  void stopping(std::string_view status);
  // WATCHDOG=1 once half the watchdog's interval has passed since the last.
  void keep_alive(SteadyTime now);
  // When keep_alive has to ping next; none without a watchdog.
  std::optional<SteadyTime> next_ping_at() const;

 private:
  void send(const std::string& message);

  bool notifying_ = false;
  std::optional<std::chrono::microseconds> watchdog_;
  SteadyTime last_ping_{};
  std::string last_status_;
};

}  // namespace taskd::exec
