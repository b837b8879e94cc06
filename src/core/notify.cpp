#include "core/notify.hpp"

namespace taskd::core {
namespace {

bool is_failing(const TaskState& state) {
  return state.last_status && *state.last_status != RunStatus::succeeded;
}

std::string optional_number(const std::optional<int>& number) {
  return number ? std::to_string(*number) : std::string();
}

}  // namespace

std::string_view to_string(NotifyEvent event) {
  switch (event) {
    case NotifyEvent::failed: return "failed";
    case NotifyEvent::recovered: return "recovered";
    case NotifyEvent::disabled: return "disabled";
    case NotifyEvent::exhausted: return "exhausted";
  }
  return "failed";
}

std::optional<NotifyEvent> state_change(const TaskState& before, const TaskState& after) {
  if (after.disabled_until_update && !before.disabled_until_update) return NotifyEvent::disabled;
  if (after.ladder_exhausted_at && !before.ladder_exhausted_at) return NotifyEvent::exhausted;
  if (is_failing(after) && !is_failing(before)) return NotifyEvent::failed;
  if (is_failing(before) && after.last_status == RunStatus::succeeded) return NotifyEvent::recovered;
  return std::nullopt;
}

std::string_view output_tail(std::string_view output, std::size_t limit) {
  if (output.size() <= limit) return output;
  auto tail = output.substr(output.size() - limit);
  while (!tail.empty() && (static_cast<unsigned char>(tail.front()) & 0xc0) == 0x80) tail.remove_prefix(1);
  return tail;
}

std::vector<EnvVar> notify_variables(const NotifyFacts& facts) {
  return {
      {"TASKD_NOTIFY", std::string(to_string(facts.event))},
      {"TASKD_TASK", facts.task},
      {"TASKD_RUN_ID", std::to_string(facts.run_id)},
      {"TASKD_RUN_STATUS", std::string(to_string(facts.status))},
      {"TASKD_EXIT_CODE", optional_number(facts.exit_code)},
      {"TASKD_SIGNAL", optional_number(facts.signal)},
      {"TASKD_REASON", facts.reason},
      {"TASKD_DISABLED_REASON", facts.disabled_reason},
      {"TASKD_ATTEMPT_NO", std::to_string(facts.attempt_no)},
      {"TASKD_FINISHED_AT", format_rfc3339(facts.at)},
  };
}

}  // namespace taskd::core
