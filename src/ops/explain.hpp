#pragma once
// explain: why a slot ran, was skipped, dropped, retried or late, and when
// the task runs next and why then, as facts.
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "core/explain.hpp"
#include "ops/json.hpp"
#include "store/database.hpp"

namespace taskd::ops {

struct Explanation {
  core::Time asked;
  bool asked_now = false;  // no --at: the latest slot is the one in question
  std::optional<core::Time> slot;
  std::vector<core::Fact> facts;
};

// The time asked about, given as `option` (--at, at=): a wall time in the
// task's zone (03:00 is today's, or yesterday's while today's is still to
// come; 2026-11-24T03:00:00), an RFC 3339 time, or a duration ago (2h);
// none when `text` is empty.
core::Result<std::optional<core::Time>> time_asked(std::string_view text, std::string_view option,
                                                   const core::TaskDefinition& definition, core::Time now);

// The facts about `task` at `at` (none: now), each told once, their
// sentences with times in `style`.
core::Result<Explanation> explain_task(store::Database& db, const core::Task& task, std::optional<core::Time> at,
                                       core::Time now, const core::TimeStyle& style);
// {"task", "now", "at", "slot", "facts": [{"kind", "text", and the fact's data}]}.
Json explanation_json(const core::Task& task, const Explanation& explanation, core::Time now);

}  // namespace taskd::ops
