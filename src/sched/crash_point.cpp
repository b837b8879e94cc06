#include "sched/crash_point.hpp"

#include <array>
#include <charconv>
#include <csignal>
#include <fmt/format.h>
#include <utility>

namespace taskd::sched {
namespace {

constexpr std::array<std::pair<std::string_view, CrashPoint>, 4> point_names{{
    {"enqueue", CrashPoint::enqueue},
    {"after-claim", CrashPoint::after_claim},
    {"after-spawn", CrashPoint::after_spawn},
    {"after-exit", CrashPoint::after_exit},
}};

core::Result<CrashSwitch> bad_value(std::string_view text) {
  return core::fail(core::ErrorKind::usage,
                    fmt::format("TASKD_CRASH_AT: \"{}\" is not POINT[:N] with POINT one of enqueue, after-claim, "
                                "after-spawn, after-exit and N at least 1",
                                text));
}

}  // namespace

void CrashSwitch::reached(CrashPoint point) {
  if (point != point_ || ++seen_ != nth_) return;
  ::raise(SIGKILL);
}

core::Result<CrashSwitch> parse_crash_switch(std::string_view text) {
  if (text.empty()) return CrashSwitch{};
  auto colon = text.find(':');
  std::string_view name = text.substr(0, colon);
  int nth = 1;
  if (colon != std::string_view::npos) {
    std::string_view count = text.substr(colon + 1);
    auto [end, error] = std::from_chars(count.data(), count.data() + count.size(), nth);
    if (error != std::errc{} || end != count.data() + count.size() || nth < 1) return bad_value(text);
  }
  for (const auto& [known, point] : point_names) {
    if (name == known) return CrashSwitch{point, nth};
  }
  return bad_value(text);
}

}  // namespace taskd::sched
