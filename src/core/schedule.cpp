#include "core/schedule.hpp"

#include <array>
#include <fmt/format.h>

namespace taskd::core {
namespace {

using namespace std::chrono_literals;
using std::chrono::duration_cast;

// Counting slots one by one stops here; the count is then a lower bound.
constexpr std::int64_t counting_bound = 100'000;

// Slot number k of a fixed-rate grid at or before `t` (floor division, also
// before 1970).
std::int64_t slot_index_at_or_before(const Every& every, Time t) {
  std::int64_t offset = (t - Time{every.phase}).count();
  std::int64_t step = duration_cast<Millis>(every.interval).count();
  std::int64_t index = offset / step;
  if (offset % step != 0 && offset < 0) --index;
  return index;
}

Time slot_time(const Every& every, std::int64_t index) { return Time{every.phase} + index * every.interval; }

// The first wall-clock slot at or after `from` of a grid of whole seconds on
// a zone's clock.
LocalTime next_wall_slot(Seconds interval, Seconds phase, LocalTime from) {
  const auto step = interval.count();
  const auto offset = (from - LocalTime{phase}).count();
  auto index = offset / step;
  if (offset % step != 0 && offset > 0) ++index;
  return LocalTime{phase} + index * interval;
}

// The wall times of a fixed-rate grid on a zone's clock: whole seconds.
NextWallTime wall_slots(const Every& every) {
  return [interval = every.interval, phase = std::chrono::floor<Seconds>(every.phase)](LocalTime from) {
    return std::optional<LocalTime>{next_wall_slot(interval, phase, from)};
  };
}

// The milliseconds of the phase, which shift every slot on a wall clock
// after its conversion to UTC (zone offsets are whole seconds).
Millis phase_millis(const Every& every) { return every.phase - std::chrono::floor<Seconds>(every.phase); }

DstRule every_default_dst(const Every& every) {
  return every.interval < std::chrono::days{1} ? clock_following_dst : fixed_time_dst;
}

std::optional<Time> next_slot_on_wall_clock(const Every& every, Zone zone, Time t) {
  const auto millis = phase_millis(every);
  auto slot = next_on_wall_clock(zone, t - millis, wall_slots(every), every.dst.over(every_default_dst(every)));
  if (!slot) return std::nullopt;
  return *slot + millis;
}

std::optional<Time> next_fixed_rate_slot(const Every& every, Time t) {
  if (every.zone) return next_slot_on_wall_clock(every, *every.zone, t);
  return slot_time(every, slot_index_at_or_before(every, t) + 1);
}

// A fixed-rate grid on UTC, counted rather than walked.
const Every* utc_grid(const Schedule& schedule) {
  const auto* every = std::get_if<Every>(&schedule);
  return every && !every->zone && !every->changes ? every : nullptr;
}

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};

using SharedChanges = std::shared_ptr<const SlotChanges>;

const SharedChanges* changes_field(const Schedule& schedule) {
  return std::visit(Overloaded{
                        [](const Every& every) { return &every.changes; },
                        [](const Cron& cron) { return &cron.changes; },
                        [](const Recurrence& rule) { return &rule.changes; },
                        [](const auto&) -> const SharedChanges* { return nullptr; },
                    },
                    schedule);
}

const SlotChanges* changes_of(const Schedule& schedule) {
  const auto* field = changes_field(schedule);
  return field ? field->get() : nullptr;
}

// The schedule's own first slot after `t`, before --rdate and --exdate.
std::optional<Time> own_next_slot_after(const Schedule& schedule, Time t) {
  return std::visit(Overloaded{
                        [&](const Every& every) { return next_fixed_rate_slot(every, t); },
                        [&](const Cron& cron) { return cron_next_after(cron.spec, cron.zone, t, cron.dst); },
                        [&](const Recurrence& rule) { return rrule_next_after(rule.spec, rule.zone, t, rule.dst); },
                        [](const auto&) -> std::optional<Time> { return std::nullopt; },
                    },
                    schedule);
}

// The first slot after `t` of the own slots `own_after` gives (the first
// after an instant), less the removed ones, with the added ones.
template <class OwnAfter>
std::optional<Time> changed_slot_after(const SlotChanges& changes, Time t, OwnAfter own_after) {
  auto slot = own_after(t);
  while (slot) {
    auto removed = changes.removal(*slot);
    if (!removed) break;
    slot = removed->resume_after ? own_after(*removed->resume_after) : std::nullopt;
  }
  auto added = changes.first_added_after(t);
  if (!slot || (added && *added < *slot)) return added;
  return slot;
}

// The latest slot at or before `t` among those after `from`, walking forward.
std::optional<Time> last_slot_walking(const Schedule& schedule, Time from, Time t) {
  SlotCursor cursor(schedule, from);
  std::optional<Time> last;
  for (std::int64_t i = 0; i < counting_bound; ++i) {
    auto slot = cursor.next();
    if (!slot || *slot > t) break;
    last = slot;
  }
  return last;
}

}  // namespace

