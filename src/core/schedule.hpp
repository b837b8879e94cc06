#pragma once
// Schedules: when a task's planned slots fall. Pure functions of the schedule
// and an instant; nothing here reads a clock.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "core/cron.hpp"
#include "core/duration.hpp"
#include "core/rrule.hpp"
#include "core/time.hpp"
#include "core/zone.hpp"

namespace taskd::core {

// Fixed rate: slots at phase + k * interval after the Unix epoch. With a
// zone the slots are wall-clock times there instead, phase + k * interval
// after 1970-01-01 00:00 on that clock; an interval shorter than a day then
// follows the clock at DST changes, a longer one is a fixed time (as cron's
// jobs are). With `after_finish` it is a fixed delay: the next run is
// `interval` after the previous one finished, and there is no grid of slots.
struct Every {
  Seconds interval;
  Millis phase;
  bool after_finish = false;
  std::optional<Zone> zone = std::nullopt;
};

// Whether fixed-rate slots of this interval can be aligned to a wall clock:
// the interval divides a day, or is whole days. Any other interval would fall
// at other times of day each day, with nothing to align to.
bool fits_wall_clock(Seconds interval);

// A cron expression on the wall clock of a zone.
struct Cron {
  CronSpec spec;
  Zone zone;
};

// An RFC 5545 recurrence rule on the wall clock of a zone.
struct Recurrence {
  RRuleSpec spec;
  Zone zone;
};

// Only `taskd trigger` runs the task.
struct Manual {};

using Schedule = std::variant<Every, Cron, Recurrence, Manual>;

// The first planned slot strictly after `t`, or none when the schedule has no
// more slots.
std::optional<Time> next_slot_after(const Schedule& schedule, Time t);

// Whether `t` is one of the schedule's planned slots.
bool is_planned_slot(const Schedule& schedule, Time t);

// Walks the planned slots after an instant, in order.
class SlotCursor {
 public:
  SlotCursor(const Schedule& schedule, Time after);
  std::optional<Time> next();

 private:
  const Schedule& schedule_;
  Time last_;
  std::optional<RRuleCursor> recurrence_;
};

// The last planned slot at or before `t`, if one lies within eight years.
std::optional<Time> last_slot_at_or_before(const Schedule& schedule, Time t);

// The planned slots in (after, until].
struct SlotSpan {
  std::int64_t count = 0;
  bool count_is_lower_bound = false;  // counting stopped at a bound; there are more
  Time first{};
  Time last{};
};
SlotSpan slots_between(const Schedule& schedule, Time after, Time until);

// "The interval" of SPEC.md at `t`: the gap between the planned slots around
// it; none for a schedule with fewer than two slots left.
std::optional<Seconds> interval_around(const Schedule& schedule, Time t);

// A fixed delay (--after-finish): each run starts an interval after the
// previous one finished.
bool is_fixed_delay(const Schedule& schedule);

// Whether the schedule plans slots on a grid (fixed delay and manual do not).
bool has_slot_grid(const Schedule& schedule);

}  // namespace taskd::core
