#include "cli/format.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace taskd::cli {

void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths(header.size());
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  };
  measure(header);
  for (const auto& row : rows) measure(row);
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += i + 1 == row.size() ? row[i] : fmt::format("{:<{}}  ", row[i], widths[i]);
    }
    fmt::print("{}\n", line);
  };
  print_row(header);
  for (const auto& row : rows) print_row(row);
}

std::string relative_time(const std::optional<core::Time>& time, core::Time now) {
  if (!time) return "-";
  auto delta = std::chrono::floor<core::Seconds>(*time - now);
  if (delta == core::Seconds{0}) return "now";
  if (delta > core::Seconds{0}) return "in " + core::format_duration(delta);
  return core::format_duration(-delta) + " ago";
}

std::string describe_schedule(const core::TaskDefinition& definition) {
  switch (definition.schedule_kind) {
    case core::ScheduleKind::every:
      return fmt::format("every {}{}{}", definition.schedule_spec, definition.after_finish ? " after finish" : "",
                         definition.tz.empty() ? "" : fmt::format(" ({})", definition.tz));
    case core::ScheduleKind::cron: return fmt::format("cron {} ({})", definition.schedule_spec, definition.tz);
    case core::ScheduleKind::rrule:
      return fmt::format("rrule {} from {} ({})", definition.schedule_spec,
                         definition.dtstart ? core::format_local(*definition.dtstart) : "?", definition.tz);
    case core::ScheduleKind::manual: return "manual";
  }
  return std::string(core::to_string(definition.schedule_kind));
}

std::string describe_command(const core::Command& command) {
  if (command.shell) return command.argv.empty() ? "" : command.argv.front();
  std::string out;
  for (const auto& arg : command.argv) {
    bool plain = !arg.empty() && arg.find_first_of(" \t\n'\"\\$`|&;<>()*?[]{}~#") == std::string::npos;
    std::string quoted = plain ? arg : "'" + arg + "'";
    out += out.empty() ? quoted : " " + quoted;
  }
  return out;
}

std::string task_condition(const core::TaskState& state) {
  if (state.disabled_until_update) return "disabled";
  if (state.paused) return "paused";
  return "active";
}

}  // namespace taskd::cli
