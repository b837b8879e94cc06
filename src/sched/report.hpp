#pragma once
// What the scheduler tells its caller about each run as it happens: queued,
// skipped, started, dropped, ended or lost; and of each task it set aside.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/task.hpp"

namespace taskd::sched {

// One run that was queued, skipped, started (status running) or ended.
struct RunReport {
  RunReport(std::int64_t id, std::string task_name, core::RunStatus run_status, std::string why,
            std::optional<core::Millis> attempt_duration = std::nullopt, bool superseded = false)
      : run_id(id), task(std::move(task_name)), status(run_status), reason(std::move(why)),
        duration(attempt_duration), stale(superseded) {}

  std::int64_t run_id = 0;  // 0 for a SKIPPED row, which stands for slots, not a run
  std::string task;
  core::RunStatus status = core::RunStatus::succeeded;
  std::string reason;
  std::optional<core::Millis> duration;  // of an attempt that ended
  bool stale = false;                    // its outcome was ignored: the attempt had been superseded
};

// Receives reports as they happen (after their transaction committed).
using ReportSink = std::function<void(const RunReport&)>;

// A task the scheduler met with its row in the database malformed: it
// disabled the task instead of running it. `problem` says what is wrong.
struct MalformedReport {
  std::string task;
  std::string problem;
};

}  // namespace taskd::sched
