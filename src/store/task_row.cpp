#include "store/task_row.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/defaults.hpp"
#include "core/task_fields.hpp"

namespace taskd::store {

std::string with_field_columns(std::string_view own) {
  std::string columns(own);
  for (const auto& field : core::task_fields()) columns += fmt::format(", {}", field.column);
  return columns;
}

const std::string& task_columns() {
  static const std::string columns = with_field_columns(
      "id, name, command, shell, schedule_kind, schedule_spec, tz, dtstart, after_finish, phase, jitter, retry, "
      "permanent_exit, cwd, env, dst_gap, dst_repeat, next_run_at, last_run_at, last_finished_at, last_status, "
      "attempt_no, attempt_uid, attempt_started_at, attempt_timeout_at, run_index, disabled_until_update, "
      "disabled_reason, paused, accounted_until, last_succeeded_at, failing_since, ladder_exhausted_at, after_task, "
      "after_finished, from_defaults, "
      "CASE WHEN tasks.calendar_days_digest = '' THEN '' ELSE (SELECT days FROM calendar_day_sets WHERE digest = "
      "tasks.calendar_days_digest) END AS calendar_days");
  return columns;
}

const char* const headline_columns =
    "id, name, command, shell, schedule_kind, schedule_spec, tz, dtstart, after_finish, next_run_at, last_status, "
    "paused, disabled_until_update, after_task, after_finished, failing_since";

int task_column_count() {
  static const int count = static_cast<int>(std::ranges::count(task_columns(), ',')) + 1;
  return count;
}

namespace {

using core::ErrorKind;
using core::Result;
using core::Task;
using nlohmann::json;

// A problem says at most this much.
constexpr std::size_t problem_most = 200;

// A problem as messages, logs and JSON carry it: printable ASCII (each
// other byte as \xNN, for a value may hold anything), of its first
// problem_most bytes.
std::string printable(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, problem_most)) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return text.size() > problem_most ? out + "..." : out;
}

// One column of the current row.
struct Cell final : core::StoredCell {
  Cell(const Query& query, int column) : row(query), i(column) {}
  const Query& row;
  int i;
  bool is_null() const override { return row.is_null(i); }
  bool is_integer() const override { return row.is_integer(i); }
  std::int64_t integer() const override { return row.int64(i); }
  std::string_view text() const override { return row.text(i); }
};

using core::malformed_value;
using core::stored_duration;
using core::stored_flag;
using core::stored_integer;
using core::stored_integer_from;
using core::stored_name;
using core::stored_optional;
using core::stored_text;

constexpr std::int64_t int_max = std::numeric_limits<int>::max();
constexpr std::int64_t longest = core::longest_duration.count();

// An instant taskd can have written: Unix milliseconds from 1970 to
// core::latest_time. Anything else is never computed with (an hour added
// to the largest integer overflows).
Result<core::Time> instant(const core::StoredCell& c) {
  auto ms = TRY(stored_integer(c));
  if (ms < 0 || ms > core::to_unix_ms(core::latest_time))
    return core::out_of_range(ms, "a time from 1970 to 9999 in Unix milliseconds");
  return core::from_unix_ms(ms);
}

Result<std::vector<std::string>> fields_from_defaults(const core::StoredCell& c) {
  return core::parse_from_defaults(TRY(stored_text(c)));
}

// NULL: the row names days calendar_day_sets does not hold.
Result<core::CalendarDays> calendar_days(const core::StoredCell& c) {
  if (c.is_null())
    return core::fail(ErrorKind::bad_input, "the days its calendar_days_digest names are not in the database");
  return core::parse_calendar_days(c.text());
}