std::shared_ptr<const SlotChanges> schedule_changes(const Schedule& schedule) {
  const auto* field = changes_field(schedule);
  return field ? *field : nullptr;
}

Schedule with_changes(Schedule schedule, std::shared_ptr<const SlotChanges> changes) {
  if (changes && changes->empty()) changes = nullptr;
  std::visit(Overloaded{
                 [&](Every& every) {
                   if (!every.after_finish) every.changes = changes;
                 },
                 [&](Cron& cron) { cron.changes = changes; },
                 [&](Recurrence& recurrence) { recurrence.changes = changes; },
                 [](auto&) {},
             },
             schedule);
  return schedule;
}

std::optional<Time> next_slot_after(const Schedule& schedule, Time t) {
  const auto* changes = changes_of(schedule);
  if (!changes) return own_next_slot_after(schedule, t);
  return changed_slot_after(*changes, t, [&](Time from) { return own_next_slot_after(schedule, from); });
}

bool is_fixed_delay(const Schedule& schedule) {
  const auto* every = std::get_if<Every>(&schedule);
  return every && every->after_finish;
}

bool is_planned_slot(const Schedule& schedule, Time t) { return next_slot_after(schedule, t - Millis{1}) == t; }

SlotCursor::SlotCursor(const Schedule& schedule, Time after)
    : schedule_(schedule), changes_(changes_of(schedule)), last_(after), own_from_(after) {
  if (const auto* rule = std::get_if<Recurrence>(&schedule)) recurrence_.emplace(rule->spec, rule->zone, after, rule->dst);
}

std::optional<Time> SlotCursor::own_slot_after(Time from) {
  if (!recurrence_) return own_next_slot_after(schedule_, from);
  if (from < own_from_) {
    const auto& rule = std::get<Recurrence>(schedule_);
    recurrence_.emplace(rule.spec, rule.zone, from, rule.dst);
    own_peeked_ = false;
  }
  if (!own_peeked_) {
    own_next_ = recurrence_->next();
    own_peeked_ = true;
  }
  while (own_next_ && *own_next_ <= from) own_next_ = recurrence_->next();
  own_from_ = from;
  return own_next_;
}

std::optional<Time> SlotCursor::next() {
  std::optional<Time> slot;
  if (changes_)
    slot = changed_slot_after(*changes_, last_, [this](Time from) { return own_slot_after(from); });
  else
    slot = recurrence_ ? recurrence_->next() : next_slot_after(schedule_, last_);
  if (slot) last_ = *slot;
  return slot;
}

std::optional<Time> last_slot_at_or_before(const Schedule& schedule, Time t) {
  if (const auto* every = utc_grid(schedule)) return slot_time(*every, slot_index_at_or_before(*every, t));
  // Look back over widening windows: dense schedules answer from the first.
  constexpr std::array<Seconds, 5> windows{1h, 24h, 32 * 24h, 366 * 24h, 8 * 366 * 24h};
  for (auto window : windows) {
    if (auto last = last_slot_walking(schedule, t - window, t)) return last;
  }
  return std::nullopt;
}

