#pragma once
// The one place taskd reads the wall clock; tests and previews pass another.
#include "core/time.hpp"

namespace taskd::sched {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual core::Time now() const = 0;
};

class SystemClock final : public Clock {
 public:
  core::Time now() const override;
};

}  // namespace taskd::sched
