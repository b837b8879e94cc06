#pragma once
// The --json shapes of SPEC.md: tasks and runs with its field names, times in
// RFC 3339 UTC, durations in seconds. Every front-end serializes the values
// of the operations through these.
#include "core/task.hpp"
#include "ops/json_sink.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"

namespace taskd::ops {

// An RFC 3339 UTC time, or null.
Json time_json(const std::optional<core::Time>& time, core::Precision precision = core::Precision::exact);
// Durations are seconds: whole ones as integers, others with their
// milliseconds; null for none.
void put_seconds(JsonSink& out, const std::optional<core::Millis>& duration);
Json seconds_json(const std::optional<core::Millis>& duration);

void write_task(JsonSink& out, const core::Task& task);
Json task_json(const core::Task& task);
// A row of the tasks table: as task_json, and for a malformed row what is
// wrong under "malformed" ([{"column", "problem"}]), with null for each
// field it could not read.
Json stored_task_json(const store::StoredTask& task);
void write_stored_task(JsonSink& out, const store::StoredTask& task);
void write_run(JsonSink& out, const store::RunRecord& run);
Json run_json(const store::RunRecord& run);

}  // namespace taskd::ops
