#include "cli/format.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fmt/format.h>
#include <functional>
#include <sys/ioctl.h>
#include <tuple>
#include <unistd.h>

namespace taskd::cli {

namespace {

bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Columns on a terminal, counted as code points (wide characters count one).
std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(std::ranges::count_if(text, [](char c) { return !is_continuation_byte(c); }));
}

std::string fit(std::string_view text, std::size_t width) {
  if (display_width(text) <= width) return std::string(text);
  std::size_t kept = 0;
  std::size_t end = 0;
  for (; end < text.size(); ++end) {
    if (!is_continuation_byte(text[end]) && kept++ == width - 1) break;
  }
  return std::string(text.substr(0, end)) + "…";
}

std::string printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += static_cast<unsigned char>(c) < 0x20 || c == 0x7F ? '?' : c;
    }
  }
  return out;
}

std::string_view colour_code(Colour colour) {
  switch (colour) {
    case Colour::red: return "\033[31m";
    case Colour::green: return "\033[32m";
    case Colour::yellow: return "\033[33m";
    case Colour::cyan: return "\033[36m";
    case Colour::none: return "";
  }
  return "";
}

struct Layout {
  std::vector<std::size_t> widths;
  std::vector<bool> shown;

  std::size_t total() const {
    std::size_t sum = 0;
    std::size_t count = 0;
    for (std::size_t i = 0; i < widths.size(); ++i) {
      if (!shown[i]) continue;
      sum += widths[i];
      ++count;
    }
    return count == 0 ? 0 : sum + 2 * (count - 1);
  }
};

// The columns in the order they give way: highest drop_rank first.
std::vector<std::size_t> yielding_order(const std::vector<Column>& columns) {
  std::vector<std::size_t> order(columns.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::ranges::stable_sort(order, std::greater{}, [&](std::size_t i) { return columns[i].drop_rank; });
  return order;
}

// Natural widths; if they are too wide, the cuttable columns are cut, and
// then columns dropped one by one, until the table fits or nothing is left
// to give way.
Layout layout(const std::vector<Column>& columns, const std::vector<std::vector<std::string>>& texts,
              std::optional<std::size_t> width) {
  Layout natural{std::vector<std::size_t>(columns.size()), std::vector<bool>(columns.size(), true)};
  for (std::size_t i = 0; i < columns.size(); ++i) natural.widths[i] = display_width(columns[i].header);
  for (const auto& row : texts) {
    for (std::size_t i = 0; i < row.size() && i < columns.size(); ++i)
      natural.widths[i] = std::max(natural.widths[i], display_width(row[i]));
  }
  if (!width) return natural;
  auto order = yielding_order(columns);
  Layout candidate = natural;
  for (std::size_t dropped = 0;; ++dropped) {
    candidate = natural;
    std::size_t dropping = dropped;
    for (auto i : order) {
      if (dropping == 0 || columns[i].drop_rank == 0) continue;
      candidate.shown[i] = false;
      --dropping;
    }
    for (auto i : order) {
      auto total = candidate.total();
      if (total <= *width || !candidate.shown[i] || columns[i].min_width == 0) continue;
      auto floor = std::max(columns[i].min_width, display_width(columns[i].header));
      candidate.widths[i] = std::max(floor, candidate.widths[i] - std::min(candidate.widths[i], total - *width));
    }
    if (candidate.total() <= *width || dropping > 0) return candidate;
  }
}

// The largest unit, and the next one down unless it is seconds.
std::string approximate_duration(core::Seconds duration) {
  auto s = duration.count();
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m", s / 60);
  auto [big, big_unit, small, small_unit] =
      s < 86400 ? std::tuple{s / 3600, 'h', s % 3600 / 60, 'm'} : std::tuple{s / 86400, 'd', s % 86400 / 3600, 'h'};
  return small == 0 ? fmt::format("{}{}", big, big_unit) : fmt::format("{}{}{}{}", big, big_unit, small, small_unit);
}

}  // namespace

Output stdout_output() {
  Output output;
  bool terminal = ::isatty(STDOUT_FILENO) == 1;
  auto env = [](const char* name) -> std::string_view {
    const char* value = std::getenv(name);
    return value ? value : "";
  };
  output.colour = terminal && env("NO_COLOR").empty() && env("TERM") != "dumb";
  std::size_t columns = 0;
  auto text = env("COLUMNS");
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), columns);
  if (error == std::errc() && end == text.data() + text.size() && columns > 0) {
    output.width = columns;
  } else if (winsize size{}; terminal && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    output.width = size.ws_col;
  }
  return output;
}

std::string render_table(const std::vector<Column>& columns, const std::vector<std::vector<Cell>>& rows,
                         const Output& output) {
  std::vector<std::vector<std::string>> texts;
  for (const auto& row : rows) {
    texts.emplace_back();
    for (const auto& cell : row) texts.back().push_back(printable(cell.text));
  }
  auto shape = layout(columns, texts, output.width);
  std::size_t last = columns.size();
  while (last > 0 && !shape.shown[last - 1]) --last;
  std::string out;
  auto append_row = [&](const std::vector<std::string>& row, auto colour_of) {
    std::string line;
    for (std::size_t i = 0; i < last && i < row.size(); ++i) {
      if (!shape.shown[i]) continue;
      auto text = fit(row[i], shape.widths[i]);
      auto code = output.colour ? colour_code(colour_of(i)) : "";
      line += code.empty() ? text : fmt::format("{}{}\033[0m", code, text);
      if (i + 1 < last) line += std::string(shape.widths[i] - display_width(text) + 2, ' ');
    }
    out += line + "\n";
  };
  std::vector<std::string> header;
  for (const auto& column : columns) header.push_back(column.header);
  append_row(header, [](std::size_t) { return Colour::none; });
  for (std::size_t r = 0; r < rows.size(); ++r) append_row(texts[r], [&](std::size_t i) { return rows[r][i].colour; });
  return out;
}

void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<Column> columns;
  for (const auto& title : header) columns.push_back({title});
  std::vector<std::vector<Cell>> cells;
  for (const auto& row : rows) {
    cells.emplace_back();
    for (const auto& text : row) cells.back().push_back({text});
  }
  fmt::print("{}", render_table(columns, cells, {}));
}

std::string relative_time(const std::optional<core::Time>& time, core::Time now) {
  if (!time) return "-";
  auto delta = std::chrono::floor<core::Seconds>(*time - now);
  if (delta == core::Seconds{0}) return "now";
  if (delta > core::Seconds{0}) return "in " + approximate_duration(delta);
  return approximate_duration(-delta) + " ago";
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

std::string shell_word(const std::string& word) {
  bool plain = !word.empty() && word.find_first_of(" \t\n'\"\\$`|&;<>()*?[]{}~#") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string describe_command(const core::Command& command) {
  if (command.shell) return command.argv.empty() ? "" : command.argv.front();
  std::string out;
  for (const auto& arg : command.argv) out += (out.empty() ? "" : " ") + shell_word(arg);
  return out;
}

std::string cap_text(const std::optional<int>& cap) { return cap ? std::to_string(*cap) : "none"; }

std::string task_condition(const core::TaskState& state) {
  if (state.disabled_until_update) return "disabled";
  if (state.paused) return "paused";
  return "active";
}

}  // namespace taskd::cli
