#pragma once
// The operations that read runs: history and logs.
#include <cstdint>
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
// run_json with the output under "output".
Json run_output_json(const RunOutput& shown);

}  // namespace taskd::ops
