#pragma once
// The --json shapes of SPEC.md: tasks and runs with its field names, times in
// RFC 3339 UTC, durations in seconds.
#include <nlohmann/json.hpp>

#include "core/task.hpp"
#include "store/runs.hpp"
#include "store/tasks.hpp"

namespace taskd::cli {

using Json = nlohmann::ordered_json;

// An RFC 3339 UTC time, or null.
Json time_json(const std::optional<core::Time>& time, core::Precision precision = core::Precision::exact);
// Durations are seconds: whole ones as integers, others with their
// milliseconds; null for none.
Json seconds_json(const std::optional<core::Millis>& duration);

Json task_json(const core::Task& task);
// A row of the tasks table: as task_json, and for a malformed row what is
// wrong under "malformed" ([{"column", "problem"}]), with null for each
// field it could not read.
Json stored_task_json(const store::StoredTask& task);
Json run_json(const store::RunRecord& run);

// Prints a JSON document and a newline; a byte of a string that is not
// UTF-8 is printed as U+FFFD.
void print_json(const Json& document);

// Prints a JSON array element by element, as print_json would print the
// whole array, so that a listing of a million tasks never holds them all.
class JsonArrayWriter {
 public:
  void add(const Json& element);
  // Closes the array ("[]" when nothing was added).
  void finish();

 private:
  bool open_ = false;
};

// Prints as one JSON array, element by element, what `walk` visits:
// walk(visit) calls visit(item) for each item, which `to_json` turns into
// an element. An error of the walk is returned, the array left unfinished.
template <class Walk, class ToJson>
core::Result<void> print_json_array(Walk walk, ToJson to_json) {
  JsonArrayWriter out;
  TRY(walk([&](const auto& item) -> core::Result<void> {
    out.add(to_json(item));
    return {};
  }));
  out.finish();
  return {};
}

}  // namespace taskd::cli
