#pragma once
// The operations that read runs: history and logs.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "ops/json.hpp"
#include "store/runs.hpp"

namespace taskd::ops {

// The runs `filter` selects, newest first, of the task called `name` (of
// every task when empty; of a malformed row too); `verb` names the command
// in an error.
core::Result<void> for_each_run_of(store::Database& db, std::string_view name, store::RunFilter filter,
                                   std::string_view verb, const store::RunVisitor& visit);

// A run and its captured output, as `logs` shows them.
struct RunOutput {
  store::RunRecord run;
  std::string output;
};
// Of run `run_id` of the task called `name`, or (0) of its latest run that started.
core::Result<RunOutput> run_output(store::Database& db, std::string_view name, std::int64_t run_id);
// Run `run_id` of any task and its output; none when there is no such run.
core::Result<std::optional<RunOutput>> find_run_output(store::Database& db, std::int64_t run_id);
// Prints (through `print`) the output of run `run_id` of the task called
// `name`, or (0) of its latest run that started, as the run writes it,
// looking every few hundred milliseconds, until the run has ended and its
// final output is printed; a run that has ended already is printed at once.
// Once the output is cut between its head and its tail, what the follower
// missed of it is a line that says so.
core::Result<void> follow_run_output(store::Database& db, std::string_view name, std::int64_t run_id,
                                     const std::function<void(std::string_view)>& print);

// What of `stored` (a run's output as stored: head, cut line and tail once
// `truncated`; the head being `head_bytes` long then) comes after the first
// `printed` bytes the run wrote; `printed` becomes the bytes written up to
// its end. Bytes that were cut before they could be printed are a line
// that says how many.
std::string output_after(std::string_view stored, bool truncated, std::size_t head_bytes, std::size_t& printed);

// run_json with the output under "output".
Json run_output_json(const RunOutput& shown);

}  // namespace taskd::ops
