#include "sched/process_table.hpp"

#include "exec/process_identity.hpp"

namespace taskd::sched {

bool SystemProcessTable::is_running(pid_t pid, std::int64_t start_ticks) const {
  return exec::is_running(pid, start_ticks);
}

void SystemProcessTable::kill_group(pid_t pid, std::int64_t start_ticks) const {
  // The task may run again as soon as this returns: not while these still die.
  if (exec::kill_group_if_running(pid, start_ticks, SIGKILL)) exec::wait_for_group_gone(pid, std::chrono::seconds{2});
}

void SystemProcessTable::terminate_group(pid_t pid, std::int64_t start_ticks) const {
  exec::kill_group_if_running(pid, start_ticks, SIGTERM);
}

void SystemProcessTable::kill_attempt(const std::string& attempt_uid, pid_t spawned) const {
  if (spawned > 0 && exec::kill_group_if_leader_gone(spawned))
    exec::wait_for_group_gone(spawned, std::chrono::seconds{2});
  exec::kill_groups_with_environment("TASKD_ATTEMPT_UID=" + attempt_uid);
}

const ProcessTable& system_processes() {
  static const SystemProcessTable table;
  return table;
}

}  // namespace taskd::sched
