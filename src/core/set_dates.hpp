#pragma once
// --rdate and --exdate (RFC 5545's RDATE and EXDATE): dates a task's
// schedule gains as slots and dates it loses. Each is a wall time in the
// task's zone, an instant (RFC 3339 with an offset), or, in --exdate only,
// a whole day of the zone's clock. Pure: the zone comes with the call.
#include <date/date.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/error.hpp"
#include "core/time.hpp"
#include "core/zone.hpp"

namespace taskd::core {

using SetDate = std::variant<LocalTime, Time, date::local_days>;

inline constexpr std::size_t max_set_dates = 1000;

// "2026-12-24T09:00", "2026-12-24 09:00:30", "2026-12-24T09:00+01:00",
// "2026-12-25" (a day: only when `days_allowed`), comma-separated; "" is
// none. Sorted, without repeats. The error names neither option nor flag.
Result<std::vector<SetDate>> parse_set_dates(std::string_view text, bool days_allowed);

// The text parse_set_dates reads back to `dates`: "2026-12-24T09:00:00",
// "2026-12-24T08:00:00Z", "2026-12-25", comma-separated.
std::string set_dates_text(const std::vector<SetDate>& dates);
std::string to_string(const SetDate& date);

// The days of a task's calendars (--skip-calendar, --only-calendar) as the
// task was last written: no slot on a skipped day, and with `kept`, slots
// only on those days, of the task's zone. Each sorted, once each.
struct CalendarDays {
  std::vector<date::local_days> skipped;
  std::optional<std::vector<date::local_days>> kept;

  bool empty() const { return skipped.empty() && !kept; }
  bool operator==(const CalendarDays&) const = default;
};

// "skip 2026-12-25,+1" and "only 2027-01-04,+7,..." lines (a day, then each
// as days after the one before); "" for none. Whole dates read back too.
// A task's are read with its row at every claim (store: calendar_day_sets):
// the texts read last are kept read (see calendar_spans).
std::string calendar_days_text(const CalendarDays& days);
Result<CalendarDays> parse_calendar_days(std::string_view text);

// [begin, end) of a day of the zone's clock (23 or 25 hours at DST changes).
std::pair<Time, Time> day_span(Zone zone, date::local_days day);

// The calendar days as instants in a zone: [begin, end) of each day.
struct CalendarSpans {
  std::vector<std::pair<Time, Time>> skipped;
  std::optional<std::vector<std::pair<Time, Time>>> kept;
};

// The spans of `days` in `zone`, made once for each distinct (days, zone)
// a process meets: a task's calendar is read at every claim of it, and
// thousands of days cost milliseconds to place in a zone. Thread-safe.
std::shared_ptr<const CalendarSpans> calendar_spans(const CalendarDays& days, Zone zone);

// The dates as instants in a zone, for the next-slot search: sorted vectors
// searched by halves, so a slot costs a few comparisons however many there are.
class SlotChanges {
 public:
  SlotChanges(const std::vector<SetDate>& added, const std::vector<SetDate>& removed, Zone zone,
              const CalendarDays& calendars = {});

  bool empty() const { return added_.empty() && removed_.empty() && removed_days_.empty() && !calendar_; }
  // The first added slot strictly after `t` (none removed).
  std::optional<Time> first_added_after(Time t) const;
  // A removed slot: the instant after which the next slot may lie (the slot
  // itself, the end of its removed day less 1 ms, or the start of the next
  // kept day less 1 ms), or none when no later day is kept.
  struct Removed {
    std::optional<Time> resume_after;
  };
  // None when `slot` stays.
  std::optional<Removed> removal(Time slot) const;
  // How much of [from, to) lies on days the schedule leaves out: removed
  // days (--exdate days, --skip-calendar) and, with --only-calendar, the
  // days it does not keep.
  Millis time_off(Time from, Time to) const;

 private:
  std::vector<Time> added_;
  std::vector<Time> removed_;
  std::vector<std::pair<Time, Time>> removed_days_;  // [begin, end) of each --exdate day
  std::shared_ptr<const CalendarSpans> calendar_;    // none without calendar days

  bool removes_day(const std::pair<Time, Time>& day) const;
};

// The --exdate that removes `slot`, in `zone`: none when none does.
std::optional<SetDate> removing_date(const std::vector<SetDate>& removed, Zone zone, Time slot);

// --rrule's iCalendar form, as dateutil's rrulestr(..., forceset=True)
// reads it: lines (newline-separated) DTSTART[;TZID=ZONE]:20261224T090000,
// RRULE:FREQ=..., RDATE[;TZID=ZONE]:T[,T...] and EXDATE[;TZID=ZONE]:T[,T...],
// names in any case, a line without a name an RRULE. A time is a wall time
// (in TZID's zone, else DTSTART's), or UTC with a Z; a date alone
// (20261225, VALUE=DATE) is a whole day in EXDATE and refused elsewhere.
struct RecurrenceSet {
  std::string rule;  // the RRULE line's value; empty when none
  std::optional<LocalTime> dtstart;
  std::string zone;            // DTSTART's TZID, "UTC" for one in UTC; empty when it has none
  std::vector<SetDate> rdate;  // wall times in `zone`, or instants
  std::vector<SetDate> exdate;
};

// Whether --rrule's text is the iCalendar form rather than a rule alone
// (with or without "RRULE:").
bool is_recurrence_set(std::string_view text);
Result<RecurrenceSet> parse_recurrence_set(std::string_view text);

}  // namespace taskd::core
