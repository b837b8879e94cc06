#include "core/rrule.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <charconv>
#include <compare>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <ranges>
#include <set>
#include <vector>

namespace taskd::core {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
using Day = date::local_days;

// The years taskd computes occurrences in: DTSTART lies in them, and a rule
// ends with the last.
constexpr int first_year = 1900;
constexpr int last_year = 2582;
const Day last_day{date::year{last_year} / 12 / 31};
// A COUNT rule is always walked from DTSTART: this bounds that walk.
constexpr int max_count = 100'000;
constexpr int max_interval = 1'000'000'000;
// No zone is further ahead of UTC (Pacific/Kiritimati).
constexpr hours widest_utc_offset{14};
constexpr std::int64_t seconds_a_day = 86'400;

std::unexpected<Error> problem(std::string what) { return fail(ErrorKind::bad_input, std::move(what)); }

// ---- the rule as written ------------------------------------------------------

enum class Freq { secondly, minutely, hourly, daily, weekly, monthly, yearly };
constexpr std::array<std::string_view, 7> freq_names{"SECONDLY", "MINUTELY", "HOURLY", "DAILY",
                                                     "WEEKLY",   "MONTHLY",  "YEARLY"};
constexpr std::array<std::string_view, 7> weekday_names{"MO", "TU", "WE", "TH", "FR", "SA", "SU"};

std::string_view name_of(Freq freq) { return freq_names[static_cast<std::size_t>(freq)]; }
bool is_sub_daily(Freq freq) { return freq <= Freq::hourly; }

struct WeekdayNum {
  int ordinal;  // 0: every such weekday of the period; 2: the second; -1: the last
  std::string_view day;
  auto operator<=>(const WeekdayNum&) const = default;
};

std::string weekday_num_text(const WeekdayNum& day) {
  return day.ordinal == 0 ? std::string(day.day) : fmt::format("{}{}", day.ordinal, day.day);
}

// UNTIL with a "Z" is an instant; without, a wall time in the task's zone.
struct Until {
  LocalTime wall;
  bool utc;

