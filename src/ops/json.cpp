#include "ops/json.hpp"

#include <fmt/format.h>

#include "core/policy.hpp"
#include "core/task_fields.hpp"

namespace taskd::ops {

namespace {

void put_time(JsonSink& out, const std::optional<core::Time>& time, core::Precision precision) {
  if (!time) return out.null();
  out.string(core::Rfc3339Text(*time, precision).view());
}

}  // namespace

Json time_json(const std::optional<core::Time>& time, core::Precision precision) {
  JsonBuilder out;
  put_time(out, time, precision);
  return out.take();
}

void put_seconds(JsonSink& out, const std::optional<core::Millis>& duration) {
  if (!duration) return out.null();
  if (*duration % core::Seconds{1} == core::Millis{0})
    return out.integer(std::chrono::duration_cast<core::Seconds>(*duration).count());
  out.number(static_cast<double>(duration->count()) / 1000);
}

Json seconds_json(const std::optional<core::Millis>& duration) {
  JsonBuilder out;
  put_seconds(out, duration);
  return out.take();
}

namespace {

using core::Precision;

void time_field(JsonSink& out, std::string_view name, const std::optional<core::Time>& time,
                Precision precision = Precision::milliseconds) {
  out.key(name);
  put_time(out, time, precision);
}

void seconds_field(JsonSink& out, std::string_view name, const std::optional<core::Millis>& duration) {
  out.key(name);
  put_seconds(out, duration);
}

// The timeout and the tolerance a run has: those given, else the schedule's
// defaults (from its `interval` at the epoch, for a schedule whose interval
// varies). False for another field, or without a schedule: then the
// field's own value.
bool put_effective_policy(JsonSink& out, std::string_view field, const core::TaskDefinition& d,
                          const std::optional<core::Schedule>& schedule, std::optional<core::Seconds> interval) {
  if (!schedule) return false;
  if (field == "timeout") {
    seconds_field(out, field, core::effective_timeout(d, interval));
    return true;
  }
  if (field != "tolerance" || !interval) return false;
  seconds_field(out, field, core::effective_tolerance(d, *interval));
  return true;
}

void put_command(JsonSink& out, const core::Command& command) {
  out.key("command");
  if (command.shell) return out.string(command.argv.empty() ? "" : command.argv.front());
  out.begin_array();
  for (const auto& arg : command.argv) out.string(arg);
  out.end();
}

void put_retry(JsonSink& out, const core::TaskDefinition& d) {
  out.key("retry");
  out.begin_array();
  for (auto delay : d.retry) out.integer(delay.count());
  out.end();
  out.field("permanent_exit", d.permanent_exit);
}

void put_cwd_and_env(JsonSink& out, const core::TaskDefinition& d) {
  out.field("cwd", d.cwd);
  out.key("env");
  out.begin_object();
  for (const auto& [name, value] : d.env) out.field(name, value);
  out.end();
}

void put_definition(JsonSink& out, const core::TaskDefinition& d, const std::optional<core::Schedule>& schedule) {
  out.field("name", d.name);
  put_command(out, d.command);
  out.field("shell", d.command.shell);
  out.key("schedule");
  out.begin_object();
  out.field("kind", core::to_string(d.schedule_kind));
  out.field("spec", d.schedule_spec);
  out.end();
  out.field("tz", d.tz);
  out.field("dtstart", d.dtstart ? std::optional(core::format_local(*d.dtstart)) : std::nullopt);
  out.field("after_finish", d.after_finish);
  seconds_field(out, "phase", d.phase);
  out.field("jitter", d.jitter.count());
  out.field("dst_gap", d.dst.gap ? std::optional(core::to_string(*d.dst.gap)) : std::nullopt);
  out.field("dst_repeat", d.dst.repeat ? std::optional(core::to_string(*d.dst.repeat)) : std::nullopt);
  auto interval = schedule ? core::interval_at_epoch(d, *schedule) : std::nullopt;
  for (const auto& field : core::task_fields()) {
    if (field.name == "overlap") put_retry(out, d);
    if (field.name == "notify") put_cwd_and_env(out, d);
    if (!put_effective_policy(out, field.name, d, schedule, interval)) out.field(field.name, field.value(d));
  }
  out.field("after", d.after.task.empty() ? std::nullopt : std::optional(core::to_string(d.after)));
  out.field("from_defaults", d.from_defaults);
}

void put_state(JsonSink& out, const core::TaskState& s) {
  time_field(out, "next_run_at", s.next_run_at, Precision::exact);
  time_field(out, "last_run_at", s.last_run_at);
  time_field(out, "last_finished_at", s.last_finished_at);
  out.field("last_status", s.last_status ? std::optional(core::to_string(*s.last_status)) : std::nullopt);
  out.field("attempt_no", s.attempt_no);
  out.field("attempt_uid", s.attempt_uid.empty() ? std::nullopt : std::optional(s.attempt_uid));
  time_field(out, "attempt_started_at", s.attempt_started_at);
  time_field(out, "attempt_timeout_at", s.attempt_timeout_at);
  out.field("run_index", s.run_index);
  out.field("disabled_until_update", s.disabled_until_update);
  out.field("disabled_reason", s.disabled_reason);
  out.field("paused", s.paused);
  time_field(out, "last_succeeded_at", s.last_succeeded_at);
  time_field(out, "failing_since", s.failing_since);
  time_field(out, "ladder_exhausted_at", s.ladder_exhausted_at);
}

}  // namespace

void write_task(JsonSink& out, const core::Task& task) {
  out.begin_object();
  put_definition(out, task.definition, task.schedule);
  put_state(out, task.state);
  out.end();
}

Json task_json(const core::Task& task) {
  JsonBuilder out;
  write_task(out, task);
  return out.take();
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

void write_stored_task(JsonSink& out, const store::StoredTask& task) {
  if (task) return write_task(out, *task);
  out.document(stored_task_json(task));
}

void write_run(JsonSink& out, const store::RunRecord& run) {
  using seconds = std::chrono::duration<double>;
  out.begin_object();
  out.field("id", run.id);
  out.field("task", run.task);
  out.field("status", core::to_string(run.status));
  time_field(out, "scheduled_at", run.scheduled_at, Precision::exact);
  time_field(out, "enqueued_at", run.enqueued_at);
  time_field(out, "started_at", run.started_at);
  time_field(out, "finished_at", run.finished_at);
  out.field("exit_code", run.exit_code);
  out.field("signal", run.signal);
  out.field("attempt_no", run.attempt_no);
  out.field("attempt_uid", run.attempt_uid.empty() ? std::nullopt : std::optional(run.attempt_uid));
  out.field("run_index", run.run_index);
  out.field("reason", run.reason);
  out.field("trigger", core::to_string(run.trigger));
  out.field("duration", run.started_at && run.finished_at
                            ? std::optional(seconds(*run.finished_at - *run.started_at).count())
                            : std::nullopt);
  out.field("output_bytes", run.output_bytes);
  out.field("output_truncated", run.output_truncated);
  out.field("cpu_seconds", run.usage.cpu ? std::optional(seconds(*run.usage.cpu).count()) : std::nullopt);
  out.field("peak_memory_bytes", run.usage.peak_memory_bytes);
  out.field("upstream_run_id", run.upstream_run_id);
  out.field("host", run.host.empty() ? std::nullopt : std::optional(run.host));
  out.end();
}

Json run_json(const store::RunRecord& run) {
  JsonBuilder out;
  write_run(out, run);
  return out.take();
}

}  // namespace taskd::ops