// Seconds that may carry milliseconds as a fraction (a REAL value).
Result<core::Millis> phase(Cell c) {
  if (c.row.is_integer(c.i)) {
    return TRY(stored_duration(c));
  }
  if (c.row.type(c.i) != ValueType::real) return malformed_value("not a number of seconds", c.text());
  double seconds = c.row.real(c.i);
  if (!std::isfinite(seconds) || seconds < 0 || seconds > static_cast<double>(longest))
    return malformed_value("not a duration from 0 to 10 years in seconds", c.text());
  return core::Millis{std::llround(seconds * 1000)};
}

// JSON text as taskd writes it, read a token at a time.
struct JsonText {
  std::string_view rest;
  // A loop, not find_first_not_of: that looks each byte up in the set with memchr.
  void skip_spaces() {
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t' || rest.front() == '\n'))
      rest.remove_prefix(1);
  }
  // Takes `c` (and the spaces after it) if it comes next.
  bool take(char c) {
    if (!rest.starts_with(c)) return false;
    rest.remove_prefix(1);
    skip_spaces();
    return true;
  }
};

// A JSON array of integers, as taskd writes them ("[0,60,300]"), read
// without a JSON parser: a task row is read at every claim and every end,
// and nlohmann's parser was half the cost of reading it.
std::optional<std::vector<std::int64_t>> integers_in(std::string_view text) {
  JsonText in{text};
  in.skip_spaces();
  std::vector<std::int64_t> out;
  if (!in.take('[')) return std::nullopt;
  if (in.take(']')) return in.rest.empty() ? std::optional(out) : std::nullopt;
  out.reserve(static_cast<std::size_t>(std::ranges::count(in.rest, ',')) + 1);
  do {
    std::int64_t value = 0;
    auto [end, error] = std::from_chars(in.rest.data(), in.rest.data() + in.rest.size(), value);
    if (error != std::errc()) return std::nullopt;
    out.push_back(value);
    in.rest.remove_prefix(static_cast<std::size_t>(end - in.rest.data()));
    in.skip_spaces();
  } while (in.take(','));
  if (!in.take(']') || !in.rest.empty()) return std::nullopt;
  return out;
}

// A JSON array of integers from `least` to `most`, each as a T.
template <class T>
Result<std::vector<T>> integer_list(const core::StoredCell& c, std::int64_t least, std::int64_t most,
                                    std::string_view what) {
  auto values = integers_in(c.text());
  if (!values || std::ranges::any_of(*values, [&](auto v) { return v < least || v > most; }))
    return malformed_value(what, c.text());
  std::vector<T> out;
  out.reserve(values->size());
  for (auto value : *values) out.push_back(T(value));
  return out;
}

Result<std::vector<core::Seconds>> retry_ladder(const core::StoredCell& c) {
  return integer_list<core::Seconds>(c, 0, longest, "not a JSON array of delays from 0 to 10 years in seconds");
}

Result<std::vector<int>> exit_codes(const core::StoredCell& c) {
  return integer_list<int>(c, 1, 255, "not a JSON array of exit codes from 1 to 255");
}

// A JSON array of strings without escapes, as taskd writes nearly every
// argv, read without the JSON parser.
std::optional<std::vector<std::string>> plain_strings_in(std::string_view text) {
  JsonText in{text};
  in.skip_spaces();
  std::vector<std::string> out;
  if (!in.take('[')) return std::nullopt;
  if (in.take(']')) return in.rest.empty() ? std::optional(out) : std::nullopt;
  do {
    if (!in.rest.starts_with('"')) return std::nullopt;
    auto end = in.rest.find('"', 1);
    if (end == std::string_view::npos) return std::nullopt;
    out.emplace_back(in.rest.substr(1, end - 1));
    in.rest.remove_prefix(end + 1);
    in.skip_spaces();
  } while (in.take(','));
  if (!in.take(']') || !in.rest.empty()) return std::nullopt;
  return out;
}

std::optional<std::vector<std::string>> strings_in(std::string_view text) {
  if (text.find('\\') == std::string_view::npos) return plain_strings_in(text);
  auto parsed = json::parse(text.begin(), text.end(), nullptr, false);
  if (!parsed.is_array() || !std::ranges::all_of(parsed, [](const json& item) { return item.is_string(); }))
    return std::nullopt;
  return parsed.get<std::vector<std::string>>();
}

