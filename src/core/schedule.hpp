#pragma once
// Schedules: when a task's planned slots fall. Pure functions of the schedule
// and an instant; nothing here reads a clock.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "core/duration.hpp"
#include "core/time.hpp"

namespace taskd::core {

// Fixed rate: slots at phase + k * interval after the Unix epoch. With
// `after_finish` it is a fixed delay instead: the next run is `interval`
// after the previous one finished.
struct Every {
  Seconds interval;
  Seconds phase;
  bool after_finish = false;
};

// Only `taskd trigger` runs the task.
struct Manual {};

using Schedule = std::variant<Every, Manual>;

// The first planned slot strictly after `t`, or none when the schedule has no
// more slots.
std::optional<Time> next_slot_after(const Schedule& schedule, Time t);

// The last planned slot at or before `t`, if there is one.
std::optional<Time> last_slot_at_or_before(const Schedule& schedule, Time t);

// How many planned slots fall in (after, until].
std::int64_t count_slots_between(const Schedule& schedule, Time after, Time until);

// The gap between planned slots around `t` ("the interval" of SPEC.md), or
// none for a schedule without slots.
std::optional<Seconds> interval_around(const Schedule& schedule, Time t);

// Whether the schedule plans slots on a grid (fixed delay and manual do not).
bool has_slot_grid(const Schedule& schedule);

}  // namespace taskd::core
