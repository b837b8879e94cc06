#pragma once
// A testing aid: TASKD_CRASH_AT=POINT[:N] makes `run` and `work` kill
// themselves with SIGKILL the N-th time they reach POINT, so crash tests hit
// exact code points rather than random moments.
#include <optional>
#include <string_view>

#include "core/error.hpp"

namespace taskd::sched {

enum class CrashPoint {
  enqueue,      // inside an enqueue transaction that queues runs, before its commit
  after_claim,  // a claim committed, before its runs are spawned
  after_spawn,  // a child started, before its pid is recorded in the run
  after_exit,   // a child reaped, before its outcome is recorded
};

class CrashSwitch {
 public:
  // Never crashes.
  CrashSwitch() = default;
  CrashSwitch(CrashPoint point, int nth) : point_(point), nth_(nth) {}

  // Raises SIGKILL on this process if this is the nth time `point` is reached.
  void reached(CrashPoint point);

 private:
  std::optional<CrashPoint> point_;
  int nth_ = 1;
  int seen_ = 0;
};

// Parses TASKD_CRASH_AT's value: "after-claim" or "after-claim:3"; an empty
// value never crashes. Anything else is a usage error that names it.
core::Result<CrashSwitch> parse_crash_switch(std::string_view text);

}  // namespace taskd::sched