Result<std::vector<std::string>> argv(const core::StoredCell& c) {
  auto strings = strings_in(c.text());
  if (!strings) return malformed_value("not a JSON array of strings", c.text());
  return std::move(*strings);
}

Result<std::vector<core::EnvVar>> env_pairs(const core::StoredCell& c) {
  auto text = c.text();
  std::vector<core::EnvVar> env;
  if (text == "[]") return env;  // most tasks: no parser needed
  auto parsed = json::parse(text.begin(), text.end(), nullptr, false);
  auto is_pair = [](const json& pair) {
    return pair.is_array() && pair.size() == 2 && pair[0].is_string() && pair[1].is_string();
  };
  if (!parsed.is_array() || !std::ranges::all_of(parsed, is_pair))
    return malformed_value("not a JSON array of [name, value] pairs of strings", text);
  for (const auto& pair : parsed) env.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
  return env;
}

// A DST rule column: NULL (or a value this taskd does not know) is the
// schedule's default.
template <auto parse>
auto dst_rule(const core::StoredCell& c)
    -> Result<std::optional<typename decltype(parse(std::string_view()))::value_type>> {
  if (c.is_null()) return std::nullopt;
  auto rule = parse(c.text());
  return rule ? std::optional(*rule) : std::nullopt;
}

Result<core::LocalTime> wall_time(const core::StoredCell& c) { return core::parse_local(c.text()); }

// Reads a task row's columns in order, each with the parser of its field:
// a column its parser refuses leaves the field at its default and is noted
// with what is wrong, and the reading goes on, so that every malformed
// column is named and every other one read.
class RowReader {
 public:
  explicit RowReader(const Query& row) : row_(row) {}

  template <auto parse, class T>
  void next(T& field) {
    const int i = next_++;
    auto value = parse(Cell{row_, i});
    if (value) {
      field = std::move(*value);
    } else {
      note(row_.column_name(i), value.error().message);
    }
  }

  void next_field(const core::TaskField& field, core::TaskDefinition& d) {
    const int i = next_++;
    if (auto read = field.read(Cell{row_, i}, d); !read) note(row_.column_name(i), read.error().message);
  }

  void note(std::string_view column, std::string_view what) {
    problems_.push_back({std::string(column), printable(what)});
  }

  // Whether none of `columns` was noted.
  bool all_read(std::initializer_list<std::string_view> columns) const {
    return std::ranges::none_of(problems_, [&](const ColumnProblem& problem) {
      return std::ranges::find(columns, problem.column) != columns.end();
    });
  }

  // Makes `stored`, read into, the malformed row it is if a column was noted.
  void finish(StoredTask& stored) && {
    if (!problems_.empty()) stored = std::unexpected(MalformedTask{std::move(*stored), std::move(problems_)});
  }

 private:
  const Query& row_;
  int next_ = 0;
  std::vector<ColumnProblem> problems_;
};

// The columns that task_columns and headline_columns start with: the id,
// the name, the command and the schedule.
void read_head(RowReader& r, Task& task) {
  auto& d = task.definition;
  r.next<stored_integer>(task.id);
  r.next<stored_text>(d.name);
  r.next<argv>(d.command.argv);
  r.next<stored_flag>(d.command.shell);
  r.next<stored_name<core::parse_schedule_kind>>(d.schedule_kind);
  r.next<stored_text>(d.schedule_spec);
  r.next<stored_text>(d.tz);
  r.next<stored_optional<wall_time>>(d.dtstart);
  r.next<stored_flag>(d.after_finish);
}

// The columns after_task and after_finished.
void read_upstream(RowReader& r, core::TaskDefinition& d) {
  r.next<stored_text>(d.after.task);
  r.next<stored_flag>(d.after.on_any_outcome);
}

