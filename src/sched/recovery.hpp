#pragma once
// Leases, not hopes: a RUNNING run whose worker is provably gone is recorded
// LOST (a failure for the retry ladder), after whatever it left running is
// killed, so the task can run again and nothing stays stuck.
#include <cstdint>
#include <sys/types.h>
#include <vector>

#include "sched/worker.hpp"
#include "store/runs.hpp"

namespace taskd::sched {

// How recovery looks at processes; tests pass a fake.
class ProcessTable {
 public:
  virtual ~ProcessTable() = default;
  // Whether the process `pid` that started at `start_ticks` still runs.
  virtual bool is_running(pid_t pid, std::int64_t start_ticks) const = 0;
  // SIGKILL to the group `pid` leads, if that process is still the same one
  // or gone.
  virtual void kill_group(pid_t pid, std::int64_t start_ticks) const = 0;
};

class SystemProcessTable final : public ProcessTable {
 public:
  bool is_running(pid_t pid, std::int64_t start_ticks) const override;
  void kill_group(pid_t pid, std::int64_t start_ticks) const override;
};

// A worker on another host is judged gone only this long after its lease
// expired: it kills its children at the lease and reports right after.
inline constexpr std::chrono::seconds foreign_lease_margin{60};

// Records as LOST every running run whose worker is gone: on this host (same
// host name) at once when its process is dead or the machine rebooted; on
// another host once its lease has expired by the margin.
core::Result<std::vector<RunReport>> recover_lost_runs(store::Database& db, core::Time now,
                                                       const store::WorkerIdentity& self,
                                                       const ProcessTable& processes, int history_limit);

}  // namespace taskd::sched
