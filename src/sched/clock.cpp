#include "sched/clock.hpp"

namespace taskd::sched {
namespace {

core::Time system_now() { return std::chrono::floor<core::Millis>(std::chrono::system_clock::now()); }

}  // namespace

core::Time SystemClock::now() const { return system_now() - core::Millis{offset_ms_.load()}; }

core::Result<std::optional<core::Millis>> follow_server_clock(store::Database& db, const Clock& clock) {
  auto before = system_now();
  auto server = store::server_time(db);
  if (!server) return std::unexpected(server.error());
  if (!*server) return std::nullopt;
  auto after = system_now();
  auto offset = before + (after - before) / 2 - **server;
  clock.correct_by(offset);
  return offset;
}

}  // namespace taskd::sched
