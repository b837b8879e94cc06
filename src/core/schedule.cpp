#include "core/schedule.hpp"

#include <array>

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

// The wall clock counts whole seconds: the milliseconds of the phase shift
// every slot after its conversion to UTC (zone offsets are whole seconds).
std::optional<Time> next_slot_on_wall_clock(const Every& every, Zone zone, Time t) {
  const auto whole_phase = std::chrono::floor<Seconds>(every.phase);
  const auto millis = every.phase - whole_phase;
  auto next_wall = [&every, whole_phase](LocalTime from) -> std::optional<LocalTime> {
    return next_wall_slot(every.interval, whole_phase, from);
  };
  auto slot = every.interval < std::chrono::days{1} ? next_following_clock(zone, t - millis, next_wall)
                                                    : next_fixed_time(zone, t - millis, next_wall);
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
  return every && !every->zone ? every : nullptr;
}

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};

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

std::optional<Time> next_slot_after(const Schedule& schedule, Time t) {
  return std::visit(Overloaded{
                        [&](const Every& every) { return next_fixed_rate_slot(every, t); },
                        [&](const Cron& cron) { return cron_next_after(cron.spec, cron.zone, t); },
                        [&](const Recurrence& rule) { return rrule_next_after(rule.spec, rule.zone, t); },
                        [](const Manual&) -> std::optional<Time> { return std::nullopt; },
                    },
                    schedule);
}

bool is_fixed_delay(const Schedule& schedule) {
  const auto* every = std::get_if<Every>(&schedule);
  return every && every->after_finish;
}

bool is_planned_slot(const Schedule& schedule, Time t) { return next_slot_after(schedule, t - Millis{1}) == t; }

SlotCursor::SlotCursor(const Schedule& schedule, Time after) : schedule_(schedule), last_(after) {
  if (const auto* rule = std::get_if<Recurrence>(&schedule)) recurrence_.emplace(rule->spec, rule->zone, after);
}

std::optional<Time> SlotCursor::next() {
  auto slot = recurrence_ ? recurrence_->next() : next_slot_after(schedule_, last_);
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
  return every ? !every->after_finish : !std::holds_alternative<Manual>(schedule);
}

}  // namespace taskd::core
