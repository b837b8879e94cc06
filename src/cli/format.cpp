#include "cli/format.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <functional>
#include <sys/ioctl.h>
#include <tuple>
#include <unistd.h>

#include "core/text.hpp"

namespace taskd::cli {

namespace {

bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Columns on a terminal, counted as code points (wide characters count one).
std::size_t display_width(std::string_view text) {
  std::size_t continuations = 0;
  for (char c : text) continuations += is_continuation_byte(c);
  return text.size() - continuations;
}

// Appends `text`, printable, cut to `width` (its end replaced by "…");
// returns the width appended.
std::size_t append_fitted(std::string& out, std::string_view text, std::size_t width) {
  if (core::needs_escaping(text)) return append_fitted(out, core::printable(text), width);
  auto text_width = display_width(text);
  if (text_width <= width) {
    out += text;
    return text_width;
  }
  std::size_t kept = 0;
  std::size_t end = 0;
  for (; end < text.size(); ++end) {
    if (!is_continuation_byte(text[end]) && kept++ == width - 1) break;
  }
  out += text.substr(0, end);
  out += "…";
  return width;
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

}  // namespace

struct Layout {
  std::vector<std::size_t> widths;
  std::vector<bool> shown;
  std::vector<bool> cut;  // a longer cell is cut to the width (else it shifts its line)

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

namespace {

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
  Layout natural{std::vector<std::size_t>(columns.size()), std::vector<bool>(columns.size(), true),
                 std::vector<bool>(columns.size(), false)};
  for (std::size_t i = 0; i < columns.size(); ++i) natural.cut[i] = width && columns[i].min_width > 0;
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
  if (s < 60) return std::to_string(s) + 's';
  if (s < 3600) return std::to_string(s / 60) + 'm';
  auto [big, big_unit, small, small_unit] =
      s < 86400 ? std::tuple{s / 3600, 'h', s % 3600 / 60, 'm'} : std::tuple{s / 86400, 'd', s % 86400 / 3600, 'h'};
  auto text = std::to_string(big) + big_unit;
  return small == 0 ? text : text + std::to_string(small) + small_unit;
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

namespace {

// Appends one line of a table laid out as `shape`.
void append_line(std::string& out, const Layout& shape, const Output& output, const std::vector<Cell>& row) {
  std::size_t last = shape.widths.size();
  while (last > 0 && !shape.shown[last - 1]) --last;
  for (std::size_t i = 0; i < last && i < row.size(); ++i) {
    if (!shape.shown[i]) continue;
    auto code = output.colour ? colour_code(row[i].colour) : "";
    out += code;
    auto width = append_fitted(out, row[i].text, shape.cut[i] ? shape.widths[i] : SIZE_MAX);
    if (!code.empty()) out += "\033[0m";
    if (i + 1 < last) out.append(shape.widths[i] - std::min(shape.widths[i], width) + 2, ' ');
  }
  out += '\n';
}

std::vector<Cell> header_cells(const std::vector<Column>& columns) {
  std::vector<Cell> cells;
  for (const auto& column : columns) cells.push_back({column.header});
  return cells;
}

// The layout of `rows`, each cell as wide as it is printed.
Layout layout_of(const std::vector<Column>& columns, const std::vector<std::vector<Cell>>& rows,
                 std::optional<std::size_t> width) {
  std::vector<std::vector<std::string>> texts;
  for (const auto& row : rows) {
    texts.emplace_back();
    for (const auto& cell : row)
      texts.back().push_back(core::needs_escaping(cell.text) ? core::printable(cell.text) : cell.text);
  }
  return layout(columns, texts, width);
}

}  // namespace

std::string render_table(const std::vector<Column>& columns, const std::vector<std::vector<Cell>>& rows,
                         const Output& output) {
  auto shape = layout_of(columns, rows, output.width);
  std::string out;
  append_line(out, shape, output, header_cells(columns));
  for (const auto& row : rows) append_line(out, shape, output, row);
  return out;
}

TableWriter::TableWriter(std::vector<Column> columns, Output output, std::size_t sample)
    : columns_(std::move(columns)), output_(output), sample_(sample) {}

TableWriter::~TableWriter() = default;

// Lines are written in blocks of this many bytes: one write() per line
// would cost a million listed tasks a million system calls.
constexpr std::size_t block_size = 64 * 1024;

void TableWriter::add(std::vector<Cell> row) {
  if (!shape_) {
    sampled_.push_back(std::move(row));
    if (sampled_.size() >= sample_) lay_out();
    return;
  }
  append_line(pending_, *shape_, output_, row);
  if (pending_.size() >= block_size) flush();
}

void TableWriter::finish() {
  if (!shape_) lay_out();
  flush();
}

void TableWriter::flush() {
  std::fwrite(pending_.data(), 1, pending_.size(), stdout);
  pending_.clear();
}

void TableWriter::lay_out() {
  shape_ = std::make_unique<Layout>(layout_of(columns_, sampled_, output_.width));
  append_line(pending_, *shape_, output_, header_cells(columns_));
  for (const auto& row : sampled_) append_line(pending_, *shape_, output_, row);
  sampled_.clear();
  sampled_.shrink_to_fit();
}

std::vector<Column> plain_columns(const std::vector<std::string>& header) {
  std::vector<Column> columns;
  for (const auto& title : header) columns.push_back({title});
  return columns;
}

std::vector<Cell> plain_cells(std::vector<std::string> texts) {
  std::vector<Cell> cells;
  cells.reserve(texts.size());
  for (auto& text : texts) cells.push_back({std::move(text)});
  return cells;
}

void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::vector<Cell>> cells;
  for (const auto& row : rows) cells.push_back(plain_cells(row));
  fmt::print("{}", render_table(plain_columns(header), cells, {}));
}

std::string relative_time(const std::optional<core::Time>& time, core::Time now) {
  if (!time) return "-";
  auto delta = std::chrono::floor<core::Seconds>(*time - now);
  if (delta == core::Seconds{0}) return "now";
  if (delta > core::Seconds{0}) return "in " + approximate_duration(delta);
  return approximate_duration(-delta) + " ago";
}

namespace {

// Whether a shell reads `c` as itself in an unquoted word.
bool is_shell_plain(char c) {
  static const auto plain = [] {
    std::array<bool, 256> table{};
    table.fill(true);
    for (unsigned char special : std::string_view(" \t\n'\"\\$`|&;<>()*?[]{}~#")) table[special] = false;
    return table;
  }();
  return plain[static_cast<unsigned char>(c)];
}

}  // namespace

std::string shell_word(const std::string& word) {
  bool plain = !word.empty() && std::ranges::all_of(word, is_shell_plain);
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

std::string next_run_words(const core::Task& task, const core::TimeStyle& style) {
  if (task.state.next_run_at) return core::show_time(*task.state.next_run_at, style);
  return core::runs_at_boot(task.definition) ? "at the next boot" : "none";
}

std::string task_condition(const core::TaskState& state) { return std::string(core::to_string(core::condition_of(state))); }

std::string size_text(std::uintmax_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes) / 1024;
  for (const char* unit : {"KiB", "MiB", "GiB"}) {
    if (value < 1024) return fmt::format("{:.1f} {}", value, unit);
    value /= 1024;
  }
  return fmt::format("{:.1f} TiB", value);
}

std::string usage_text(const core::ResourceUsage& usage) {
  auto cpu = usage.cpu ? fmt::format("{:.3f}s", std::chrono::duration<double>(*usage.cpu).count()) : "-";
  auto memory = usage.peak_memory_bytes ? size_text(static_cast<std::uintmax_t>(*usage.peak_memory_bytes)) : "-";
  return cpu + " " + memory;
}

}  // namespace taskd::cli