SlotSpan slots_between(const Schedule& schedule, Time after, Time until) {
  SlotSpan span;
  if (until <= after) return span;
  if (const auto* every = utc_grid(schedule)) {
    span.count = slot_index_at_or_before(*every, until) - slot_index_at_or_before(*every, after);
    span.first = slot_time(*every, slot_index_at_or_before(*every, after) + 1);
    span.last = slot_time(*every, slot_index_at_or_before(*every, until));
    return span;
  }
  SlotCursor cursor(schedule, after);
  while (auto slot = cursor.next()) {
    if (*slot > until) return span;
    if (span.count == 0) span.first = *slot;
    span.last = *slot;
    if (++span.count == counting_bound) {
      span.count_is_lower_bound = true;
      span.last = last_slot_at_or_before(schedule, until).value_or(span.last);
      return span;
    }
  }
  return span;
}

std::optional<Seconds> interval_around(const Schedule& schedule, Time t) {
  if (const auto* every = std::get_if<Every>(&schedule)) return every->interval;
  auto from = last_slot_at_or_before(schedule, t);
  if (!from) from = next_slot_after(schedule, t);
  if (!from) return std::nullopt;
  auto to = next_slot_after(schedule, *from);
  if (!to) return std::nullopt;
  return std::chrono::floor<Seconds>(*to - *from);
}

bool fits_wall_clock(Seconds interval) {
  constexpr Seconds day = std::chrono::days{1};
  return interval.count() > 0 && (day % interval == Seconds{0} || interval % day == Seconds{0});
}

bool has_slot_grid(const Schedule& schedule) {
  const auto* every = std::get_if<Every>(&schedule);
  return every ? !every->after_finish
               : !std::holds_alternative<Manual>(schedule) && !std::holds_alternative<AtBoot>(schedule);
}

bool follows_wall_clock(const Schedule& schedule) {
  const auto* every = std::get_if<Every>(&schedule);
  return every ? every->zone && !every->after_finish : has_slot_grid(schedule);
}

Schedule with_dst(Schedule schedule, const DstPolicy& dst) {
  std::visit(Overloaded{
                 [&](Every& every) {
                   if (every.zone) every.dst = dst;
                 },
                 [&](Cron& cron) { cron.dst = dst; },
                 [&](Recurrence& recurrence) { recurrence.dst = dst; },
                 [](auto&) {},
             },
             schedule);
  return schedule;
}

DstRule default_dst(const Schedule& schedule) {
  return std::visit(Overloaded{
                        [](const Every& every) { return every_default_dst(every); },
                        [](const Cron& cron) { return cron_default_dst(cron.spec); },
                        [](const auto&) { return fixed_time_dst; },
                    },
                    schedule);
}

namespace {

// A schedule on a wall clock as dst_adjustment reads it.
struct WallClock {
  Zone zone;
  NextWallTime next_wall;
  DstPolicy policy;
  std::string_view default_of;  // the kind of schedule whose default DST rule it has
  Millis shift{0};              // of each slot from its wall time's instant (--every's phase milliseconds)
  bool gap_moves_forward = false;  // a recurrence rule: a gap time moves by the gap's length
};

std::optional<WallClock> wall_clock_of(const Schedule& schedule) {
  return std::visit(Overloaded{
                        [](const Every& every) -> std::optional<WallClock> {
                          if (!every.zone || every.after_finish) return std::nullopt;
                          const bool under_a_day = every.interval < std::chrono::days{1};
                          return WallClock{*every.zone, wall_slots(every), every.dst,
                                           under_a_day ? "--every under a day" : "--every in whole days",
                                           phase_millis(every)};
                        },
                        [](const Cron& cron) -> std::optional<WallClock> {
                          auto walls = [spec = cron.spec](LocalTime from) { return cron_next_wall(spec, from); };
                          return WallClock{cron.zone, walls, cron.dst,
                                           cron.spec.hour_follows_clock ? "an hour field of *" : "a fixed hour"};
                        },
                        [](const Recurrence& rule) -> std::optional<WallClock> {
                          auto walls = [spec = rule.spec](LocalTime from) { return rrule_next_wall(spec, from); };
                          return WallClock{rule.zone, walls, rule.dst, "--rrule (RFC 5545)", Millis{0}, true};
                        },
                        [](const auto&) -> std::optional<WallClock> { return std::nullopt; },
                    },
                    schedule);
}

LocalTime wall_at(std::chrono::sys_seconds instant, Seconds offset) {
  return LocalTime{(instant + offset).time_since_epoch()};
}

// The wall time in the gap that a slot right after it stands for, by the
// schedule's way of running a gap time (DstGap::run_after); none when the
// slot stands for no such time.
std::optional<LocalTime> wall_run_after_gap(const WallClock& clock, std::chrono::sys_seconds instant,
                                            const OffsetPeriod& period, Seconds before) {
  const auto gap_end = wall_at(period.begin, period.offset);
  if (clock.gap_moves_forward) {
    const auto moved = wall_at(instant, before);
    if (moved < gap_end && clock.next_wall(moved) == moved) return moved;
    return std::nullopt;
  }
  auto named = clock.next_wall(wall_at(period.begin, before));
  if (instant == period.begin && named && *named < gap_end) return named;
  return std::nullopt;
}

}  // namespace

