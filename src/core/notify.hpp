#pragma once
// When a task's `--notify` command runs, and what it is told: the state
// changes a user wants to hear of, decided from the task's state before and
// after an attempt ended.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/task.hpp"

namespace taskd::core {

// failed: a healthy task's attempt failed (not each retry of a failing one);
// recovered: a failing task's attempt succeeded; disabled: the task stopped
// running until someone updates it (a permanent exit, or the retry ladder ran
// out with disable_when_exhausted); exhausted: the retry ladder ran out and
// the plan goes on (once in a failing streak, not at each later slot).
enum class NotifyEvent { failed, recovered, disabled, exhausted };

std::string_view to_string(NotifyEvent event);

// The change from `before` to `after` worth a notification, if any. A task
// that fails and is disabled, or runs out of retries, by the same attempt
// gets one: disabled, or exhausted.
std::optional<NotifyEvent> state_change(const TaskState& before, const TaskState& after);

// What the notify command is told about the attempt that made the change.
struct NotifyFacts {
  NotifyEvent event = NotifyEvent::failed;
  std::string task;
  std::int64_t run_id = 0;
  RunStatus status = RunStatus::failed;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string reason;          // the run's reason (its status line, or why it failed)
  std::string disabled_reason;
  int attempt_no = 0;
  std::optional<Time> started_at;  // when the attempt started
  Time at;                         // when the attempt ended
};

// The output's tail a notification carries: its last `limit` bytes at most,
// starting at a character (not inside a UTF-8 sequence).
std::string_view output_tail(std::string_view output, std::size_t limit);

// The TASKD_* variables of the notify command's environment.
std::vector<EnvVar> notify_variables(const NotifyFacts& facts);

}  // namespace taskd::core
