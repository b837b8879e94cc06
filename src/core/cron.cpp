#include "core/cron.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "core/chars.hpp"
#include "core/hash.hpp"

namespace taskd::core {
namespace {

using std::chrono::days;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

// ---- parsing ----------------------------------------------------------------

constexpr std::array<std::string_view, 12> month_names{"jan", "feb", "mar", "apr", "may", "jun",
                                                       "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr std::array<std::string_view, 7> weekday_names{"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

struct FieldKind {
  std::string_view name;
  int min;
  int max;
  // H picks from min..hash_max: days 1-28 exist in every month, and weekdays
  // stop at 6 so Sunday is not picked twice as often (Jenkins does the same).
  int hash_max;
  // Separates the fields' H values; fixed forever, or every H task would move.
  std::uint64_t hash_salt;
  std::span<const std::string_view> names;  // names[i] stands for min_name_value + i
  int min_name_value;
  bool is_day_field;  // accepts '?' for '*'
  // A value's bit is value - value_offset (the years' bits start at 1970);
  // min and max count bits.
  int value_offset;
};

namespace field {
constexpr std::size_t second = 0, minute = 1, hour = 2, day_of_month = 3, month = 4, day_of_week = 5, year = 6,
                      count = 7;
}

constexpr int year_bits = cron_last_year - cron_first_year;

constexpr std::array<FieldKind, field::count> field_kinds{{
    {"second", 0, 59, 59, 0x63726f6e01, {}, 0, false, 0},
    {"minute", 0, 59, 59, 0x63726f6e02, {}, 0, false, 0},
    {"hour", 0, 23, 23, 0x63726f6e03, {}, 0, false, 0},
    {"day of month", 1, 31, 28, 0x63726f6e04, {}, 0, true, 0},
    {"month", 1, 12, 12, 0x63726f6e05, month_names, 1, false, 0},
    {"day of week", 0, 7, 6, 0x63726f6e06, weekday_names, 0, true, 0},
    {"year", 0, year_bits, year_bits, 0x63726f6e07, {}, 0, false, cron_first_year},
}};

// A field's values, one bit each: wide enough for the years.
using Mask = CronYears;

struct Alias {
  std::string_view name;
  std::string_view expression;
};

constexpr std::array<Alias, 7> aliases{{
    {"@hourly", "0 * * * *"},
    {"@daily", "0 0 * * *"},
    {"@midnight", "0 0 * * *"},
    {"@weekly", "0 0 * * 0"},
    {"@monthly", "0 0 1 * *"},
    {"@yearly", "0 0 1 1 *"},
    {"@annually", "0 0 1 1 *"},
}};

// Feb counts 29: an expression that runs only in leap years still runs.
constexpr std::array<int, 13> longest_month_days{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
char to_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) { return to_lower(x) == to_lower(y); });
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> split_on_spaces(std::string_view text) {
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < text.size()) {
    if (is_space(text[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && !is_space(text[end])) ++end;
    fields.push_back(text.substr(i, end - i));
    i = end;
  }
  return fields;
}

std::vector<std::string_view> split_list(std::string_view text) {
  std::vector<std::string_view> items;
  std::size_t start = 0;
  for (std::size_t comma = text.find(','); comma != std::string_view::npos; comma = text.find(',', start)) {
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  items.push_back(text.substr(start));
  return items;
}

Mask values_in(int low, int high, int step) {
  Mask mask;
  for (int value = low; value <= high; value += step) mask.set(static_cast<std::size_t>(value));
  return mask;
}

// Reads a run of digits, saturating: a huge number is just out of range.
std::optional<int> read_number(std::string_view digits) {
  if (digits.empty() || !std::ranges::all_of(digits, is_digit)) return std::nullopt;
  int number = 0;
  for (char c : digits) number = std::min(number * 10 + (c - '0'), 10000);
  return number;
}

struct Range {
  int low;
  int high;
};

// Parses one field of an expression into a mask of its values (bit n = value
// n), and the day fields' days that depend on the month into `spec`.
class FieldParser {
 public:
  FieldParser(const FieldKind& kind, std::size_t number, std::string_view task_name)
      : kind_(kind), number_(number), task_name_(task_name) {}

  Result<Mask> parse(std::string_view text, CronSpec& spec) const {
    Mask mask;
    for (auto item : split_list(text)) {
      if (item.empty()) return error(fmt::format("empty list item in \"{}\"", text));
      auto calendar = TRY(parse_calendar_day(item, spec));
      if (calendar) continue;
      auto values = TRY(parse_item(item));
      mask |= values;
    }
    return mask;
  }

 private:
  bool is_day_of_month() const { return &kind_ == &field_kinds[field::day_of_month]; }
  bool is_day_of_week() const { return &kind_ == &field_kinds[field::day_of_week]; }
  bool is_year() const { return &kind_ == &field_kinds[field::year]; }

  // L, L-N, NW, LW (day of month), D#N, DL (day of week): true when `item`
  // is one of them, and `spec` has it. A range ending in L ("29-L") is a
  // plain range to 31: a month has no day past its last.
  Result<bool> parse_calendar_day(std::string_view item, CronSpec& spec) const {
    if (is_day_of_month()) return parse_month_end(item, spec);
    if (is_day_of_week()) return parse_nth_weekday(item, spec);
    return false;
  }

  Result<bool> parse_month_end(std::string_view item, CronSpec& spec) const {
    auto upper = [](char c) { return to_lower(c) == 'l' ? 'L' : to_lower(c) == 'w' ? 'W' : c; };
    std::string text;
    for (char c : item) text += upper(c);
    if (text == "L") spec.days_before_last[0] = true;
    if (text == "LW") spec.last_weekday = true;
    if (text == "L" || text == "LW") return true;
    if (text.starts_with("L-")) {
      auto back = read_number(std::string_view(text).substr(2));
      if (!back || *back < 1 || *back > 30)
        return error(fmt::format("\"{}\": L-N counts 1 to 30 days back from the month's last day", item));
      spec.days_before_last[static_cast<std::size_t>(*back)] = true;
      return true;
    }
    if (text.size() >= 2 && text.back() == 'W') {
      auto day = read_number(std::string_view(text).substr(0, text.size() - 1));
      if (!day || *day < 1 || *day > 31)
        return error(fmt::format("\"{}\": NW takes one day N from 1 to 31 (no range, list or step)", item));
      spec.nearest_weekdays[static_cast<std::size_t>(*day)] = true;
      return true;
    }
    if (text.find_first_of("LW") == std::string::npos || text.ends_with("-L")) return false;
    return error(fmt::format("\"{}\": L and W are L, L-N, NW, LW, or the end of a range (29-L)", item));
  }

  Result<bool> parse_nth_weekday(std::string_view item, CronSpec& spec) const {
    const auto hash = item.find('#');
    const bool last = hash == std::string_view::npos && !item.empty() && to_lower(item.back()) == 'l';
    if (hash == std::string_view::npos && !last) return false;
    if (item.size() == 1) return error("\"L\" alone is not a day of week: write DL for the last weekday D (5L, FRIL)");
    auto day = TRY(parse_value(item.substr(0, last ? item.size() - 1 : hash), item));
    const auto weekday = static_cast<std::size_t>(day % 7);
    if (last) {
      spec.last_weekdays[weekday] = true;
      return true;
    }
    auto nth = read_number(item.substr(hash + 1));
    if (!nth || *nth < 1 || *nth > 5)
      return error(fmt::format("\"{}\": D#N takes N from 1 to 5 (the Nth weekday D of the month)", item));
    spec.nth_weekdays[5 * weekday + static_cast<std::size_t>(*nth) - 1] = true;
    return true;
  }

  std::unexpected<Error> error(std::string_view what) const {
    return fail(ErrorKind::bad_input, fmt::format("cron: field {} ({}): {}", number_, kind_.name, what));
  }

  bool is_wildcard(std::string_view text) const { return text == "*" || (kind_.is_day_field && text == "?"); }

  Result<Mask> parse_item(std::string_view item) const {
    const auto slash = item.find('/');
    const auto base = item.substr(0, slash);
    std::optional<int> step;
    if (slash != std::string_view::npos) {
      step = TRY(parse_step(item.substr(slash + 1), item));
    }
    if (is_wildcard(base)) return values_in(kind_.min, kind_.max, step.value_or(1));
    if (!base.empty() && to_lower(base.front()) == 'h') {
      if (is_year()) return error(fmt::format("\"{}\": H picks no year; list the years", item));
      return parse_hashed(base.substr(1), step, item);
    }
    auto range = TRY(parse_range(base, item));
    // "a/step" means a-max/step, as Vixie cron, cronie and croniter read it.
    const bool open_ended = step && base.find('-') == std::string_view::npos;
    return values_in(range.low, open_ended ? kind_.max : range.high, step.value_or(1));
  }

  Result<int> parse_step(std::string_view text, std::string_view item) const {
    auto step = read_number(text);
    if (!step) return error(fmt::format("step \"{}\" in \"{}\" is not a number", text, item));
    if (*step < 1 || *step > kind_.max) return error(fmt::format("step {} is out of range 1-{}", text, kind_.max));
    return *step;
  }

  // Jenkins' H: a value picked by a stable hash of the task's name, within
  // H(a-b) when given; H/step starts at a hashed offset below the step.
  Result<Mask> parse_hashed(std::string_view rest, std::optional<int> step, std::string_view item) const {
    Range range{kind_.min, kind_.hash_max};
    if (!rest.empty()) {
      if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')')
        return error(fmt::format("expected H, H(a-b), H/step or H(a-b)/step, found \"{}\"", item));
      range = TRY(parse_range(rest.substr(1, rest.size() - 2), item));
    }
    const auto hash = stable_hash(task_name_, kind_.hash_salt);
    const auto span = static_cast<std::uint64_t>(range.high - range.low + 1);
    if (!step) return Mask{}.set(static_cast<std::size_t>(range.low) + hash % span);
    const auto offset = static_cast<int>(hash % std::min(static_cast<std::uint64_t>(*step), span));
    return values_in(range.low + offset, range.high, *step);
  }

  Result<Range> parse_range(std::string_view text, std::string_view item) const {
    const auto dash = text.find('-');
    auto low = TRY(parse_value(text.substr(0, dash), item));
    if (dash == std::string_view::npos) return Range{low, low};
    auto high = TRY(is_day_of_month() && equals_ignoring_case(text.substr(dash + 1), "L")
                        ? Result<int>(kind_.max)
                        : parse_value(text.substr(dash + 1), item));
    // Sunday ends a weekday range as 7, so "FRI-SUN" reads as people mean it.
    if (is_day_of_week() && high == 0 && low > 0) high = 7;
    if (low > high) return error(fmt::format("range {} is reversed", text));
    return Range{low, high};
  }

  Result<int> parse_value(std::string_view token, std::string_view item) const {
    if (token.empty()) return error(fmt::format("missing a value in \"{}\"", item));
    if (std::ranges::all_of(token, is_letter) && !kind_.names.empty()) return parse_name(token);
    auto number = read_number(token);
    if (!number) return error(fmt::format("\"{}\" is not a number", token));
    const int low = kind_.min + kind_.value_offset;
    const int high = kind_.max + kind_.value_offset;
    if (*number < low || *number > high) return error(fmt::format("{} is out of range {}-{}", token, low, high));
    return *number - kind_.value_offset;
  }

  Result<int> parse_name(std::string_view token) const {
    const auto found = std::ranges::find_if(kind_.names, [&](auto name) { return equals_ignoring_case(name, token); });
    if (found == kind_.names.end())
      return error(fmt::format("unknown name \"{}\" (use {}-{})", token, to_upper(kind_.names.front()),
                               to_upper(kind_.names.back())));
    return kind_.min_name_value + static_cast<int>(found - kind_.names.begin());
  }

  static std::string to_upper(std::string_view name) {
    std::string upper(name);
    for (char& c : upper) c = static_cast<char>(c - 'a' + 'A');
    return upper;
  }

  const FieldKind& kind_;
  std::size_t number_;
  std::string_view task_name_;
};

Result<std::string_view> expand_alias(std::string_view expression) {
  if (!expression.starts_with('@')) return expression;
  const auto found =
      std::ranges::find_if(aliases, [&](const Alias& a) { return equals_ignoring_case(a.name, expression); });
  if (found == aliases.end())
    return fail(ErrorKind::bad_input,
                fmt::format("cron: unknown alias \"{}\" (use @hourly, @daily, @midnight, @weekly, @monthly, @yearly "
                            "or @annually)",
                            expression));
  return found->expression;
}

// Day 7 of the week is Sunday, day 0.
std::bitset<7> fold_sunday(const Mask& mask) { return std::bitset<7>((mask | (mask >> 7)).to_ullong() & 0x7f); }

// The field's values, in the width its spec keeps; only the years are wider than a word.
template <std::size_t N>
std::bitset<N> narrow(const Mask& mask) {
  return std::bitset<N>((mask & values_in(0, static_cast<int>(N) - 1, 1)).to_ullong());
}

bool starts_unrestricted(std::string_view field) { return field.starts_with('*') || field.starts_with('?'); }

// The fields as written, by kind; a 5-field expression has no seconds, and
// only a 7-field one has a year.
struct Fields {
  std::array<std::string_view, field::count> texts{};
  std::size_t first_written = 0;
  std::size_t end_written = field::year;

  // The field's number as the user counts.
  std::size_t number(std::size_t kind) const { return kind - first_written + 1; }
};

Result<Fields> split_into_fields(std::string_view expression) {
  const auto trimmed = trim(expression);
  if (trimmed.empty()) return fail(ErrorKind::bad_input, "cron: empty expression (write e.g. \"*/15 * * * *\")");
  auto expanded = TRY(expand_alias(trimmed));
  const auto written = split_on_spaces(expanded);
  if (written.size() < 5 || written.size() > 7)
    return fail(ErrorKind::bad_input,
                fmt::format("cron: expected 5 fields (minute hour day-of-month month day-of-week), 6 with seconds "
                            "first, or 7 with seconds first and the year last, found {} in \"{}\"",
                            written.size(), trimmed));
  Fields fields;
  fields.first_written = written.size() == 5 ? 1 : 0;
  fields.end_written = written.size() == 7 ? field::count : field::year;
  std::ranges::copy(written, fields.texts.begin() + static_cast<std::ptrdiff_t>(fields.first_written));
  return fields;
}

Result<CronSpec> spec_from_fields(const Fields& fields, std::string_view task_name) {
  std::array<Mask, field::count> masks{};
  masks[field::second].set(0);  // second 0 unless given
  CronSpec spec;
  for (std::size_t kind = fields.first_written; kind < fields.end_written; ++kind) {
    masks[kind] = TRY(FieldParser(field_kinds[kind], fields.number(kind), task_name).parse(fields.texts[kind], spec));
  }
  spec.seconds = narrow<60>(masks[field::second]);
  spec.minutes = narrow<60>(masks[field::minute]);
  spec.hours = narrow<24>(masks[field::hour]);
  spec.days_of_month = narrow<32>(masks[field::day_of_month]);
  spec.months = narrow<13>(masks[field::month]);
  spec.days_of_week = fold_sunday(masks[field::day_of_week]);
  if (fields.end_written == field::count) spec.years = masks[field::year];
  // As cronie does, a day field that starts with '*' ("*/2" too) counts as
  // unrestricted; croniter instead looks at the values ("1-31" is unrestricted).
  spec.day_of_month_restricted = !starts_unrestricted(fields.texts[field::day_of_month]);
  spec.day_of_week_restricted = !starts_unrestricted(fields.texts[field::day_of_week]);
  spec.hour_follows_clock = fields.texts[field::hour].starts_with('*');
  return spec;
}

// Whether a month of `length` days (in some year) has a day the day-of-month
// field lists, by number or from the month's end.
bool has_listed_day(const CronSpec& spec, std::size_t length) {
  for (std::size_t d = 1; d <= length; ++d) {
    if (spec.days_of_month[d] || spec.nearest_weekdays[d] || spec.days_before_last[d - 1]) return true;
  }
  return spec.last_weekday;
}

bool some_listed_month_has_a_listed_day(const CronSpec& spec) {
  for (std::size_t m = 1; m <= 12; ++m) {
    if (spec.months[m] && has_listed_day(spec, static_cast<std::size_t>(longest_month_days[m]))) return true;
  }
  return false;
}

// Decided from the fields, never by searching. With Vixie's OR any listed
// weekday runs the job; otherwise a listed day in a listed month does, as every
// date (Feb 29 too) falls on every weekday in some year.
bool runs_someday(const CronSpec& spec) {
  return (spec.day_of_month_restricted && spec.day_of_week_restricted) || some_listed_month_has_a_listed_day(spec);
}

std::unexpected<Error> never_runs_error(const Fields& fields) {
  return fail(ErrorKind::bad_input,
              fmt::format("cron: field {} (day of month): \"{}\" never falls in the months of field {} (\"{}\"), so "
                          "the expression never runs",
                          fields.number(field::day_of_month), fields.texts[field::day_of_month],
                          fields.number(field::month), fields.texts[field::month]));
}

// ---- searching --------------------------------------------------------------

// The lowest set bit at or above `from`; every bitset here fits one word.
template <std::size_t N>
std::optional<int> first_set_from(const std::bitset<N>& bits, int from) {
  if (from >= static_cast<int>(N)) return std::nullopt;
  const auto rest = (bits >> static_cast<std::size_t>(from)).to_ullong();
  if (rest == 0) return std::nullopt;
  return from + std::countr_zero(rest);
}

// The first time of day at or after `from` whose hour, minute and second match.
std::optional<seconds> next_time_of_day(const CronSpec& spec, seconds from) {
  const auto from_hour = static_cast<int>(from / hours{1});
  const auto from_minute = static_cast<int>(from % hours{1} / minutes{1});
  const auto from_second = static_cast<int>(from % minutes{1} / seconds{1});
  for (auto hour = first_set_from(spec.hours, from_hour); hour; hour = first_set_from(spec.hours, *hour + 1)) {
    const bool same_hour = *hour == from_hour;
    for (auto minute = first_set_from(spec.minutes, same_hour ? from_minute : 0); minute;
         minute = first_set_from(spec.minutes, *minute + 1)) {
      const bool same_minute = same_hour && *minute == from_minute;
      if (auto second = first_set_from(spec.seconds, same_minute ? from_second : 0))
        return hours{*hour} + minutes{*minute} + seconds{*second};
    }
  }
  return std::nullopt;
}

// ---- days that depend on the month --------------------------------------------

unsigned last_day_of(const date::year_month_day& date) {
  return static_cast<unsigned>((date.year() / date.month() / date::last).day());
}

// The Monday-to-Friday nearest day `day` (a `weekday`) of a month of `last`
// days, never leaving the month: a Saturday gives the Friday before (the
// 1st: the Monday after), a Sunday the Monday after (the last: the Friday
// before), as Quartz and cron-utils have it.
unsigned nearest_weekday(unsigned day, unsigned weekday, unsigned last) {
  if (weekday == 6) return day == 1 ? 3 : day - 1;
  if (weekday == 0) return day == last ? day - 2 : day + 1;
  return day;
}

// L-N, NW and LW on `day`, a `weekday` (Sunday 0) of a month of `last` days.
bool month_end_matches(const CronSpec& spec, unsigned day, unsigned weekday, unsigned last) {
  if (spec.days_before_last[last - day]) return true;
  const unsigned last_weekday = (weekday + last - day) % 7;  // of the last day
  if (spec.last_weekday && day == last - (last_weekday == 6 ? 1 : last_weekday == 0 ? 2 : 0)) return true;
  // Day N moves at most two days: only N within two of `day` can land on it.
  for (unsigned n = day > 2 ? day - 2 : 1; n <= std::min(day + 2, last); ++n) {
    if (spec.nearest_weekdays[n] && nearest_weekday(n, (weekday + 7 + n - day) % 7, last) == day) return true;
  }
  return false;
}

// D#N and DL on `day`, a `weekday` (Sunday 0) of a month of `last` days.
bool nth_weekday_matches(const CronSpec& spec, unsigned day, unsigned weekday, unsigned last) {
  return spec.nth_weekdays[5 * weekday + (day - 1) / 7] || (spec.last_weekdays[weekday] && day + 7 > last);
}

// Vixie's rule: when both day fields are restricted, a day matches if either
// does; otherwise both must (an unrestricted field matches every day unless
// it has a step, as in cronie). The days from the month's end count as days
// of their field.
bool day_matches(const CronSpec& spec, const date::year_month_day& date, date::weekday weekday) {
  const auto day = static_cast<unsigned>(date.day());
  const auto week_day = weekday.c_encoding();
  const bool from_end = spec.days_before_last.any() || spec.nearest_weekdays.any() || spec.last_weekday;
  const bool from_week = spec.nth_weekdays.any() || spec.last_weekdays.any();
  const auto last = from_end || from_week ? last_day_of(date) : 31;
  const bool by_month = spec.days_of_month[day] || (from_end && month_end_matches(spec, day, week_day, last));
  const bool by_week = spec.days_of_week[week_day] || (from_week && nth_weekday_matches(spec, day, week_day, last));
  if (spec.day_of_month_restricted && spec.day_of_week_restricted) return by_month || by_week;
  return by_month && by_week;
}

date::local_days first_day_of_next_month(const date::year_month_day& date) {
  return date::local_days{(date.year() / date.month() + date::months{1}) / 1};
}

// The first year at or after `year` that the year field lists; none when it
// lists none (every year when there is no year field).
std::optional<int> first_listed_year(const CronSpec& spec, int year) {
  if (!spec.years) return year;
  for (int listed = std::max(year, cron_first_year); listed <= cron_last_year; ++listed) {
    if ((*spec.years)[static_cast<std::size_t>(listed - cron_first_year)]) return listed;
  }
  return std::nullopt;
}

}  // namespace

// Skips whole months and days that cannot match.
std::optional<LocalTime> cron_next_wall(const CronSpec& spec, LocalTime from) {
  auto day = std::chrono::floor<days>(from);
  auto time_of_day = from - day;
  for (const auto horizon = day + calendar_search_horizon; day < horizon; time_of_day = seconds{0}) {
    const date::year_month_day date{day};
    const int year = static_cast<int>(date.year());
    const auto listed_year = first_listed_year(spec, year);
    if (!listed_year) return std::nullopt;
    if (*listed_year != year) {
      day = date::local_days{date::year{*listed_year} / 1 / 1};
      continue;
    }
    if (!spec.months[static_cast<unsigned>(date.month())]) {
      day = first_day_of_next_month(date);
      continue;
    }
    if (day_matches(spec, date, date::weekday{day})) {
      if (auto time = next_time_of_day(spec, time_of_day)) return day + *time;
    }
    day += days{1};
  }
  return std::nullopt;
}

Result<CronSpec> parse_cron(std::string_view expression, std::string_view task_name) {
  auto fields = TRY(split_into_fields(expression));
  auto spec = spec_from_fields(fields, task_name);
  if (spec && !runs_someday(*spec)) return never_runs_error(fields);
  return spec;
}

DstRule cron_default_dst(const CronSpec& spec) {
  return spec.hour_follows_clock ? clock_following_dst : fixed_time_dst;
}

std::optional<Time> cron_next_after(const CronSpec& spec, Zone zone, Time t, DstPolicy policy) {
  auto next_wall = [&spec](LocalTime from) { return cron_next_wall(spec, from); };
  return next_on_wall_clock(zone, t, next_wall, policy.over(cron_default_dst(spec)));
}

}  // namespace taskd::core