  bool excludes(LocalTime local, Time instant) const {
    return utc ? instant > Time{std::chrono::sys_seconds{wall.time_since_epoch()}} : local > wall;
  }
};

struct RuleParts {
  std::optional<Freq> freq;
  int interval = 1;
  std::optional<int> count;
  std::optional<Until> until;
  std::string_view week_start = "MO";
  std::vector<WeekdayNum> by_day;
  std::vector<int> by_month, by_week_no, by_year_day, by_month_day, by_hour, by_minute, by_second, by_set_pos;
};

struct NumberListKind {
  std::string_view name;
  int min;
  int max;
  bool counts_from_end;  // -max..-1 count back from the end of the period
  std::vector<int> RuleParts::*list;
};

constexpr std::array<NumberListKind, 8> number_list_kinds{{
    {"BYMONTH", 1, 12, false, &RuleParts::by_month},
    {"BYWEEKNO", 1, 53, true, &RuleParts::by_week_no},
    {"BYYEARDAY", 1, 366, true, &RuleParts::by_year_day},
    {"BYMONTHDAY", 1, 31, true, &RuleParts::by_month_day},
    {"BYHOUR", 0, 23, false, &RuleParts::by_hour},
    {"BYMINUTE", 0, 59, false, &RuleParts::by_minute},
    {"BYSECOND", 0, 59, false, &RuleParts::by_second},
    {"BYSETPOS", 1, 366, true, &RuleParts::by_set_pos},
}};

// The units of a day; index = Freq::secondly, minutely, hourly.
struct TimeLevel {
  std::string_view unit;
  int values;  // in the next larger unit
  std::vector<int> RuleParts::*list;
};

constexpr std::array<TimeLevel, 3> time_levels{{
    {"second", 60, &RuleParts::by_second},
    {"minute", 60, &RuleParts::by_minute},
    {"hour", 24, &RuleParts::by_hour},
}};

const TimeLevel& time_level_of(Freq freq) { return time_levels[static_cast<std::size_t>(freq)]; }

// A wall time's second, minute and hour, indexed like time_levels.
std::array<int, 3> time_fields(LocalTime local) {
  date::hh_mm_ss time_of_day{local - date::floor<date::days>(local)};
  return {static_cast<int>(time_of_day.seconds().count()), static_cast<int>(time_of_day.minutes().count()),
          static_cast<int>(time_of_day.hours().count())};
}

bool has_ordinals(const std::vector<WeekdayNum>& days) {
  return std::ranges::any_of(days, [](const WeekdayNum& day) { return day.ordinal != 0; });
}

int by_part_count(const RuleParts& parts) {
  int count = !parts.by_day.empty();
  for (const auto& kind : number_list_kinds) count += !(parts.*kind.list).empty();
  return count;
}

// ---- reading --------------------------------------------------------------------

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> items;
  for (auto end = text.find(separator); end != std::string_view::npos; end = text.find(separator)) {
    items.push_back(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
  items.push_back(text);
  return items;
}

std::optional<int> read_unsigned(std::string_view text) {
  int value = 0;
  if (text.empty() || !std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc{}) return std::nullopt;
  return value;
}

std::optional<int> read_signed(std::string_view text) {
  int sign = text.starts_with('-') ? -1 : 1;
  if (text.starts_with('-') || text.starts_with('+')) text.remove_prefix(1);
  auto magnitude = read_unsigned(text);
  if (!magnitude) return std::nullopt;
  return sign * *magnitude;
}

std::optional<std::string_view> find_weekday(std::string_view text) {
  auto found = std::ranges::find(weekday_names, text);
  if (found == weekday_names.end()) return std::nullopt;
  return *found;
}

Result<Freq> read_freq(std::string_view value) {
  auto found = std::ranges::find(freq_names, value);
  if (found == freq_names.end()) {
    return problem(fmt::format("unknown FREQ \"{}\" (use {})", value, fmt::join(freq_names, ", ")));
  }
  return static_cast<Freq>(found - freq_names.begin());
}

Result<int> read_bounded(std::string_view name, std::string_view value, int max) {
  auto number = read_unsigned(value);
  if (!number || *number < 1 || *number > max) {
    return problem(fmt::format("{} takes a whole number from 1 to {}, not \"{}\"", name, max, value));
  }
  return *number;
}

Result<std::string_view> read_week_start(std::string_view value) {
  auto day = find_weekday(value);
  if (!day) return problem(fmt::format("WKST takes a weekday ({}), not \"{}\"", fmt::join(weekday_names, ", "), value));
  return *day;
}

std::optional<LocalTime> read_compact_date_time(std::string_view text) {
  if (text.size() != 15 || text[8] != 'T') return std::nullopt;
  std::array<std::optional<int>, 6> fields{read_unsigned(text.substr(0, 4)),  read_unsigned(text.substr(4, 2)),
                                           read_unsigned(text.substr(6, 2)),  read_unsigned(text.substr(9, 2)),
                                           read_unsigned(text.substr(11, 2)), read_unsigned(text.substr(13, 2))};
  if (!std::ranges::all_of(fields, [](const auto& field) { return field.has_value(); })) return std::nullopt;
  auto [year, month, day, hour, minute, second] = fields;
  date::year_month_day date{date::year{*year}, date::month{static_cast<unsigned>(*month)},
                            date::day{static_cast<unsigned>(*day)}};
  if (!date.ok() || *hour > 23 || *minute > 59 || *second > 59) return std::nullopt;
  return date::local_days{date} + hours{*hour} + minutes{*minute} + seconds{*second};
}

Result<Until> read_until(std::string_view value) {
  bool utc = value.ends_with('Z');
  auto wall = read_compact_date_time(utc ? value.substr(0, value.size() - 1) : value);
  if (!wall) {
    return problem(fmt::format(
        "UNTIL takes a date-time such as 20261231T235959 (wall time) or 20261231T235959Z (UTC), not \"{}\"", value));
  }
  return Until{*wall, utc};
}

Result<WeekdayNum> read_weekday_num(std::string_view item) {
  auto split_at = item.size() - std::min<std::size_t>(2, item.size());
  auto ordinal_text = item.substr(0, split_at);
  auto day = find_weekday(item.substr(split_at));
  auto ordinal = ordinal_text.empty() ? std::optional<int>{0} : read_signed(ordinal_text);
  if (!day || !ordinal || (!ordinal_text.empty() && (*ordinal == 0 || std::abs(*ordinal) > 53))) {
    return problem(fmt::format("BYDAY takes weekdays such as MO, 2TU or -1FR (numbers -53..53), not \"{}\"", item));
  }
  return WeekdayNum{*ordinal, *day};
}

Result<std::vector<WeekdayNum>> read_by_day(std::string_view value) {
  std::vector<WeekdayNum> days;
  for (auto item : split(value, ',')) {
    auto day = TRY(read_weekday_num(item));
    days.push_back(day);
  }
  return days;
}

bool allows(const NumberListKind& kind, int value) {
  return (value >= kind.min && value <= kind.max) || (kind.counts_from_end && value <= -1 && value >= -kind.max);
}

Result<std::vector<int>> read_number_list(const NumberListKind& kind, std::string_view value) {
  std::vector<int> numbers;
  for (auto item : split(value, ',')) {
    auto number = read_signed(item);
    if (!number || !allows(kind, *number)) {
      auto backwards = kind.counts_from_end ? fmt::format(" or -{}..-1", kind.max) : std::string{};
      return problem(fmt::format("{} takes {}..{}{}, not \"{}\"", kind.name, kind.min, kind.max, backwards, item));
    }
    numbers.push_back(*number);
  }
  return numbers;
}

template <class Target, class Value>
Result<void> assign(Target& target, Result<Value> value) {
  target = TRY(std::move(value));
  return {};
}

Result<void> read_part(std::string_view name, std::string_view value, RuleParts& parts) {
  if (name == "FREQ") return assign(parts.freq, read_freq(value));
  if (name == "INTERVAL") return assign(parts.interval, read_bounded(name, value, max_interval));
  if (name == "COUNT") return assign(parts.count, read_bounded(name, value, max_count));
  if (name == "UNTIL") return assign(parts.until, read_until(value));
  if (name == "WKST") return assign(parts.week_start, read_week_start(value));
  if (name == "BYDAY") return assign(parts.by_day, read_by_day(value));
  for (const auto& kind : number_list_kinds) {
    if (name == kind.name) return assign(parts.*kind.list, read_number_list(kind, value));
  }
  return problem(fmt::format("unknown part \"{}\"", name));
}

// Trimmed, upper case, without "RRULE:" and a trailing ';' (Outlook adds one).
std::string plain_rule_text(std::string_view rule) {
  auto first = rule.find_first_not_of(" \t\r\n");
  auto last = rule.find_last_not_of(" \t\r\n");
  std::string text{first == std::string_view::npos ? std::string_view{} : rule.substr(first, last - first + 1)};
  std::ranges::transform(text, text.begin(), [](char c) { return c >= 'a' && c <= 'z' ? char(c - 'a' + 'A') : c; });
  if (text.starts_with("RRULE:")) text.erase(0, 6);
  if (text.ends_with(';')) text.pop_back();
  return text;
}

Result<RuleParts> read_parts(std::string_view text) {
  if (text.empty()) return problem("the rule is empty");
  RuleParts parts;
  std::set<std::string_view> seen;
  for (auto part : split(text, ';')) {
    auto equals = part.find('=');
    if (equals == std::string_view::npos || equals == 0) return problem(fmt::format("\"{}\" is not NAME=VALUE", part));
    auto name = part.substr(0, equals);
    auto value = part.substr(equals + 1);
    if (value.empty()) return problem(fmt::format("{} has no value", name));
    if (!seen.insert(name).second) return problem(fmt::format("{} is given twice", name));
    TRY(read_part(name, value, parts));
  }
  if (!parts.freq) return problem("FREQ is missing");
  return parts;
}

// ---- checking -------------------------------------------------------------------

// What RFC 5545 (section 3.3.10) forbids.
Result<void> check_rfc_rules(const RuleParts& parts) {
  auto freq = *parts.freq;
  if (parts.count && parts.until) return problem("COUNT and UNTIL exclude each other");
  if (!parts.by_week_no.empty() && freq != Freq::yearly) return problem("BYWEEKNO needs FREQ=YEARLY");
  if (!parts.by_year_day.empty() && (freq == Freq::daily || freq == Freq::weekly || freq == Freq::monthly)) {
    return problem(fmt::format("BYYEARDAY does not go with FREQ={}", name_of(freq)));
  }
  if (!parts.by_month_day.empty() && freq == Freq::weekly) return problem("BYMONTHDAY does not go with FREQ=WEEKLY");
  if (has_ordinals(parts.by_day) && freq != Freq::monthly && freq != Freq::yearly) {
    return problem("BYDAY with a number (1MO, -1FR) needs FREQ=MONTHLY or FREQ=YEARLY");
  }
  if (has_ordinals(parts.by_day) && !parts.by_week_no.empty()) {
    return problem("BYDAY with a number (1MO, -1FR) does not go with BYWEEKNO");
  }
  if (!parts.by_set_pos.empty() && by_part_count(parts) == 1) {
    return problem("BYSETPOS needs another BYxxx part to pick from");
  }
  return {};
}

Result<void> check_ordinals_fit_month(const RuleParts& parts) {
  bool within_month = parts.freq == Freq::monthly || (parts.freq == Freq::yearly && !parts.by_month.empty());
  for (const auto& day : parts.by_day) {
    if (within_month && std::abs(day.ordinal) > 5) {
      return problem(
          fmt::format("BYDAY={} never occurs: a month has at most 5 of each weekday", weekday_num_text(day)));
    }
  }
  return {};
}


Result<void> check_dtstart(LocalTime dtstart) {
  auto year = int(date::year_month_day{date::floor<date::days>(dtstart)}.year());
  if (year < first_year || year > last_year) {
    return problem(fmt::format("DTSTART must lie in the years {} to {}", first_year, last_year));
  }
  return {};
}

// The rule as parse_rrule stores it.
std::string rule_text(const RuleParts& parts) {
  std::vector<std::string> items{fmt::format("FREQ={}", name_of(*parts.freq))};
  if (parts.interval != 1) items.push_back(fmt::format("INTERVAL={}", parts.interval));
  if (parts.count) items.push_back(fmt::format("COUNT={}", *parts.count));
  if (parts.until) {
    items.push_back(
        fmt::format("UNTIL={}{}", date::format("%Y%m%dT%H%M%S", parts.until->wall), parts.until->utc ? "Z" : ""));
  }
  if (!parts.by_day.empty()) {
    std::vector<std::string> days;
    std::ranges::transform(parts.by_day, std::back_inserter(days), weekday_num_text);
    items.push_back(fmt::format("BYDAY={}", fmt::join(days, ",")));
  }
  for (const auto& kind : number_list_kinds) {
    const auto& list = parts.*kind.list;
    if (!list.empty()) items.push_back(fmt::format("{}={}", kind.name, fmt::join(list, ",")));
  }
  if (parts.week_start != "MO") items.push_back(fmt::format("WKST={}", parts.week_start));
  return fmt::format("{}", fmt::join(items, ";"));
}

// ---- the calendar -------------------------------------------------------------------

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }
std::int64_t floor_mod(std::int64_t a, std::int64_t b) { return a - floor_div(a, b) * b; }

std::vector<int> all_values(int from, int to) {
  std::vector<int> values;
  for (int value = from; value <= to; ++value) values.push_back(value);
  return values;
}

// Monday = 0.
int weekday_of(Day day) { return static_cast<int>(date::weekday{day}.iso_encoding()) - 1; }

int weekday_index(std::string_view name) {
  return static_cast<int>(std::ranges::find(weekday_names, name) - weekday_names.begin());
}

// The first day of the week (starting on `week_start`) that holds `day`.
Day week_start_of(Day day, int week_start) { return day - date::days{(weekday_of(day) - week_start + 7) % 7}; }

// Week 1 of a year is its first week with four or more of its days: the week
// of January 4 (ISO 8601 when weeks start on Monday).
Day first_week_of(int year, int week_start) { return week_start_of(Day{date::year{year} / 1 / 4}, week_start); }

struct WeekNumber {
  int number;   // from 1
  int from_end; // 1 for the year's last week
};

// A week belongs to the year that holds four or more of its days, so the
// first days of January can be in the previous year's last week, and the last
// days of December in the next year's week 1.
WeekNumber week_number_of(Day day, int week_start) {
  auto week = week_start_of(day, week_start);
  int year = int(date::year_month_day{week + date::days{3}}.year());
  auto first = first_week_of(year, week_start);
  auto weeks_in_year = (first_week_of(year + 1, week_start) - first).count() / 7;
  auto number = (week - first).count() / 7 + 1;
  return {static_cast<int>(number), static_cast<int>(weeks_in_year - number + 1)};
}

// Days [first, last], both included.
struct Span {
  Day first;
  Day last;

