#include "ops/json.hpp"

#include <fmt/format.h>

#include "core/policy.hpp"
#include "core/task_fields.hpp"

namespace taskd::ops {

Json time_json(const std::optional<core::Time>& time, core::Precision precision) {
  return time ? Json(core::format_rfc3339(*time, precision)) : Json(nullptr);
}

Json seconds_json(const std::optional<core::Millis>& duration) {
  if (!duration) return nullptr;
  if (*duration % core::Seconds{1} == core::Millis{0}) return std::chrono::duration_cast<core::Seconds>(*duration).count();
  return static_cast<double>(duration->count()) / 1000;
}

namespace {

using core::Precision;

Json value_json(const core::FieldValue& value) {
  return std::visit(
      [](const auto& held) -> Json {
        if constexpr (std::is_same_v<std::decay_t<decltype(held)>, std::monostate>) {
          return nullptr;
        } else {
          return held;
        }
      },
      value);
}

// The timeout and the tolerance a run has: those given, else the schedule's
// defaults (at the epoch, for a schedule whose interval varies).
void add_effective_policy(Json& out, const core::TaskDefinition& d, const std::optional<core::Schedule>& schedule) {
  if (!schedule) return;
  auto epoch = core::Time{};
  out["timeout"] = seconds_json(core::effective_timeout(d, *schedule, epoch));
  if (auto interval = core::interval_around(*schedule, epoch))
    out["tolerance"] = seconds_json(core::effective_tolerance(d, *interval));
}

Json definition_json(const core::TaskDefinition& d, const std::optional<core::Schedule>& schedule) {
  Json out;
  out["name"] = d.name;
  out["command"] = d.command.shell ? Json(d.command.argv.empty() ? "" : d.command.argv.front()) : Json(d.command.argv);
  out["shell"] = d.command.shell;
  out["schedule"] = {{"kind", core::to_string(d.schedule_kind)}, {"spec", d.schedule_spec}};
  out["tz"] = d.tz;
  out["dtstart"] = d.dtstart ? Json(core::format_local(*d.dtstart)) : Json(nullptr);
  out["after_finish"] = d.after_finish;
  out["phase"] = seconds_json(d.phase);
  out["jitter"] = d.jitter.count();
  out["dst_gap"] = d.dst.gap ? Json(core::to_string(*d.dst.gap)) : Json(nullptr);
  out["dst_repeat"] = d.dst.repeat ? Json(core::to_string(*d.dst.repeat)) : Json(nullptr);
  for (const auto& field : core::task_fields()) {
    if (field.name == "overlap") {
      Json retry = Json::array();
      for (auto delay : d.retry) retry.push_back(delay.count());
      out["retry"] = retry;
      out["permanent_exit"] = d.permanent_exit;
    }
    if (field.name == "notify") {
      out["cwd"] = d.cwd;
      Json env = Json::object();
      for (const auto& [name, value] : d.env) env[name] = value;
      out["env"] = env;
    }
    out[std::string(field.name)] = value_json(field.value(d));
  }
  add_effective_policy(out, d, schedule);
  out["after"] = d.after.task.empty() ? Json(nullptr) : Json(core::to_string(d.after));
  out["from_defaults"] = d.from_defaults;
  return out;
}

}  // namespace

Json task_json(const core::Task& task) {
  Json out = definition_json(task.definition, task.schedule);
  const auto& s = task.state;
  out["next_run_at"] = time_json(s.next_run_at);
  out["last_run_at"] = time_json(s.last_run_at, Precision::milliseconds);
  out["last_finished_at"] = time_json(s.last_finished_at, Precision::milliseconds);
  out["last_status"] = s.last_status ? Json(core::to_string(*s.last_status)) : Json(nullptr);
  out["attempt_no"] = s.attempt_no;
  out["attempt_uid"] = s.attempt_uid.empty() ? Json(nullptr) : Json(s.attempt_uid);
  out["attempt_started_at"] = time_json(s.attempt_started_at, Precision::milliseconds);
  out["attempt_timeout_at"] = time_json(s.attempt_timeout_at, Precision::milliseconds);
  out["run_index"] = s.run_index;
  out["disabled_until_update"] = s.disabled_until_update;
  out["disabled_reason"] = s.disabled_reason;
  out["paused"] = s.paused;
  out["last_succeeded_at"] = time_json(s.last_succeeded_at, Precision::milliseconds);
  out["failing_since"] = time_json(s.failing_since, Precision::milliseconds);
  out["ladder_exhausted_at"] = time_json(s.ladder_exhausted_at, Precision::milliseconds);
  return out;
}

namespace {

// The key of task_json that shows a column of the tasks table.
std::string_view json_key_of(std::string_view column) {
  if (column == "schedule_kind" || column == "schedule_spec") return "schedule";
  if (const auto* field = core::task_field_of_column(column)) return field->name;
  if (column == "after_task" || column == "after_finished") return "after";
  return column;
}

}  // namespace

Json stored_task_json(const store::StoredTask& task) {
  if (task) return task_json(*task);
  const auto& malformed = task.error();
  Json out = task_json(malformed.readable);
  Json problems = Json::array();
  for (const auto& [column, what] : malformed.problems) {
    if (auto key = std::string(json_key_of(column)); out.contains(key)) out[key] = nullptr;
    problems.push_back({{"column", column}, {"problem", what}});
  }
  out["malformed"] = problems;
  return out;
}

Json run_json(const store::RunRecord& run) {
  Json out;
  out["id"] = run.id;
  out["task"] = run.task;
  out["status"] = core::to_string(run.status);
  out["scheduled_at"] = time_json(run.scheduled_at);
  out["enqueued_at"] = time_json(run.enqueued_at, Precision::milliseconds);
  out["started_at"] = time_json(run.started_at, Precision::milliseconds);
  out["finished_at"] = time_json(run.finished_at, Precision::milliseconds);
  out["exit_code"] = run.exit_code ? Json(*run.exit_code) : Json(nullptr);
  out["signal"] = run.signal ? Json(*run.signal) : Json(nullptr);
  out["attempt_no"] = run.attempt_no;
  out["attempt_uid"] = run.attempt_uid.empty() ? Json(nullptr) : Json(run.attempt_uid);
  out["run_index"] = run.run_index;
  out["reason"] = run.reason;
  out["trigger"] = core::to_string(run.trigger);
  out["duration"] = run.started_at && run.finished_at
                        ? Json(std::chrono::duration<double>(*run.finished_at - *run.started_at).count())
                        : Json(nullptr);
  out["output_bytes"] = run.output_bytes;
  out["output_truncated"] = run.output_truncated;
  out["cpu_seconds"] = run.usage.cpu ? Json(std::chrono::duration<double>(*run.usage.cpu).count()) : Json(nullptr);
  out["peak_memory_bytes"] = run.usage.peak_memory_bytes ? Json(*run.usage.peak_memory_bytes) : Json(nullptr);
  out["upstream_run_id"] = run.upstream_run_id ? Json(*run.upstream_run_id) : Json(nullptr);
  out["host"] = run.host.empty() ? Json(nullptr) : Json(run.host);
  return out;
}

}  // namespace taskd::ops
