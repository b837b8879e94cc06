#pragma once
// How the scheduler looks at and stops processes of other workers (by pid and
// start time, so a reused pid is never hit); tests pass a fake.
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace taskd::sched {

class ProcessTable {
 public:
  virtual ~ProcessTable() = default;
  // Whether the process `pid` that started at `start_ticks` still runs.
  virtual bool is_running(pid_t pid, std::int64_t start_ticks) const = 0;
  // SIGKILL to the group `pid` leads, if that process is still the same one
  // or gone (its group may remain); returns once the group is gone (at most 2 s).
  virtual void kill_group(pid_t pid, std::int64_t start_ticks) const = 0;
  // SIGTERM to the group `pid` leads, if that process is still the same one.
  virtual void terminate_group(pid_t pid, std::int64_t start_ticks) const = 0;
  // What a worker that died before recording its child's pid left running:
  // SIGKILL to the group of `spawned` (the pid its spawn ledger lists, 0 if
  // none) once its leader is gone, and to the groups of the processes that
  // carry the attempt's token in their environment ($TASKD_ATTEMPT_UID);
  // returns once the first is gone (at most 2 s).
  virtual void kill_attempt(const std::string& attempt_uid, pid_t spawned) const = 0;
};

class SystemProcessTable final : public ProcessTable {
 public:
  bool is_running(pid_t pid, std::int64_t start_ticks) const override;
  void kill_group(pid_t pid, std::int64_t start_ticks) const override;
  void terminate_group(pid_t pid, std::int64_t start_ticks) const override;
  void kill_attempt(const std::string& attempt_uid, pid_t spawned) const override;
};

// The real processes of this machine.
const ProcessTable& system_processes();

}  // namespace taskd::sched