  int position(Day day) const { return static_cast<int>((day - first).count()) + 1; }
  int position_from_end(Day day) const { return static_cast<int>((last - day).count()) + 1; }
  // Which of its weekday `day` is in the span, from the start and from the end.
  int week_position(Day day) const { return static_cast<int>((day - first).count() / 7) + 1; }
  int week_position_from_end(Day day) const { return static_cast<int>((last - day).count() / 7) + 1; }
};

Span year_of(date::year_month_day date) { return {Day{date.year() / 1 / 1}, Day{date.year() / 12 / 31}}; }
Span month_of(date::year_month_day date) {
  return {Day{date.year() / date.month() / 1}, Day{date.year() / date.month() / date::last}};
}

// ---- the days a rule keeps ------------------------------------------------------------

// Numbers counted from the start of a period (1, 2, ...) or back from its end (-1, -2, ...).
template <std::size_t Max>
struct FromEitherEnd {
  std::bitset<Max + 1> forward, backward;

  void add(int number) { (number > 0 ? forward : backward).set(static_cast<std::size_t>(std::abs(number))); }
  bool any() const { return forward.any() || backward.any(); }
  bool holds(int position, int position_from_end) const {
    return forward.test(static_cast<std::size_t>(position)) || backward.test(static_cast<std::size_t>(position_from_end));
  }
};

// RFC 5545's BYMONTH, BYWEEKNO, BYYEARDAY, BYMONTHDAY and BYDAY, each a
// condition every day must meet (the periods hold the candidates: "expand" in
// the RFC's table is a condition on the days of a longer period).
struct DayFilter {
  std::bitset<13> months;
  FromEitherEnd<53> weeks;
  FromEitherEnd<366> year_days;
  FromEitherEnd<31> month_days;
  std::bitset<7> weekdays;                              // MO, FR
  std::array<FromEitherEnd<53>, 7> numbered_weekdays;  // 2TU, -1FR
  bool numbered_within_year = false;                    // else within the month
  int week_start = 0;

