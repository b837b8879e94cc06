#include "core/posix_tz.hpp"

#include <date/date.h>

#include <algorithm>
#include <array>

#include "core/chars.hpp"

namespace taskd::core {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

// A UTC offset is less than a day; a transition's time may reach a week
// (RFC 8536, 3.3.1).
constexpr int max_offset_hours = 24;
constexpr int max_transition_hours = 167;

// Reads the TZ string from left to right; every read either consumes what it
// wants or reports that it is not there.
class TzStringReader {
 public:
  explicit TzStringReader(std::string_view text) : text_(text) {}

  bool done() const { return at_ == text_.size(); }
  bool next_is(char c) const { return !done() && text_[at_] == c; }
  bool take(char c) {
    if (!next_is(c)) return false;
    ++at_;
    return true;
  }

  // "CET", or "<+1030>" for a name that is not all letters.
  bool zone_name() {
    const bool quoted = take('<');
    std::size_t length = 0;
    auto in_name = [quoted](char c) { return is_letter(c) || (quoted && (is_digit(c) || c == '+' || c == '-')); };
    while (!done() && in_name(text_[at_])) ++at_, ++length;
    return length >= 3 && (!quoted || take('>'));
  }

  // A whole number from 0 to `max`.
  std::optional<int> number(int max) {
    if (done() || !is_digit(text_[at_])) return std::nullopt;
    int value = 0;
    while (!done() && is_digit(text_[at_])) {
      value = value * 10 + (text_[at_++] - '0');
      if (value > max) return std::nullopt;
    }
    return value;
  }

  // [+|-]hh[:mm[:ss]]
  std::optional<seconds> signed_time(int max_hours) {
    const bool negative = take('-');
    if (!negative) take('+');
    auto h = number(max_hours);
    if (!h) return std::nullopt;
    seconds time = hours{*h};
    for (seconds unit : {seconds{minutes{1}}, seconds{1}}) {
      if (!take(':')) break;
      auto part = number(59);
      if (!part) return std::nullopt;
      time += *part * unit;
    }
    return negative ? -time : time;
  }

  // POSIX writes offsets west of UTC: "CET-1" is an hour east.
  std::optional<seconds> utc_offset() {
    auto west = signed_time(max_offset_hours);
    if (!west) return std::nullopt;
    return -*west;
  }

  std::optional<TransitionDay> transition_day() {
    if (take('J')) {
      auto day = number(365);
      if (!day || *day < 1) return std::nullopt;
      return TransitionDay{TransitionDay::Form::julian, *day};
    }
    if (take('M')) {
      auto month = number(12);
      auto week = month && take('.') ? number(5) : std::nullopt;
      auto weekday = week && take('.') ? number(6) : std::nullopt;
      if (!weekday || *month < 1 || *week < 1) return std::nullopt;
      return TransitionDay{TransitionDay::Form::week_of_month, 0, static_cast<unsigned>(*month),
                           static_cast<unsigned>(*week), static_cast<unsigned>(*weekday)};
    }
    auto day = number(365);
    if (!day) return std::nullopt;
    return TransitionDay{TransitionDay::Form::zero_based, *day};
  }

  // A day, and the local time on it (02:00 unless given).
  std::optional<Transition> transition() {
    auto day = transition_day();
    if (!day) return std::nullopt;
    if (!take('/')) return Transition{*day, hours{2}};
    auto time = signed_time(max_transition_hours);
    if (!time) return std::nullopt;
    return Transition{*day, *time};
  }

 private:
  std::string_view text_;
  std::size_t at_ = 0;
};

date::local_days day_in_year(const TransitionDay& day, date::year year) {
  const date::local_days january_1{year / date::January / 1};
  switch (day.form) {
    case TransitionDay::Form::julian: {
      const bool after_february_29 = year.is_leap() && day.day >= 60;
      return january_1 + date::days{day.day - 1 + (after_february_29 ? 1 : 0)};
    }
    case TransitionDay::Form::zero_based: return january_1 + date::days{day.day};
    case TransitionDay::Form::week_of_month: {
      const date::weekday weekday{day.weekday};
      const date::month month{day.month};
      if (day.week == 5) return date::local_days{year / month / weekday[date::last]};
      return date::local_days{year / month / weekday[day.week]};
    }
  }
  return january_1;
}

// The UTC instant of a transition in `year`, whose local time is read with
// the offset in force before it.
std::chrono::sys_seconds instant_of(const Transition& transition, date::year year, seconds offset_before) {
  const auto local = day_in_year(transition.day, year) + transition.time;
  return std::chrono::sys_seconds{local.time_since_epoch() - offset_before};
}

struct OffsetChange {
  std::chrono::sys_seconds at;
  seconds offset_after;
};

// The changes of the year before `year`, of `year` and of the year after, in
// order. Listed year by year, DST start before DST end, so that when one
// year's end meets the next year's start (DST all year round) DST wins.
std::array<OffsetChange, 6> changes_around(const PosixTz& tz, date::year year) {
  std::array<OffsetChange, 6> changes;
  std::size_t i = 0;
  for (auto y = year - date::years{1}; y <= year + date::years{1}; y += date::years{1}) {
    changes[i++] = {instant_of(tz.dst_start, y, tz.std_offset), tz.dst_offset};
    changes[i++] = {instant_of(tz.dst_end, y, tz.dst_offset), tz.std_offset};
  }
  std::ranges::stable_sort(changes, {}, &OffsetChange::at);
  return changes;
}

}  // namespace

std::optional<PosixTz> parse_posix_tz(std::string_view text) {
  TzStringReader reader(text);
  if (!reader.zone_name()) return std::nullopt;
  auto std_offset = reader.utc_offset();
  if (!std_offset || reader.done() || !reader.zone_name()) return std::nullopt;
  std::optional<seconds> dst_offset = *std_offset + hours{1};
  if (!reader.next_is(',')) dst_offset = reader.utc_offset();
  if (!dst_offset || !reader.take(',')) return std::nullopt;
  auto start = reader.transition();
  auto end = start && reader.take(',') ? reader.transition() : std::nullopt;
  if (!end || !reader.done()) return std::nullopt;
  return PosixTz{*std_offset, *dst_offset, *start, *end};
}

OffsetPeriod posix_tz_period(const PosixTz& tz, std::chrono::sys_seconds t) {
  const date::year_month_day local_date{std::chrono::floor<date::days>(t + tz.std_offset)};
  const auto changes = changes_around(tz, local_date.year());
  // The year before and the year after hold changes on both sides of `t`.
  auto after = std::ranges::upper_bound(changes, t, {}, &OffsetChange::at);
  const auto& before = *(after - 1);
  return {before.at, after->at, before.offset_after};
}

}  // namespace taskd::core
