#include "core/rrule.hpp"

#include <array>
#include <fmt/format.h>
#include <libical/ical.h>

namespace taskd::core {
namespace {

using namespace std::chrono;

// The parts a filtering frequency may not combine with: libical would walk
// every second (or minute) of up to a year to find the next occurrence.
bool filters_too_sparsely(const icalrecurrencetype& rule) {
  auto used = [](const short* values) { return values[0] != ICAL_RECURRENCE_ARRAY_MAX; };
  bool day_filters = used(rule.by_month) || used(rule.by_week_no) || used(rule.by_year_day);
  if (rule.freq == ICAL_SECONDLY_RECURRENCE) return day_filters || used(rule.by_month_day) || used(rule.by_day);
  return rule.freq == ICAL_MINUTELY_RECURRENCE && day_filters;
}

// FREQ=MINUTELY;BYMINUTE=… and FREQ=SECONDLY;BYSECOND=…, which libical
// 3.0 gets wrong (checked against dateutil and RFC 5545's table of limits).
bool limits_its_own_unit(const icalrecurrencetype& rule) {
  return (rule.freq == ICAL_MINUTELY_RECURRENCE && rule.by_minute[0] != ICAL_RECURRENCE_ARRAY_MAX) ||
         (rule.freq == ICAL_SECONDLY_RECURRENCE && rule.by_second[0] != ICAL_RECURRENCE_ARRAY_MAX);
}

// The fixed step between occurrences of a rule without BY parts or COUNT
// whose periods have one length (SECONDLY to WEEKLY): it is walked without
// libical, which spends microseconds on each occurrence.
std::optional<seconds> fixed_step(const icalrecurrencetype& rule) {
  constexpr std::array<seconds, 5> units{seconds{1}, minutes{1}, hours{1}, days{1}, weeks{1}};
  auto unused = [](const short* values) { return values[0] == ICAL_RECURRENCE_ARRAY_MAX; };
  bool plain = unused(rule.by_second) && unused(rule.by_minute) && unused(rule.by_hour) && unused(rule.by_day) &&
               unused(rule.by_month_day) && unused(rule.by_year_day) && unused(rule.by_week_no) &&
               unused(rule.by_month) && unused(rule.by_set_pos);
  if (!plain || rule.count > 0 || rule.freq > ICAL_WEEKLY_RECURRENCE) return std::nullopt;
  return units[static_cast<std::size_t>(rule.freq)] * rule.interval;
}

// BYMONTHDAY that no BYMONTH month has (FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30):
// libical would search for centuries.
bool never_matches(const icalrecurrencetype& rule) {
  constexpr int month_days[] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (rule.by_month[0] == ICAL_RECURRENCE_ARRAY_MAX || rule.by_month_day[0] == ICAL_RECURRENCE_ARRAY_MAX) return false;
  for (int m = 0; rule.by_month[m] != ICAL_RECURRENCE_ARRAY_MAX; ++m) {
    for (int d = 0; rule.by_month_day[d] != ICAL_RECURRENCE_ARRAY_MAX; ++d) {
      int month = rule.by_month[m];
      int day = rule.by_month_day[d];
      if (month < 1 || month > 12 || day < 0 || day <= month_days[month]) return false;
    }
  }
  return true;
}

std::string_view without_prefix(std::string_view rule) {
  if (rule.starts_with("RRULE:")) rule.remove_prefix(6);
  return rule;
}

Result<icalrecurrencetype> parse_rule(std::string_view text) {
  icalerror_set_errors_are_fatal(0);
  icalerrno = ICAL_NO_ERROR;
  std::string rule(without_prefix(text));
  auto parsed = icalrecurrencetype_from_string(rule.c_str());
  auto error = [&](std::string_view what) {
    return fail(ErrorKind::bad_input, fmt::format("rrule \"{}\": {}", rule, what));
  };
  if (icalerrno != ICAL_NO_ERROR || parsed.freq == ICAL_NO_RECURRENCE)
    return error("malformed (it needs FREQ=SECONDLY…YEARLY and known parts such as INTERVAL, BYDAY, COUNT, UNTIL)");
  if (parsed.interval < 1) return error("INTERVAL must be at least 1");
  if (limits_its_own_unit(parsed))
    return error("libical expands BYMINUTE in MINUTELY (and BYSECOND in SECONDLY) instead of limiting it, so it "
                 "would compute wrong times; use HOURLY with BYMINUTE, or --cron");
  if (filters_too_sparsely(parsed))
    return error("SECONDLY or MINUTELY with day or month filters; use a coarser FREQ with BYHOUR/BYMINUTE/BYSECOND");
  if (never_matches(parsed)) return error("no BYMONTH month has such a BYMONTHDAY, so it never occurs");
  return parsed;
}

icaltimetype to_ical(LocalTime local) {
  auto day = floor<days>(local);
  year_month_day date{sys_days{day.time_since_epoch()}};
  hh_mm_ss clock{local - day};
  icaltimetype t = icaltime_null_time();
  t.year = int(date.year());
  t.month = int(unsigned(date.month()));
  t.day = int(unsigned(date.day()));
  t.hour = int(clock.hours().count());
  t.minute = int(clock.minutes().count());
  t.second = int(clock.seconds().count());
  return t;
}

LocalTime from_ical(const icaltimetype& t) {
  auto day = date::local_days{date::year{t.year} / t.month / t.day};
  return day + hours{t.hour} + minutes{t.minute} + seconds{t.second};
}

// RFC 5545 3.3.5: a wall time in a gap moves forward by the gap's length; in
// a repeated hour the first instant counts.
Time instant_of(Zone zone, LocalTime local) {
  auto resolved = resolve_local(zone, local);
  if (resolved.kind != LocalKind::skipped) return resolved.first;
  auto gap_start = to_local(zone, resolved.first - seconds{1}) + seconds{1};
  return resolved.first + (local - gap_start);
}

// The last instant UNTIL allows: a UTC date-time as it is, a floating one or a
// date on the task's wall clock (a date includes its whole day).
std::optional<Time> until_of(const icalrecurrencetype& rule, Zone zone) {
  if (icaltime_is_null_time(rule.until)) return std::nullopt;
  LocalTime local = from_ical(rule.until);
  if (rule.until.is_date) return instant_of(zone, local + days{1}) - seconds{1};
  if (icaltime_is_utc(rule.until)) return Time{local.time_since_epoch()};
  return instant_of(zone, local);
}

// A period start at or before `target` on DTSTART's grid of INTERVAL
// periods, so that libical, started there, keeps the rule's phase.
LocalTime aligned_start(const icalrecurrencetype& rule, LocalTime dtstart, LocalTime target) {
  auto align = [&](seconds period) {
    auto periods = (target - dtstart) / (period * rule.interval);
    return dtstart + periods * period * rule.interval;
  };
  switch (rule.freq) {
    case ICAL_SECONDLY_RECURRENCE: return align(seconds{1});
    case ICAL_MINUTELY_RECURRENCE: return align(minutes{1});
    case ICAL_HOURLY_RECURRENCE: return align(hours{1});
    case ICAL_DAILY_RECURRENCE: return align(days{1});
    case ICAL_WEEKLY_RECURRENCE: return align(weeks{1});
    default: break;
  }
  // Months and years differ in length: step whole intervals of them.
  year_month_day start{sys_days{floor<days>(dtstart).time_since_epoch()}};
  year_month_day goal{sys_days{floor<days>(target).time_since_epoch()}};
  int months_per_step = rule.interval * (rule.freq == ICAL_YEARLY_RECURRENCE ? 12 : 1);
  int months = (int(goal.year()) - int(start.year())) * 12 + int(unsigned(goal.month())) - int(unsigned(start.month()));
  auto month = start.year() / start.month() + date::months{months / months_per_step * months_per_step};
  return date::local_days{sys_days{month / 1}.time_since_epoch()};
}

}  // namespace

struct RRuleCursor::State {
  Zone zone;
  Time after;
  std::optional<Time> until;
  icalrecur_iterator* iterator = nullptr;
  std::optional<seconds> step;  // set: occurrences are next_local, next_local + step, …
  LocalTime next_local;
  date::sys_info offsets;  // the zone's UTC offset around the last occurrence

