#include "sched/clock.hpp"

namespace taskd::sched {

core::Time SystemClock::now() const {
  return std::chrono::floor<core::Millis>(std::chrono::system_clock::now());
}

}  // namespace taskd::sched
