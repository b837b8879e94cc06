#include "exec/service_manager.hpp"

#include <systemd/sd-daemon.h>

#include <cstdint>
#include <cstdlib>

namespace taskd::exec {

ServiceManager ServiceManager::from_environment() {
  ServiceManager manager;
  const char* socket = std::getenv("NOTIFY_SOCKET");
  manager.notifying_ = socket && *socket;
  std::uint64_t usec = 0;
  // It checks WATCHDOG_PID, when set, against this process.
  if (manager.notifying_ && sd_watchdog_enabled(0, &usec) > 0 && usec > 0)
    manager.watchdog_ = std::chrono::microseconds{usec};
  manager.last_ping_ = std::chrono::steady_clock::now();
  return manager;
}

void ServiceManager::send(const std::string& message) {
  // A manager that went away is no reason to stop scheduling: its answer is ignored.
  if (notifying_) (void)sd_notify(0, message.c_str());
}

void ServiceManager::ready(std::string_view status) {
  last_status_ = status;
  send("READY=1\nSTATUS=" + last_status_);
}

void ServiceManager::status(std::string_view status) {
  if (!notifying_ || status == last_status_) return;
  last_status_ = status;
  send("STATUS=" + last_status_);
}

void ServiceManager::stopping(std::string_view status) {
  last_status_ = status;
  send("STOPPING=1\nSTATUS=" + last_status_);
}

void ServiceManager::keep_alive(SteadyTime now) {
  auto due = next_ping_at();
  if (!due || now < *due) return;
  send("WATCHDOG=1");
  last_ping_ = now;
}

std::optional<ServiceManager::SteadyTime> ServiceManager::next_ping_at() const {
  if (!watchdog_) return std::nullopt;
  return last_ping_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(*watchdog_ / 2);
}

}  // namespace taskd::exec