  std::optional<LocalTime> next_local_occurrence();

  // instant_of, without asking the zone again while well inside one offset
  // period: consecutive occurrences mostly share one.
  Time instant(LocalTime local) {
    constexpr hours margin{3};  // wider than any DST shift
    auto guess = sys_seconds{local.time_since_epoch() - offsets.offset};
    if (guess >= offsets.begin + margin && guess + margin < offsets.end) return Time{guess};
    Time t = instant_of(zone, local);
    offsets = zone->get_info(floor<seconds>(t));
    return t;
  }

  ~State() {
    if (iterator) icalrecur_iterator_free(iterator);
  }
};

Result<RRuleSpec> parse_rrule(std::string_view rule, LocalTime dtstart) {
  auto parsed = parse_rule(rule);
  if (!parsed) return std::unexpected(parsed.error());
  return RRuleSpec{std::string(without_prefix(rule)), dtstart};
}

RRuleCursor::RRuleCursor(const RRuleSpec& spec, Zone zone, Time after) : state_(std::make_unique<State>()) {
  state_->zone = zone;
  state_->after = after;
  auto rule = parse_rule(spec.rule);
  if (!rule) return;  // parse_rrule checked it; the cursor then yields nothing
  state_->until = until_of(*rule, zone);
  rule->until = icaltime_null_time();
  // Far after DTSTART, start near `after` instead of walking from DTSTART;
  // two hours earlier covers any UTC offset change between the two clocks.
  // COUNT counts from DTSTART, so such a rule always walks from there.
  auto target = to_local(zone, after) - hours{2};
  bool skip_ahead = rule->count == 0 && target > spec.dtstart;
  LocalTime start = skip_ahead ? aligned_start(*rule, spec.dtstart, target) : spec.dtstart;
  bool fixed_periods = rule->freq <= ICAL_WEEKLY_RECURRENCE;
  // Periods of fixed length: the rule from a later period start is the same
  // rule. Months and years: libical's own set_start keeps DTSTART's day.
  state_->step = fixed_step(*rule);
  state_->next_local = start;
  if (state_->step) return;
  state_->iterator = icalrecur_iterator_new(*rule, to_ical(fixed_periods ? start : spec.dtstart));
  if (state_->iterator && skip_ahead && !fixed_periods) icalrecur_iterator_set_start(state_->iterator, to_ical(start));
}

RRuleCursor::~RRuleCursor() = default;
RRuleCursor::RRuleCursor(RRuleCursor&&) noexcept = default;
RRuleCursor& RRuleCursor::operator=(RRuleCursor&&) noexcept = default;

std::optional<LocalTime> RRuleCursor::State::next_local_occurrence() {
  if (step) {
    auto local = next_local;
    next_local += *step;
    return local;
  }
  if (!iterator) return std::nullopt;
  auto local = icalrecur_iterator_next(iterator);
  if (icaltime_is_null_time(local)) return std::nullopt;
  return from_ical(local);
}

std::optional<Time> RRuleCursor::next() {
  while (true) {
    auto local = state_->next_local_occurrence();
    if (!local) return std::nullopt;
    Time t = state_->instant(*local);
    if (state_->until && t > *state_->until) return std::nullopt;
    if (t > state_->after) {
      state_->after = t;
      return t;
    }
  }
}

std::optional<Time> rrule_next_after(const RRuleSpec& spec, Zone zone, Time t) { return RRuleCursor(spec, zone, t).next(); }

}  // namespace taskd::core