// The schedule the columns describe, parsed once for all who use the task.
// It is a problem only once its columns each read: a zone that is not one
// is tz's problem, any other schedule_spec's. (A malformed row keeps what
// parsed of it, for show to print.)
void read_schedule(RowReader& r, Task& task) {
  const auto& d = task.definition;
  auto schedule = core::schedule_of(d);
  if (schedule) task.schedule = std::move(*schedule);
  if (schedule || !r.all_read({"schedule_kind", "dtstart", "phase"})) return;
  if (!d.tz.empty()) {
    if (auto zone = core::find_zone(d.tz); !zone) return r.note("tz", zone.error().message);
  }
  r.note("schedule_spec", schedule.error().message);
}

}  // namespace

// Each reader reads into a task in place (a row is read at every claim and
// every end, and a million at times), made the malformed row if need be.
StoredTask read_task(const Query& row) {
  RowReader r(row);
  StoredTask stored;
  auto& task = *stored;
  auto& d = task.definition;
  auto& s = task.state;
  read_head(r, task);
  r.next<phase>(d.phase);
  r.next<stored_duration>(d.jitter);
  r.next<retry_ladder>(d.retry);
  r.next<exit_codes>(d.permanent_exit);
  r.next<stored_text>(d.cwd);
  r.next<env_pairs>(d.env);
  r.next<dst_rule<core::parse_dst_gap>>(d.dst.gap);
  r.next<dst_rule<core::parse_dst_repeat>>(d.dst.repeat);
  r.next<stored_optional<instant>>(s.next_run_at);
  r.next<stored_optional<instant>>(s.last_run_at);
  r.next<stored_optional<instant>>(s.last_finished_at);
  r.next<stored_optional<stored_name<core::parse_run_status>>>(s.last_status);
  // An attempt number or run index far from any count taskd reaches: one
  // added to it must not overflow.
  r.next<stored_integer_from<int, 0, int_max - 1>>(s.attempt_no);
  r.next<stored_text>(s.attempt_uid);
  r.next<stored_optional<instant>>(s.attempt_started_at);
  r.next<stored_optional<instant>>(s.attempt_timeout_at);
  r.next<stored_integer_from<std::int64_t, 0, (std::int64_t{1} << 62)>>(s.run_index);
  r.next<stored_flag>(s.disabled_until_update);
  r.next<stored_text>(s.disabled_reason);
  r.next<stored_flag>(s.paused);
  r.next<stored_optional<instant>>(s.accounted_until);
  r.next<stored_optional<instant>>(s.last_succeeded_at);
  r.next<stored_optional<instant>>(s.failing_since);
  r.next<stored_optional<instant>>(s.ladder_exhausted_at);
  read_upstream(r, d);
  r.next<fields_from_defaults>(d.from_defaults);
  r.next<calendar_days>(d.calendar_days);
  for (const auto& field : core::task_fields()) r.next_field(field, d);
  read_schedule(r, task);
  std::move(r).finish(stored);
  return stored;
}

core::Result<core::Time> read_instant(const Query& row, int i) {
  auto time = instant(Cell{row, i});
  if (!time) return core::fail(ErrorKind::bad_input, printable(time.error().message));
  return time;
}

StoredTask read_headline(const Query& row) {
  RowReader r(row);
  StoredTask stored;
  auto& task = *stored;
  auto& s = task.state;
  read_head(r, task);
  r.next<stored_optional<instant>>(s.next_run_at);
  r.next<stored_optional<stored_name<core::parse_run_status>>>(s.last_status);
  r.next<stored_flag>(s.paused);
  r.next<stored_flag>(s.disabled_until_update);
  read_upstream(r, task.definition);
  r.next<stored_optional<instant>>(s.failing_since);
  std::move(r).finish(stored);
  return stored;
}

}  // namespace taskd::store
