#include "ops/preview.hpp"

#include <fmt/format.h>

namespace taskd::ops {

using core::Result;

Result<core::Time> preview_from(std::string_view text, std::string_view option, core::Time now) {
  if (text.empty()) return now;
  auto parsed = core::parse_rfc3339(text);
  if (!parsed) return core::fail(core::ErrorKind::bad_input, fmt::format("{}: {}", option, parsed.error().message));
  return *parsed;
}

Result<void> for_each_start(const core::Task& task, core::Time from, std::int64_t count,
                            const std::function<Result<void>(const core::UpcomingStart&)>& visit) {
  core::UpcomingStarts starts(task, task.schedule.value(), from);
  for (std::int64_t i = 0; i < count; ++i) {
    auto upcoming = starts.next();
    if (!upcoming) break;
    TRY(visit(*upcoming));
  }
  return {};
}

Json start_json(const core::UpcomingStart& start) { return core::format_rfc3339(start.start); }

}  // namespace taskd::ops