std::optional<DstAdjustment> dst_adjustment(const Schedule& schedule, Time slot) {
  using Kind = DstAdjustment::Kind;
  const auto clock = wall_clock_of(schedule);
  if (!clock) return std::nullopt;
  const auto rule = clock->policy.over(default_dst(schedule));
  auto adjustment = [&](Kind kind, LocalTime wall) {
    const bool gap = kind == Kind::ran_after_gap || kind == Kind::skipped_in_gap;
    const bool by_default = gap ? !clock->policy.gap : !clock->policy.repeat;
    return DstAdjustment{kind, wall, clock->zone, rule, by_default, by_default ? clock->default_of : "",
                         kind == Kind::ran_after_gap && clock->gap_moves_forward};
  };
  const auto instant = std::chrono::floor<Seconds>(slot - clock->shift);
  const auto period = offset_period(clock->zone, instant);
  const auto wall = wall_at(instant, period.offset);
  if (auto instants = resolve_local(clock->zone, wall); instants.kind == LocalKind::repeated)
    return adjustment(instant == instants.first ? Kind::first_pass : Kind::second_pass, wall);
  const auto before = offset_period(clock->zone, period.begin - Seconds{1}).offset;
  if (before >= period.offset) return std::nullopt;  // no gap before the slot's period
  if (rule.gap == DstGap::run_after) {
    auto skipped = wall_run_after_gap(*clock, instant, period, before);
    if (skipped) return adjustment(Kind::ran_after_gap, *skipped);
    return std::nullopt;
  }
  auto skipped = clock->next_wall(wall_at(period.begin, before));
  const bool first_after_gap = next_slot_after(schedule, Time{period.begin} + clock->shift - Millis{1}) == slot;
  if (skipped && *skipped < wall_at(period.begin, period.offset) && first_after_gap)
    return adjustment(Kind::skipped_in_gap, *skipped);
  return std::nullopt;
}

std::string describe(const DstAdjustment& adjustment) {
  using Kind = DstAdjustment::Kind;
  const auto& a = adjustment;
  const auto seconds = a.wall - std::chrono::floor<std::chrono::minutes>(a.wall);
  const auto wall = fmt::format("{} {}", date::format(seconds.count() ? "%H:%M:%S" : "%H:%M", a.wall), zone_name(a.zone));
  std::string what;
  switch (a.kind) {
    case Kind::ran_after_gap:
      what = fmt::format("{} does not exist that day: runs {}", wall,
                         a.shifted ? "the gap's length later" : "at the end of the gap");
      break;
    case Kind::skipped_in_gap:
      what = fmt::format("{} did not exist on {}: skipped", wall, date::format("%F", a.wall));
      break;
    case Kind::first_pass:
      what = fmt::format("{} happens twice that day: {}", wall,
                         a.rule.repeat == DstRepeat::once ? "runs at the first only" : "the first of two runs");
      break;
    case Kind::second_pass: what = fmt::format("{} happens twice that day: the second of two runs", wall); break;
  }
  const bool gap = a.kind == Kind::ran_after_gap || a.kind == Kind::skipped_in_gap;
  auto rule = gap ? fmt::format("--dst-gap {}", to_string(a.rule.gap))
                  : fmt::format("--dst-repeat {}", to_string(a.rule.repeat));
  if (a.by_default) rule += fmt::format(", the default for {}", a.default_of);
  return fmt::format("{}, {}", what, rule);
}

}  // namespace taskd::core