  bool by_day() const {
    return weekdays.any() || std::ranges::any_of(numbered_weekdays, [](const auto& numbers) { return numbers.any(); });
  }

  bool keeps_weekday(Day day, date::year_month_day date) const {
    auto weekday = static_cast<std::size_t>(weekday_of(day));
    if (weekdays.test(weekday)) return true;
    auto span = numbered_within_year ? year_of(date) : month_of(date);
    return numbered_weekdays[weekday].holds(span.week_position(day), span.week_position_from_end(day));
  }

  bool keeps(Day day) const {
    date::year_month_day date{day};
    if (months.any() && !months.test(unsigned(date.month()))) return false;
    if (weeks.any()) {
      auto week = week_number_of(day, week_start);
      if (!weeks.holds(week.number, week.from_end)) return false;
    }
    if (year_days.any() && !year_days.holds(year_of(date).position(day), year_of(date).position_from_end(day))) {
      return false;
    }
    if (month_days.any() && !month_days.holds(month_of(date).position(day), month_of(date).position_from_end(day))) {
      return false;
    }
    return !by_day() || keeps_weekday(day, date);
  }
};

DayFilter day_filter(const RuleParts& parts) {
  DayFilter filter;
  for (int month : parts.by_month) filter.months.set(static_cast<std::size_t>(month));
  for (int week : parts.by_week_no) filter.weeks.add(week);
  for (int day : parts.by_year_day) filter.year_days.add(day);
  for (int day : parts.by_month_day) filter.month_days.add(day);
  for (const auto& day : parts.by_day) {
    auto weekday = static_cast<std::size_t>(weekday_index(day.day));
    if (day.ordinal == 0) {
      filter.weekdays.set(weekday);
    } else {
      filter.numbered_weekdays[weekday].add(day.ordinal);
    }
  }
  filter.numbered_within_year = parts.freq == Freq::yearly && parts.by_month.empty();
  filter.week_start = weekday_index(parts.week_start);
  return filter;
}

// ---- the times a rule keeps -------------------------------------------------------------

// The wall-clock times of every day a rule occurs on: each combination of its
// hours, minutes and seconds, in order.
struct TimesOfDay {
  std::vector<int> hour_values, minute_values, second_values;

