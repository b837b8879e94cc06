#pragma once
// preview: the next start times of a task, as `taskd preview` prints them
// and the board's forecast (/api/v1/tasks/NAME/forecast) serves them.
#include <cstdint>
#include <functional>
#include <string_view>

#include "core/error.hpp"
#include "core/policy.hpp"
#include "ops/json.hpp"

namespace taskd::ops {

// Where the starts begin: `text` as an RFC 3339 time (--from, from=), or
// `now` when it is empty.
core::Result<core::Time> preview_from(std::string_view text, std::string_view option, core::Time now);

// Calls `visit` with each of the next `count` starts of `task` after `from`
// (fewer when its schedule ends), as they are computed: a large count takes
// no memory of its own.
core::Result<void> for_each_start(const core::Task& task, core::Time from, std::int64_t count,
                                  const std::function<core::Result<void>(const core::UpcomingStart&)>& visit);

// A start as `preview --json` gives it: its RFC 3339 time.
Json start_json(const core::UpcomingStart& start);

}  // namespace taskd::ops
