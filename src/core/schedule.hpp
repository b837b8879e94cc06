#pragma once
// Schedules: when a task's planned slots fall. Pure functions of the schedule
// and an instant; nothing here reads a clock.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "core/cron.hpp"
#include "core/duration.hpp"
#include "core/rrule.hpp"
#include "core/set_dates.hpp"
#include "core/time.hpp"
#include "core/zone.hpp"

namespace taskd::core {

// Fixed rate: slots at phase + k * interval after the Unix epoch. With a
// zone the slots are wall-clock times there instead, phase + k * interval
// after 1970-01-01 00:00 on that clock; an interval shorter than a day then
// follows the clock at DST changes, a longer one is a fixed time (as cron's
// jobs are). With `after_finish` it is a fixed delay: the next run is
// `interval` after the previous one finished, and there is no grid of slots.
// `dst` changes what the slots on a zone's clock do at DST changes.
struct Every {
  Seconds interval;
  Millis phase;
  bool after_finish = false;
  std::optional<Zone> zone = std::nullopt;
  DstPolicy dst = {};
  std::shared_ptr<const SlotChanges> changes = nullptr;  // --rdate and --exdate; none: the grid alone
};

// Whether fixed-rate slots of this interval can be aligned to a wall clock:
// the interval divides a day, or is whole days. Any other interval would fall
// at other times of day each day, with nothing to align to.
bool fits_wall_clock(Seconds interval);

// A cron expression on the wall clock of a zone.
struct Cron {
  CronSpec spec;
  Zone zone;
  DstPolicy dst = {};
  std::shared_ptr<const SlotChanges> changes = nullptr;
};

// An RFC 5545 recurrence rule on the wall clock of a zone.
struct Recurrence {
  RRuleSpec spec;
  Zone zone;
  DstPolicy dst = {};
  std::shared_ptr<const SlotChanges> changes = nullptr;
};

// Only `taskd trigger` runs the task.
struct Manual {};

// Once after each boot of the machine (--cron @reboot), at the first tick
// of a scheduler there: no planned slots; the tick makes it due (sched/).
struct AtBoot {};

using Schedule = std::variant<Every, Cron, Recurrence, Manual, AtBoot>;

// The schedule with `changes` (--rdate, --exdate) to its slots: a schedule
// without a grid of slots takes none.
Schedule with_changes(Schedule schedule, std::shared_ptr<const SlotChanges> changes);
// The changes to the schedule's slots; none when it has none.
std::shared_ptr<const SlotChanges> schedule_changes(const Schedule& schedule);

// The first planned slot strictly after `t`, or none when the schedule has no
// more slots. The slots are the schedule's own less those removed, and those
// added.
std::optional<Time> next_slot_after(const Schedule& schedule, Time t);

// Whether `t` is one of the schedule's planned slots.
bool is_planned_slot(const Schedule& schedule, Time t);

// Walks the planned slots after an instant, in order.
class SlotCursor {
 public:
  SlotCursor(const Schedule& schedule, Time after);
  std::optional<Time> next();

 private:
  std::optional<Time> own_slot_after(Time from);

  const Schedule& schedule_;
  const SlotChanges* changes_;
  Time last_;
  std::optional<RRuleCursor> recurrence_;
  // With changes, the rule's cursor stands after own_from_, and own_next_
  // (once own_peeked_) is its first slot after that.
  Time own_from_;
  std::optional<Time> own_next_;
  bool own_peeked_ = false;
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

// Whether the schedule plans slots on a grid (fixed delay, manual and
// @reboot do not).
bool has_slot_grid(const Schedule& schedule);

// Whether the schedule's slots are wall times of a zone, which DST changes
// move: --every with a zone, --cron, --rrule.
bool follows_wall_clock(const Schedule& schedule);

// The schedule with `dst` as its DST rules, as schedule_of makes it from a
// definition with them: a schedule off a wall clock keeps none.
Schedule with_dst(Schedule schedule, const DstPolicy& dst);

// The DST rule the schedule follows where its task sets none: cronie's
// (cron_default_dst) for --cron and for --every with a zone (the clock's
// under a day, a fixed time's for whole days), RFC 5545's for --rrule.
DstRule default_dst(const Schedule& schedule);

// How a DST change shaped a planned slot, as `preview` and `explain` say.
struct DstAdjustment {
  enum class Kind {
    ran_after_gap,   // the slot stands for `wall`, which the clock skipped that day (DstGap::run_after)
    skipped_in_gap,  // `wall`, which the clock skipped, did not run; the slot is the first after the gap
    first_pass,      // the slot is the first instant of `wall`, which the clock showed twice
    second_pass,     // the slot is its second instant (DstRepeat::twice)
  };
  Kind kind;
  LocalTime wall;  // the first wall time of the gap the schedule names, or the repeated one
  Zone zone;
  DstRule rule;                 // the task's rule, each part set or the schedule's default
  bool by_default;              // the part of `rule` that applied is the schedule's default
  std::string_view default_of;  // the kind of schedule whose default it is, as "a fixed hour"
  bool shifted;                 // a recurrence rule's gap time, moved forward by the gap's length
  bool operator==(const DstAdjustment&) const = default;
};

// How a DST change shaped `slot`, a planned slot of `schedule`: none when no
// change did (a slot with no wall time that the clock skipped or showed
// twice, or any slot of a schedule that does not follow a wall clock).
std::optional<DstAdjustment> dst_adjustment(const Schedule& schedule, Time slot);

// One line that says what happened and which rule applied: "02:30
// Europe/Berlin does not exist that day: runs after the gap, --dst-gap
// run-after, the default for a fixed hour".
std::string describe(const DstAdjustment& adjustment);

}  // namespace taskd::core