  std::size_t size() const { return hour_values.size() * minute_values.size() * second_values.size(); }

  seconds at(std::size_t index) const {
    auto per_hour = minute_values.size() * second_values.size();
    return hours{hour_values[index / per_hour]} +
           minutes{minute_values[index / second_values.size() % minute_values.size()]} +
           seconds{second_values[index % second_values.size()]};
  }

  // The index of the first time at or after `time`; size() if there is none.
  std::size_t first_at_or_after(seconds time) const {
    auto indexes = std::views::iota(std::size_t{0}, size());
    auto first = std::ranges::partition_point(indexes, [&](std::size_t index) { return at(index) < time; });
    return first == indexes.end() ? size() : *first;
  }

  // How many times share one value at a time level (0 second, 1 minute, 2 hour).
  std::size_t times_per_value_at(std::size_t level) const {
    return std::array<std::size_t, 3>{1, second_values.size(), minute_values.size() * second_values.size()}[level];
  }
};

// A time part the rule leaves out is DTSTART's below its frequency, and every
// value at or above it (FREQ=HOURLY: every hour, at DTSTART's minute and second).
TimesOfDay times_of_day(const RuleParts& parts, LocalTime dtstart) {
  auto fields = time_fields(dtstart);
  auto values = [&](std::size_t level) {
    const auto& list = parts.*time_levels[level].list;
    if (!list.empty()) return list;
    if (level < static_cast<std::size_t>(*parts.freq)) return std::vector<int>{fields[level]};
    return all_values(0, time_levels[level].values - 1);
  };
  return {values(2), values(1), values(0)};
}

// ---- the plan -----------------------------------------------------------------------

constexpr std::array<seconds, 3> time_units{seconds{1}, minutes{1}, hours{1}};

seconds unit_of(Freq freq) { return time_units[static_cast<std::size_t>(freq)]; }

// A rule's periods are the years, months, weeks (from WKST), days, hours,
// minutes or seconds of its FREQ, every INTERVAL-th from DTSTART's. Each
// period's occurrences are the times of day on the days it keeps, or those
// BYSETPOS picks from them.
struct Plan {
  Freq freq;
  std::int64_t interval;
  LocalTime dtstart;
  DayFilter days;
  TimesOfDay times;
  std::vector<int> set_positions;
  std::optional<int> count;

  bool sub_daily() const { return is_sub_daily(freq); }
  std::int64_t unit_seconds() const { return unit_of(freq).count(); }
  // Below a day, a period is one hour (minute, second) and holds the times that share it.
  std::size_t times_per_period() const {
    return sub_daily() ? times.times_per_value_at(static_cast<std::size_t>(freq)) : times.size();
  }
};

// RFC 5545 takes the day of a YEARLY, MONTHLY or WEEKLY rule without any day
// part from DTSTART (section 3.3.10: "the day is derived from DTSTART").
void fill_in_days_from_dtstart(RuleParts& parts, LocalTime dtstart) {
  if (!parts.by_week_no.empty() || !parts.by_year_day.empty() || !parts.by_month_day.empty() ||
      !parts.by_day.empty()) {
    return;
  }
  auto day = date::floor<date::days>(dtstart);
  date::year_month_day date{day};
  if (parts.freq == Freq::yearly && parts.by_month.empty()) parts.by_month = {static_cast<int>(unsigned(date.month()))};
  if (parts.freq == Freq::yearly || parts.freq == Freq::monthly) {
    parts.by_month_day = {static_cast<int>(unsigned(date.day()))};
  }
  if (parts.freq == Freq::weekly) parts.by_day = {WeekdayNum{0, weekday_names[static_cast<std::size_t>(weekday_of(day))]}};
}

void sort_lists(RuleParts& parts) {
  auto sort_unique = [](auto& list) {
    std::ranges::sort(list);
    list.erase(std::ranges::unique(list).begin(), list.end());
  };
  sort_unique(parts.by_day);
  for (const auto& kind : number_list_kinds) sort_unique(parts.*kind.list);
}

Plan make_plan(RuleParts parts, LocalTime dtstart) {
  fill_in_days_from_dtstart(parts, dtstart);
  sort_lists(parts);
  return {*parts.freq,       parts.interval, dtstart, day_filter(parts), times_of_day(parts, dtstart),
          parts.by_set_pos, parts.count};
}

// Below a day the periods fall on the units of the day equal to DTSTART's
// modulo gcd(INTERVAL, units in a day), day after day: a rule whose times all
// lie elsewhere never occurs.
Result<void> check_interval_reaches_a_time(const Plan& plan) {
  if (!plan.sub_daily()) return {};
  auto unit = plan.unit_seconds();
  auto step = std::gcd(seconds_a_day / unit, plan.interval);
  auto phase = floor_mod(floor_div(plan.dtstart.time_since_epoch().count(), unit), step);
  for (std::size_t index = 0; index < plan.times.size(); ++index) {
    if (plan.times.at(index).count() / unit % step == phase) return {};
  }
  return problem(fmt::format("produces no occurrence: INTERVAL={} from DTSTART never reaches the times it lists",
                             plan.interval));
}

// From DAILY down, every period has the same number of times to pick from.
Result<void> check_set_positions_reach(const Plan& plan) {
  if (plan.set_positions.empty() || plan.freq > Freq::daily) return {};
  auto size = static_cast<int>(plan.times_per_period());
  if (std::ranges::any_of(plan.set_positions, [&](int position) { return std::abs(position) <= size; })) return {};
  auto period = plan.sub_daily() ? time_level_of(plan.freq).unit : std::string_view{"day"};
  return problem(fmt::format("produces no occurrence: BYSETPOS={} picks from {} time{} a{} {}",
                             fmt::join(plan.set_positions, ","), size, size == 1 ? "" : "s",
                             period == "hour" ? "n" : "", period));
}

struct CompiledRule {
  RuleParts written;
  Plan plan;
};

Result<CompiledRule> compile(std::string_view rule, LocalTime dtstart) {
  auto parts = TRY(read_parts(plain_rule_text(rule)));
  for (auto check : {check_rfc_rules, check_ordinals_fit_month}) {
    TRY(check(parts));
  }
  TRY(check_dtstart(dtstart));
  auto plan = make_plan(parts, dtstart);
  for (auto check : {check_interval_reaches_a_time, check_set_positions_reach}) {
    TRY(check(plan));
  }
  return CompiledRule{parts, std::move(plan)};
}

// ---- the periods ------------------------------------------------------------------------

// One period's occurrences, in order: each kept day at each of the period's
// times of day, or what BYSETPOS picked from them.
struct Period {
  const Plan* plan;
  std::vector<Day> days;
  std::size_t first_time = 0;  // into plan->times
  std::size_t time_count = 0;
  std::vector<LocalTime> picked;

