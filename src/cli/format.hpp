#pragma once
// Text for people: aligned tables and times relative to now.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/usage.hpp"
#include "core/task.hpp"

namespace taskd::cli {

enum class Colour { none, red, green, yellow, cyan };

struct Cell {
  std::string text;
  Colour colour = Colour::none;
};

struct Column {
  std::string header;
  std::size_t min_width = 0;  // may be cut down to this, with "…"; 0: never cut
  int drop_rank = 0;          // when the table is too wide the highest goes first; 0: never dropped
};

// Where a table goes: how wide it may be (none: any width) and whether it
// may use colour.
struct Output {
  std::optional<std::size_t> width;
  bool colour = false;
};

// Stdout's Output: the width is $COLUMNS if it is a number, else the
// terminal's; colour only on a terminal, and never with $NO_COLOR set or
// TERM=dumb.
Output stdout_output();

// The table as text: each column as wide as its widest cell, cut and
// dropped (see Column) to fit the output's width; each cell as
// core::printable shows it (control characters and bytes that are not UTF-8
// escaped).
std::string render_table(const std::vector<Column>& columns, const std::vector<std::vector<Cell>>& rows,
                         const Output& output);

struct Layout;

// A table printed as its rows come: the first `sample` rows set the layout
// as render_table would, and later rows are fitted to it (a longer cell of
// a column that is never cut shifts its own line only). A table of a
// million rows takes the memory of `sample` rows.
class TableWriter {
 public:
  TableWriter(std::vector<Column> columns, Output output, std::size_t sample = 1000);
  ~TableWriter();
  TableWriter(const TableWriter&) = delete;
  TableWriter& operator=(const TableWriter&) = delete;

  void add(std::vector<Cell> row);
  // Prints the rows still held (and the header, if no row came).
  void finish();

 private:
  void lay_out();
  void flush();

  std::vector<Column> columns_;
  Output output_;
  std::size_t sample_;
  std::vector<std::vector<Cell>> sampled_;
  std::unique_ptr<Layout> shape_;  // set once the sample is in
  std::string pending_;            // lines not yet written
};

// Columns with these headers that are never cut or dropped.
std::vector<Column> plain_columns(const std::vector<std::string>& header);
// Cells without colour.
std::vector<Cell> plain_cells(std::vector<std::string> texts);

// Prints rows under a header, each column as wide as its widest cell.
void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// "in 42s", "in 4m", "3h20m ago", "in 2d5h", "now"; "-" for none.
std::string relative_time(const std::optional<core::Time>& time, core::Time now);

// A word as a shell reads it: quoted when it has to be.
std::string shell_word(const std::string& word);

// The command as a shell would show it.
std::string describe_command(const core::Command& command);

// A group's concurrency cap: the number, or "none".
std::string cap_text(const std::optional<int>& cap);

// A size in bytes for people: "512 B", "1.5 MiB".
std::string size_text(std::uintmax_t bytes);

// CPU time, then peak memory: "0.120s 8.5 MiB"; '-' for what was not measured.
std::string usage_text(const core::ResourceUsage& usage);

// The next run that add and edit print: its time, "at the next boot" for
// a task of @reboot, or "none".
std::string next_run_words(const core::Task& task, const core::TimeStyle& style);

// "active", "paused", "disabled" or "failing" (core::condition_of).
std::string task_condition(const core::TaskState& state);

}  // namespace taskd::cli
