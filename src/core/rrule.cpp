#include "core/rrule.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <compare>
#include <cstdint>
#include <cstdlib>
#include <ranges>
#include <set>
#include <variant>
#include <vector>

#include "core/libical.hpp"

namespace taskd::core {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

// libical stops iterating after this year (MAX_TIME_T_YEAR in icalrecur.c);
// before 1900 the ICU calendar libical uses would disagree with taskd's zones.
constexpr int first_year = 1900;
constexpr int last_year = 2582;
// A COUNT rule is always walked from DTSTART: this bounds that walk.
constexpr int max_count = 100'000;
// libical keeps INTERVAL in a short; a rule taskd steps itself (a Progression)
// takes up to a billion.
constexpr int max_libical_interval = 32'767;
constexpr int max_interval = 1'000'000'000;
// No zone is further ahead of UTC (Pacific/Kiritimati).
constexpr hours widest_utc_offset{14};

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

// Whether a list counts both from the start (5) and from the end (-3) of a period.
bool counts_both_ways(const std::vector<int>& days) {
  return std::ranges::any_of(days, [](int day) { return day < 0; }) &&
         std::ranges::any_of(days, [](int day) { return day > 0; });
}

int by_part_count(const RuleParts& parts) {
  int count = !parts.by_day.empty();
  for (const auto& kind : number_list_kinds) count += !(parts.*kind.list).empty();
  return count;
}

bool has_date_filters(const RuleParts& parts) {
  return !parts.by_day.empty() || !parts.by_month.empty() || !parts.by_month_day.empty() || !parts.by_year_day.empty();
}

std::size_t times_per_day(const RuleParts& parts) {
  std::size_t times = 1;
  for (const auto& level : time_levels) times *= std::max<std::size_t>(1, (parts.*level.list).size());
  return times;
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
    auto day = read_weekday_num(item);
    if (!day) return std::unexpected(day.error());
    days.push_back(*day);
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
  if (!value) return std::unexpected(value.error());
  target = std::move(*value);
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
    if (auto read = read_part(name, value, parts); !read) return std::unexpected(read.error());
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

// Rules RFC 5545 allows but libical 3.0 computes wrongly or not at all.
std::unexpected<Error> unsupported(std::string_view what) { return problem(fmt::format("{} is not supported", what)); }

Result<void> check_set_positions(const RuleParts& parts) {
  if (parts.by_set_pos.empty()) return {};
  if (parts.freq != Freq::monthly && parts.freq != Freq::yearly) {
    return unsupported(
        fmt::format("BYSETPOS with FREQ={} (libical ignores it; use MONTHLY or YEARLY)", name_of(*parts.freq)));
  }
  if (times_per_day(parts) > 1) return unsupported("BYSETPOS with several times a day (libical picks among days)");
  if (parts.by_day.empty() && (counts_both_ways(parts.by_month_day) || counts_both_ways(parts.by_year_day))) {
    return unsupported("BYSETPOS with days counted from both ends and no BYDAY (libical counts a shared day twice)");
  }
  return {};
}

Result<void> check_week_numbers(const RuleParts& parts) {
  if (parts.by_week_no.empty()) return {};
  if (parts.by_day.empty()) return unsupported("BYWEEKNO without BYDAY");
  if (!parts.by_month.empty() || !parts.by_month_day.empty()) return unsupported("BYWEEKNO with BYMONTH or BYMONTHDAY");
  if (std::ranges::any_of(parts.by_week_no, [](int week) { return std::abs(week) < 2 || std::abs(week) > 51; })) {
    return unsupported("BYWEEKNO 1, 52, 53 or -1, -52, -53 (libical misplaces the weeks around New Year)");
  }
  if (parts.week_start != "MO" && std::ranges::any_of(parts.by_week_no, [](int week) { return week < 0; })) {
    return unsupported("a negative BYWEEKNO with WKST other than MO (libical counts ISO weeks from the end)");
  }
  return {};
}

Result<void> check_day_combinations(const RuleParts& parts) {
  if (!parts.by_year_day.empty() && (!parts.by_month.empty() || !parts.by_month_day.empty())) {
    return unsupported("BYYEARDAY with BYMONTH or BYMONTHDAY");
  }
  if (parts.freq == Freq::yearly && !parts.by_month_day.empty() && parts.by_month.empty() &&
      has_ordinals(parts.by_day)) {
    return unsupported("FREQ=YEARLY with BYMONTHDAY and a numbered BYDAY but no BYMONTH");
  }
  if (parts.freq == Freq::daily && parts.interval > 1 &&
      std::ranges::any_of(parts.by_month_day, [](int day) { return day < 0; })) {
    return unsupported("FREQ=DAILY with INTERVAL above 1 and a negative BYMONTHDAY (libical never matches it)");
  }
  return {};
}

constexpr std::array<seconds, 3> time_units{seconds{1}, minutes{1}, hours{1}};

seconds unit_of(Freq freq) { return time_units[static_cast<std::size_t>(freq)]; }

// Below a day libical ignores or misplaces INTERVAL next to BYxxx parts; taskd
// applies it itself to the times of each day (fold_interval_into_list,
// PeriodStep), which needs the same times every day: INTERVAL units must
// divide a day.
Result<void> check_sub_daily_interval(const RuleParts& parts) {
  auto freq = *parts.freq;
  if (is_sub_daily(freq) && by_part_count(parts) > 0 && date::days{1} % (unit_of(freq) * parts.interval) != seconds{0}) {
    return unsupported(fmt::format("FREQ={} with BYxxx parts and an INTERVAL that does not divide a day ({} {}s; "
                                   "INTERVAL={})",
                                   name_of(freq), date::days{1} / unit_of(freq), time_level_of(freq).unit,
                                   parts.interval));
  }
  return {};
}

// Whether taskd steps the rule by plain addition (a Progression), without
// libical: below a day, with no BYxxx part.
bool is_progression(const RuleParts& parts) { return is_sub_daily(*parts.freq) && by_part_count(parts) == 0; }

Result<void> check_libical_interval(const RuleParts& parts) {
  if (parts.interval <= max_libical_interval || is_progression(parts)) return {};
  return unsupported(fmt::format("INTERVAL above {} with FREQ={}{} (libical keeps INTERVAL in 16 bits; taskd "
                                 "steps larger ones itself for SECONDLY, MINUTELY and HOURLY without BYxxx parts)",
                                 max_libical_interval, name_of(*parts.freq),
                                 by_part_count(parts) > 0 ? " and BYxxx parts" : ""));
}

Result<void> check_dtstart(LocalTime dtstart) {
  auto year = int(date::year_month_day{date::floor<date::days>(dtstart)}.year());
  if (year < first_year || year > last_year) {
    return problem(fmt::format("DTSTART must lie in the years {} to {}", first_year, last_year));
  }
  return {};
}

// ---- the days from libical, the times of day from taskd -----------------------------

std::string rule_text(const RuleParts& parts, bool with_until) {
  std::vector<std::string> items{fmt::format("FREQ={}", name_of(*parts.freq))};
  if (parts.interval != 1) items.push_back(fmt::format("INTERVAL={}", parts.interval));
  if (parts.count) items.push_back(fmt::format("COUNT={}", *parts.count));
  if (parts.until && with_until) {
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

std::vector<int> all_values(int from, int to) {
  std::vector<int> values;
  for (int value = from; value <= to; ++value) values.push_back(value);
  return values;
}

// Every Nth hour from DTSTART, N dividing 24, is the same as listing those
// hours; the same holds for minutes and seconds. Any other N is left to
// PeriodStep, over all the level's values unless the rule lists some.
Result<void> fold_interval_into_list(RuleParts& parts, LocalTime dtstart) {
  auto level_index = static_cast<std::size_t>(*parts.freq);
  const auto& level = time_levels[level_index];
  auto& list = parts.*level.list;
  if (level.values % parts.interval != 0) {
    if (list.empty()) list = all_values(0, level.values - 1);
    parts.interval = 1;
    return {};
  }
  std::vector<int> reached;
  for (int value = time_fields(dtstart)[level_index] % parts.interval; value < level.values; value += parts.interval) {
    if (list.empty() || std::ranges::find(list, value) != list.end()) reached.push_back(value);
  }
  if (reached.empty()) {
    return problem(fmt::format("produces no occurrence: INTERVAL={} from DTSTART never reaches the {}s {}",
                               parts.interval, level.unit, fmt::join(list, ",")));
  }
  list = std::move(reached);
  parts.interval = 1;
  return {};
}

// Monday = 0.
std::size_t weekday_index(LocalTime local) { return date::weekday{date::floor<date::days>(local)}.iso_encoding() - 1; }

// Every Nth week of a WEEKLY rule, counted from the week (starting on WKST)
// that holds DTSTART. libical places such weeks wrongly when INTERVAL > 1 (it
// starts some a week or more late), so it is asked for all weeks' days.
struct WeekStep {
  date::local_days first_week;
  int every = 1;

  bool includes(date::local_days day) const { return (day - first_week).count() / 7 % every == 0; }
};

WeekStep week_step(const RuleParts& parts, LocalTime dtstart) {
  if (parts.freq != Freq::weekly) return {date::floor<date::days>(dtstart), 1};
  auto week_start =
      static_cast<std::size_t>(std::ranges::find(weekday_names, parts.week_start) - weekday_names.begin());
  auto days_into_week = static_cast<int>((weekday_index(dtstart) + 7 - week_start) % 7);
  return {date::floor<date::days>(dtstart) - date::days{days_into_week}, parts.interval};
}

// Every Nth second, minute or hour counted from DTSTART's, for an N that does
// not divide the next larger unit (but N units divide a day): which times of
// day are on the step is the same every day.
struct PeriodStep {
  seconds first_period;  // DTSTART's time of day, down to the unit
  seconds unit{1};
  int every = 1;

  bool includes(seconds time_of_day) const {
    if (every == 1) return true;
    auto elapsed = (time_of_day - first_period).count();
    auto periods = elapsed / unit.count() - (elapsed % unit.count() < 0 ? 1 : 0);
    return periods % every == 0;
  }
};

PeriodStep period_step(const RuleParts& parts, LocalTime dtstart) {
  auto freq = *parts.freq;
  if (!is_sub_daily(freq) || by_part_count(parts) == 0 || time_level_of(freq).values % parts.interval == 0) return {};
  auto time_of_day = dtstart - date::floor<date::days>(dtstart);
  return {time_of_day - time_of_day % unit_of(freq), unit_of(freq), parts.interval};
}

// Turns the rule into "these days, at these times of day", which every rule
// with BYxxx parts (or FREQ=DAILY and up) is. libical is then asked for days
// only: it is slow per occurrence, and below a day it mishandles BYxxx parts
// at the rule's own level; with INTERVAL=1 it expands whole months or years
// instead of testing each day (and never matches a negative BYMONTHDAY in a
// DAILY rule).
Result<void> lift_to_days(RuleParts& parts, LocalTime dtstart) {
  if (parts.freq == Freq::weekly) {  // every INTERVAL-th week is picked by WeekStep
    if (parts.by_day.empty()) parts.by_day = {WeekdayNum{0, weekday_names[weekday_index(dtstart)]}};
    parts.freq = Freq::daily;
    parts.interval = 1;
  }
  if (is_sub_daily(*parts.freq)) {
    if (auto folded = fold_interval_into_list(parts, dtstart); !folded) return folded;
    for (auto level = static_cast<std::size_t>(*parts.freq) + 1; level < time_levels.size(); ++level) {
      auto& list = parts.*time_levels[level].list;
      if (list.empty()) list = all_values(0, time_levels[level].values - 1);
    }
    parts.freq = Freq::daily;
  }
  if (parts.freq == Freq::daily && parts.interval == 1 && has_date_filters(parts)) {
    parts.freq = parts.by_year_day.empty() ? Freq::monthly : Freq::yearly;
    if (parts.freq == Freq::monthly && parts.by_month_day.empty() && parts.by_day.empty()) {
      parts.by_month_day = all_values(1, 31);
    }
  }
  return {};
}

// libical reads YEARLY;BYMONTHDAY=1 as DTSTART's month only; RFC 5545 (and
// dateutil) mean every month.
void spell_out_yearly_months(RuleParts& parts) {
  if (parts.freq == Freq::yearly && !parts.by_month_day.empty() && parts.by_month.empty() && parts.by_week_no.empty() &&
      parts.by_year_day.empty()) {
    parts.by_month = all_values(1, 12);
  }
}

void sort_lists(RuleParts& parts) {
  auto sort_unique = [](auto& list) {
    std::ranges::sort(list);
    list.erase(std::ranges::unique(list).begin(), list.end());
  };
  sort_unique(parts.by_day);
  for (const auto& kind : number_list_kinds) sort_unique(parts.*kind.list);
}

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
};

// A time part the rule leaves out is DTSTART's.
TimesOfDay times_of_day(const RuleParts& parts, LocalTime dtstart) {
  auto fields = time_fields(dtstart);
  auto values = [&](std::size_t level) {
    const auto& list = parts.*time_levels[level].list;
    return list.empty() ? std::vector<int>{fields[level]} : list;
  };
  return {values(2), values(1), values(0)};
}

// Calls libical with no stale error in icalerrno, and leaves none behind.
template <class Call>
auto without_stale_errors(const LibIcal& ical, Call call) {
  ical.clear_errno();
  auto result = call();
  ical.clear_errno();
  return result;
}

struct DayPlan {
  const LibIcal* ical;
  icalrecurrencetype days;  // one occurrence a day, at 00:00
  WeekStep weeks;
  PeriodStep periods;
  TimesOfDay times;
  std::optional<int> count;
};

Result<void> check_step_reaches_a_time(const PeriodStep& periods, const TimesOfDay& times) {
  for (std::size_t index = 0; index < times.size(); ++index) {
    if (periods.includes(times.at(index))) return {};
  }
  return problem(fmt::format("produces no occurrence: INTERVAL={} from DTSTART never reaches the times it lists",
                             periods.every));
}

Result<DayPlan> to_day_plan(RuleParts parts, LocalTime dtstart) {
  auto weeks = week_step(parts, dtstart);
  auto periods = period_step(parts, dtstart);
  if (auto lifted = lift_to_days(parts, dtstart); !lifted) return std::unexpected(lifted.error());
  spell_out_yearly_months(parts);
  sort_lists(parts);
  const auto& ical = libical();
  if (!ical) return std::unexpected(ical.error());
  DayPlan plan{&*ical, {}, weeks, periods, times_of_day(parts, dtstart), parts.count};
  if (auto reached = check_step_reaches_a_time(periods, plan.times); !reached) return std::unexpected(reached.error());
  // COUNT and UNTIL stay with taskd too: COUNT counts times, not days, and a
  // UTC UNTIL is an instant, which libical's floating times cannot compare with.
  for (const auto& level : time_levels) (parts.*level.list).clear();
  parts.count.reset();
  auto text = rule_text(parts, false);
  plan.days = without_stale_errors(*ical, [&] { return ical->recurrence_from_string(text.c_str()); });
  if (plan.days.freq == ICAL_NO_RECURRENCE) return problem(fmt::format("libical rejects it as \"{}\"", text));
  return plan;
}

// ---- compiling --------------------------------------------------------------------

// A sub-daily rule without BYxxx parts: DTSTART + k * step. Its INTERVAL need
// not divide a day, so it is no "days at times of day" rule.
struct Progression {
  seconds step;
  std::optional<int> count;
};

struct CompiledRule {
  RuleParts written;
  std::variant<Progression, DayPlan> plan;
};

Result<CompiledRule> compile(std::string_view rule, LocalTime dtstart) {
  auto parts = read_parts(plain_rule_text(rule));
  if (!parts) return std::unexpected(parts.error());
  for (auto check : {check_rfc_rules, check_ordinals_fit_month, check_set_positions, check_week_numbers,
                     check_day_combinations, check_sub_daily_interval, check_libical_interval}) {
    if (auto checked = check(*parts); !checked) return std::unexpected(checked.error());
  }
  if (auto checked = check_dtstart(dtstart); !checked) return std::unexpected(checked.error());
  if (is_progression(*parts)) {
    return CompiledRule{*parts, Progression{unit_of(*parts->freq) * parts->interval, parts->count}};
  }
  auto plan = to_day_plan(*parts, dtstart);
  if (!plan) return std::unexpected(plan.error());
  return CompiledRule{*parts, std::move(*plan)};
}

// ---- walking ----------------------------------------------------------------------

icaltimetype to_ical(const LibIcal& library, LocalTime local) {
  auto day = date::floor<date::days>(local);
  date::year_month_day date{day};
  auto fields = time_fields(local);
  icaltimetype ical = library.null_time();
  ical.year = int(date.year());
  ical.month = static_cast<int>(unsigned(date.month()));
  ical.day = static_cast<int>(unsigned(date.day()));
  ical.hour = fields[2];
  ical.minute = fields[1];
  ical.second = fields[0];
  return ical;
}

date::local_days day_of(const icaltimetype& ical) {
  return date::local_days{date::year{ical.year} / date::month{static_cast<unsigned>(ical.month)} /
                          date::day{static_cast<unsigned>(ical.day)}};
}

struct ProgressionWalk {
  LocalTime dtstart;
  seconds step;
  std::int64_t index;
  std::optional<int> count;

  std::optional<LocalTime> next() {
    if (count && index >= *count) return std::nullopt;
    auto local = dtstart + step * index;
    if (int(date::year_month_day{date::floor<date::days>(local)}.year()) > last_year) return std::nullopt;
    ++index;
    return local;
  }
};

ProgressionWalk start_progression(const Progression& progression, LocalTime dtstart, LocalTime from) {
  auto ahead = (from - dtstart).count();
  std::int64_t index = ahead > 0 ? (ahead + progression.step.count() - 1) / progression.step.count() : 0;
  return {dtstart, progression.step, index, progression.count};
}

using IteratorPtr = std::unique_ptr<icalrecur_iterator, decltype(LibIcal::iterator_free)>;

struct DayPlanWalk {
  const LibIcal* ical;
  IteratorPtr days;
  WeekStep weeks;
  PeriodStep periods;
  TimesOfDay times;
  LocalTime dtstart;
  std::optional<std::int64_t> remaining;  // of COUNT
  std::optional<date::local_days> day;
  std::size_t next_time = 0;

  std::optional<LocalTime> next() {
    if (count_is_spent() || !load_time()) return std::nullopt;
    if (remaining) --*remaining;
    return *day + times.at(next_time++);
  }

  // Moves past the occurrences before `from`, counting them against COUNT.
  void skip_to(LocalTime from) {
    while (!count_is_spent() && load_time()) {
      auto first = std::max(next_time, times.first_at_or_after(from - *day));
      if (remaining) *remaining -= occurrences_between(next_time, first);
      next_time = first;
      if (next_time < times.size()) return;
    }
  }

  std::int64_t occurrences_between(std::size_t from_index, std::size_t to_index) const {
    if (periods.every == 1) return static_cast<std::int64_t>(to_index - from_index);
    std::int64_t on_step = 0;
    for (auto index = from_index; index < to_index; ++index) on_step += periods.includes(times.at(index)) ? 1 : 0;
    return on_step;
  }

  bool count_is_spent() const { return remaining && *remaining <= 0; }

  // Moves on to the next time on the step, on the next day with times left at
  // or after DTSTART if needed.
  bool load_time() {
    for (;;) {
      while (day && next_time < times.size() && !periods.includes(times.at(next_time))) ++next_time;
      if (day && next_time < times.size()) return true;
      auto occurrence = without_stale_errors(*ical, [&] { return ical->iterator_next(days.get()); });
      if (ical->is_null_time(occurrence)) return false;
      day = day_of(occurrence);
      next_time = weeks.includes(*day) ? times.first_at_or_after(dtstart - *day) : times.size();
    }
  }
};

std::optional<DayPlanWalk> start_day_plan(const DayPlan& plan, LocalTime dtstart, LocalTime from) {
  auto first_day = date::floor<date::days>(dtstart);
  const LibIcal& ical = *plan.ical;
  IteratorPtr days{without_stale_errors(ical, [&] { return ical.iterator_new(plan.days, to_ical(ical, first_day)); }),
                   ical.iterator_free};
  if (!days) return std::nullopt;
  // Jump ahead rather than walk from DTSTART, unless COUNT must count every
  // occurrence (the jump may land on the start of a period: skip_to moves on).
  auto from_day = date::floor<date::days>(from);
  if (!plan.count && from_day > first_day &&
      !without_stale_errors(ical, [&] { return ical.iterator_set_start(days.get(), to_ical(ical, from_day)); })) {
    return std::nullopt;
  }
  DayPlanWalk walk{&ical, std::move(days), plan.weeks, plan.periods, plan.times, dtstart, plan.count, std::nullopt, 0};
  walk.skip_to(from);
  return walk;
}

using Walk = std::variant<ProgressionWalk, DayPlanWalk>;

// Walks the rule's wall times from `from` on.
std::optional<Walk> start_walk(const CompiledRule& rule, LocalTime dtstart, LocalTime from) {
  if (const auto* progression = std::get_if<Progression>(&rule.plan)) {
    return Walk{start_progression(*progression, dtstart, from)};
  }
  auto walk = start_day_plan(std::get<DayPlan>(rule.plan), dtstart, from);
  if (!walk) return std::nullopt;
  return Walk{std::move(*walk)};
}

std::optional<LocalTime> next_local(std::optional<Walk>& walk) {
  if (!walk) return std::nullopt;
  return std::visit([](auto& steps) { return steps.next(); }, *walk);
}

// RFC 5545, 3.3.5: a wall time in a DST gap moves forward by the gap's length,
// which is reading it with the UTC offset in force before the gap.
Time instant_of(Zone zone, LocalTime local) {
  auto instants = resolve_local(zone, local);
  if (instants.kind != LocalKind::skipped) return instants.first;
  auto before_gap = std::chrono::floor<seconds>(instants.first) - seconds{1};
  auto offset_before = to_local(zone, before_gap).time_since_epoch() - before_gap.time_since_epoch();
  return Time{std::chrono::sys_seconds{local.time_since_epoch() - offset_before}};
}

// The earliest instant a wall time names in any zone.
Time earliest_instant(LocalTime local) {
  return Time{std::chrono::sys_seconds{local.time_since_epoch() - widest_utc_offset}};
}

Result<void> check_has_occurrence(const CompiledRule& rule, LocalTime dtstart) {
  auto walk = start_walk(rule, dtstart, dtstart);
  auto first = next_local(walk);
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
  return RRuleSpec{rule_text(compiled->written, true), dtstart};
}

struct RRuleCursor::State {
  Zone zone;
  Time floor;  // `after`, then the last instant returned
  std::optional<Until> until;
  std::optional<Walk> walk;  // none once the rule has ended
};

RRuleCursor::RRuleCursor(const RRuleSpec& spec, Zone zone, Time after)
    : state_(std::make_unique<State>(State{zone, after, std::nullopt, std::nullopt})) {
  auto rule = compile(spec.rule, spec.dtstart);
  // Not a spec from parse_rrule (which also reports a libical that cannot be
  // loaded): it has no occurrences.
  if (!rule) return;
  state_->until = rule->written.until;
  // Wall times up to `after`'s own name instants at or before it.
  state_->walk = start_walk(*rule, spec.dtstart, to_local(zone, after));
}

RRuleCursor::~RRuleCursor() = default;
RRuleCursor::RRuleCursor(RRuleCursor&&) noexcept = default;
RRuleCursor& RRuleCursor::operator=(RRuleCursor&&) noexcept = default;

std::optional<Time> RRuleCursor::next() {
  if (!state_) return std::nullopt;
  auto& state = *state_;
  while (auto local = next_local(state.walk)) {
    auto instant = instant_of(state.zone, *local);
    if (state.until && state.until->excludes(*local, instant)) break;
    // Before `after`, or a gap time moved onto an occurrence already returned.
    if (instant <= state.floor) continue;
    state.floor = instant;
    return instant;
  }
  state.walk.reset();
  return std::nullopt;
}

std::optional<Time> rrule_next_after(const RRuleSpec& spec, Zone zone, Time t) {
  return RRuleCursor(spec, zone, t).next();
}

}  // namespace taskd::core