  std::size_t candidates() const { return days.size() * time_count; }
  LocalTime candidate(std::size_t index) const {
    return days[index / time_count] + plan->times.at(first_time + index % time_count);
  }

  std::size_t size() const { return plan->set_positions.empty() ? candidates() : picked.size(); }
  LocalTime at(std::size_t index) const { return plan->set_positions.empty() ? candidate(index) : picked[index]; }

  std::size_t first_at_or_after(LocalTime from) const {
    auto indexes = std::views::iota(std::size_t{0}, size());
    auto first = std::ranges::partition_point(indexes, [&](std::size_t index) { return at(index) < from; });
    return first == indexes.end() ? size() : *first;
  }

  // RFC 5545's BYSETPOS: the Nth candidate, or the Nth from the end.
  void pick() {
    picked.clear();
    auto count = static_cast<std::int64_t>(candidates());
    for (int position : plan->set_positions) {
      auto index = position > 0 ? position - 1 : count + position;
      if (index >= 0 && index < count) picked.push_back(candidate(static_cast<std::size_t>(index)));
    }
    std::ranges::sort(picked);
    picked.erase(std::ranges::unique(picked).begin(), picked.end());
  }
};

// The days of period `number` (0 is DTSTART's) of a DAILY and up rule; none
// past the last year.
std::optional<Span> days_of_period(const Plan& plan, std::int64_t number) {
  date::year_month_day start{date::floor<date::days>(plan.dtstart)};
  auto from_start = [&](std::int64_t days) -> std::optional<Day> {
    auto first = date::floor<date::days>(plan.dtstart) + date::days{days};
    if (days > (last_day - date::floor<date::days>(plan.dtstart)).count()) return std::nullopt;
    return first;
  };
  if (plan.freq == Freq::yearly || plan.freq == Freq::monthly) {
    auto months = int(start.year()) * std::int64_t{12} + unsigned(start.month()) - 1 +
                  number * (plan.freq == Freq::yearly ? 12 : 1);
    if (months / 12 > last_year) return std::nullopt;
    date::year_month first_month{date::year{static_cast<int>(months / 12)}, date::month{unsigned(months % 12) + 1}};
    if (plan.freq == Freq::yearly) return year_of(first_month / 1);
    return month_of(first_month / 1);
  }
  if (plan.freq == Freq::weekly) {
    auto week = week_start_of(date::floor<date::days>(plan.dtstart), plan.days.week_start);
    auto ahead = (week - date::floor<date::days>(plan.dtstart)).count() + number * 7;
    auto first = from_start(ahead);
    if (!first) return std::nullopt;
    return Span{*first, *first + date::days{6}};
  }
  auto day = from_start(number);
  if (!day) return std::nullopt;
  return Span{*day, *day};
}

// The number of the period that holds `local`, or of the latest period of the
// rule before it (DTSTART's if `local` is earlier).
std::int64_t period_number_of(const Plan& plan, LocalTime local) {
  std::int64_t number = 0;
  if (plan.sub_daily()) {
    auto unit = plan.unit_seconds();
    auto origin = floor_div(plan.dtstart.time_since_epoch().count(), unit);
    number = floor_div(local.time_since_epoch().count(), unit) - origin;
    return origin + std::max<std::int64_t>(0, floor_div(number, plan.interval) * plan.interval);
  }
  auto day = date::floor<date::days>(local);
  auto start = date::floor<date::days>(plan.dtstart);
  date::year_month_day date{day}, start_date{start};
  switch (plan.freq) {
    case Freq::yearly:
      number = int(date.year()) - int(start_date.year());
      break;
    case Freq::monthly:
      number = (int(date.year()) - int(start_date.year())) * 12 + int(unsigned(date.month())) -
               int(unsigned(start_date.month()));
      break;
    case Freq::weekly:
      number = floor_div((week_start_of(day, plan.days.week_start) -
                          week_start_of(start, plan.days.week_start)).count(), 7);
      break;
    default:
      number = (day - start).count();
  }
  return std::max<std::int64_t>(0, floor_div(number, plan.interval) * plan.interval);
}

// Fills `period` with period `number` of a DAILY and up rule, or the first
// after it that has occurrences; returns its number, none past the last year.
std::optional<std::int64_t> load_day_period(Period& period, std::int64_t number) {
  const auto& plan = *period.plan;
  for (;; number += plan.interval) {
    auto span = days_of_period(plan, number);
    if (!span) return std::nullopt;
    period.days.clear();
    for (auto day = span->first; day <= std::min(span->last, last_day); day += date::days{1}) {
      if (plan.days.keeps(day)) period.days.push_back(day);
    }
    period.first_time = 0;
    period.time_count = plan.times.size();
    period.pick();
    if (period.size() > 0) return number;
  }
}

// The same below a day: `number` counts units (hours, minutes, seconds) of
// wall time from 1970. From a unit on the rule's grid whose day the rule does
// not keep, it moves to the next day; from one without a listed time, to the
// unit of the next listed time; either way onto the grid again.
std::optional<std::int64_t> load_time_period(Period& period, std::int64_t number) {
  const auto& plan = *period.plan;
  auto unit = plan.unit_seconds();
  auto origin = floor_div(plan.dtstart.time_since_epoch().count(), unit);
  auto onto_grid = [&](std::int64_t units) {
    return origin + (floor_div(units - origin - 1, plan.interval) + 1) * plan.interval;
  };
  auto unit_at = [&](Day day, seconds time_of_day) {
    return floor_div(date::sys_seconds{day.time_since_epoch()}.time_since_epoch().count() + time_of_day.count(), unit);
  };
  std::optional<Day> kept_day, passed_day;  // the last day looked at, kept or not
  for (number = onto_grid(number);;) {
    LocalTime start{seconds{number * unit}};
    auto day = date::floor<date::days>(start);
    if (day > last_day) return std::nullopt;
    bool kept = day == kept_day || (day != passed_day && plan.days.keeps(day));
    (kept ? kept_day : passed_day) = day;
    auto first = kept ? plan.times.first_at_or_after(start - day) : plan.times.size();
    if (first == plan.times.size()) {
      number = onto_grid(unit_at(day + date::days{1}, seconds{0}));
      continue;
    }
    auto next_unit = unit_at(day, plan.times.at(first));
    if (next_unit != number) {
      number = onto_grid(next_unit);
      continue;
    }
    period.days.assign(1, day);
    period.first_time = first;
    period.time_count = plan.times_per_period();
    period.pick();
    if (period.size() > 0) return number;
    number += plan.interval;
  }
}

std::optional<std::int64_t> load_period(Period& period, std::int64_t number) {
  return period.plan->sub_daily() ? load_time_period(period, number) : load_day_period(period, number);
}

// ---- walking ----------------------------------------------------------------------------

// Walks a rule's wall times, in order, from the first at or after `from`.
class Walk {
 public:
  Walk(const Plan& plan, LocalTime from) : period_{&plan, {}, 0, 0, {}}, remaining_(plan.count) {
    jump_to(plan.dtstart);
    if (!plan.count) {
      jump_to(from);
      return;
    }
    // COUNT counts from DTSTART: every occurrence before `from` is walked.
    for (auto upcoming = peek(); upcoming && *upcoming < from; upcoming = peek()) advance();
  }

  // The next occurrence, or none when COUNT or the last year has ended the rule.
  std::optional<LocalTime> next() {
    auto upcoming = peek();
    if (upcoming) advance();
    return upcoming;
  }

 private:
  std::optional<LocalTime> peek() {
    if (remaining_ && *remaining_ <= 0) return std::nullopt;
    while (number_ && index_ == period_.size()) load(*number_ + period_.plan->interval);
    if (!number_) return std::nullopt;
    return period_.at(index_);
  }

  void advance() {
    ++index_;
    if (remaining_) --*remaining_;
  }

  // Moves past the occurrences before `from`.
  void jump_to(LocalTime from) {
    auto number = period_number_of(*period_.plan, from);
    if (!loaded_ || (number_ && number > *number_)) load(number);
    loaded_ = true;
    if (number_) index_ = std::max(index_, period_.first_at_or_after(from));
  }

  void load(std::int64_t number) {
    number_ = load_period(period_, number);
    index_ = 0;
  }

  Period period_;
  std::optional<std::int64_t> number_;  // of the period loaded; none once the rule has ended
  bool loaded_ = false;
  std::size_t index_ = 0;
  std::optional<std::int64_t> remaining_;  // of COUNT
};

// RFC 5545, 3.3.5: a wall time in a DST gap moves forward by the gap's length,
// which is reading it with the UTC offset in force before the gap.
Time instant_of(Zone zone, LocalTime local) {
  auto instants = resolve_local(zone, local);
  if (instants.kind != LocalKind::skipped) return instants.first;
  auto before_gap = std::chrono::floor<seconds>(instants.first) - seconds{1};
  auto offset_before = to_local(zone, before_gap).time_since_epoch() - before_gap.time_since_epoch();
  return Time{std::chrono::sys_seconds{local.time_since_epoch() - offset_before}};
}

// The earliest wall time whose instant may come after `after`: a wall time in
// a gap of the past day names an instant an offset change later, and the
// second pass of one repeated in the next day an offset change earlier.
LocalTime earliest_wall_after(Zone zone, Time after) {
  return std::min({to_local(zone, after), to_local(zone, after - date::days{1}) + date::days{1},
                   to_local(zone, after + date::days{1}) - date::days{1}});
}

// The earliest instant a wall time names in any zone.
Time earliest_instant(LocalTime local) {
  return Time{std::chrono::sys_seconds{local.time_since_epoch() - widest_utc_offset}};
}

Result<void> check_has_occurrence(const CompiledRule& rule, LocalTime dtstart) {
  auto first = Walk(rule.plan, dtstart).next();
  if (!first || (rule.written.until && rule.written.until->excludes(*first, earliest_instant(*first)))) {
    return problem(fmt::format("produces no occurrence from DTSTART {} on", date::format("%FT%T", dtstart)));
  }
  return {};
}

}  // namespace

Result<RRuleSpec> parse_rrule(std::string_view rule, LocalTime dtstart) {
  auto compiled = compile(rule, dtstart);
  auto checked = compiled ? check_has_occurrence(*compiled, dtstart) : std::unexpected(compiled.error());
  if (!checked) return fail(checked.error().kind, fmt::format("rrule \"{}\": {}", rule, checked.error().message));
  return RRuleSpec{rule_text(compiled->written), dtstart};
}

namespace {

// The instants at which a wall time of the rule runs under `rule`, earliest
// first: none, one or two.
std::vector<Time> instants_under(Zone zone, LocalTime local, DstRule rule) {
  auto instants = resolve_local(zone, local);
  switch (instants.kind) {
    case LocalKind::unique: return {instants.first};
    case LocalKind::skipped:
      if (rule.gap == DstGap::skip) return {};
      return {instant_of(zone, local)};
    case LocalKind::repeated:
      if (rule.repeat == DstRepeat::once) return {instants.first};
      return {instants.first, instants.second};
  }
  return {};
}

}  // namespace

struct RRuleCursor::State {
  Zone zone;
  DstRule dst;
  Time floor;  // `after`, then the last instant returned
  std::optional<Until> until;
  std::optional<CompiledRule> rule;
  std::optional<Walk> walk;  // none once the rule has ended
  // Instants of the wall times walked that are yet to be returned, and the
  // earliest instant a wall time still to walk can run at: the second pass
  // of a repeated hour comes after the first pass of the wall times after it.
  std::set<Time> pending;
  Time bound;
};

RRuleCursor::RRuleCursor(const RRuleSpec& spec, Zone zone, Time after, DstPolicy policy)
    : state_(std::make_unique<State>(
          State{zone, policy.over(fixed_time_dst), after, std::nullopt, std::nullopt, std::nullopt, {}, after})) {
  auto rule = compile(spec.rule, spec.dtstart);
  if (!rule) return;  // not a spec from parse_rrule: it has no occurrences
  state_->until = rule->written.until;
  state_->rule = std::move(*rule);
  state_->walk.emplace(state_->rule->plan, earliest_wall_after(zone, after));
}

RRuleCursor::~RRuleCursor() = default;
RRuleCursor::RRuleCursor(RRuleCursor&&) noexcept = default;
RRuleCursor& RRuleCursor::operator=(RRuleCursor&&) noexcept = default;

void RRuleCursor::walk_one() {
  auto& state = *state_;
  auto local = state.walk->next();
  // The instants of later wall times never come before this one's RFC 5545
  // instant (a gap time moved forward lands on one after the gap).
  auto instant = local ? instant_of(state.zone, *local) : Time{};
  if (!local || (state.until && state.until->excludes(*local, instant))) {
    state.walk.reset();
    return;
  }
  state.bound = instant;
  // Those before `after`, or a gap time moved onto an occurrence already
  // returned, are gone; so is a second pass past a UTC UNTIL.
  for (auto run : instants_under(state.zone, *local, state.dst)) {
    if (run > state.floor && !(state.until && state.until->excludes(*local, run))) state.pending.insert(run);
  }
}

std::optional<Time> RRuleCursor::next() {
  if (!state_) return std::nullopt;
  auto& state = *state_;
  while (state.walk && (state.pending.empty() || *state.pending.begin() > state.bound)) walk_one();
  if (state.pending.empty()) return std::nullopt;
  state.floor = *state.pending.begin();
  state.pending.erase(state.pending.begin());
  return state.floor;
}

std::optional<Time> rrule_next_after(const RRuleSpec& spec, Zone zone, Time t, DstPolicy policy) {
  return RRuleCursor(spec, zone, t, policy).next();
}

std::optional<LocalTime> rrule_next_wall(const RRuleSpec& spec, LocalTime from) {
  auto rule = compile(spec.rule, spec.dtstart);
  if (!rule) return std::nullopt;
  return Walk(rule->plan, from).next();
}

}  // namespace taskd::core
