#include "core/schedule.hpp"

namespace taskd::core {
namespace {

using std::chrono::duration_cast;

// Slot number k of the grid at or before `t` (floor division, also before 1970).
std::int64_t slot_index_at_or_before(const Every& every, Time t) {
  std::int64_t offset = (t - Time{every.phase}).count();
  std::int64_t step = duration_cast<Millis>(every.interval).count();
  std::int64_t index = offset / step;
  if (offset % step != 0 && offset < 0) --index;
  return index;
}

Time slot_time(const Every& every, std::int64_t index) { return Time{every.phase} + index * every.interval; }

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};

}  // namespace

std::optional<Time> next_slot_after(const Schedule& schedule, Time t) {
  return std::visit(Overloaded{
                        [&](const Every& every) -> std::optional<Time> {
                          return slot_time(every, slot_index_at_or_before(every, t) + 1);
                        },
                        [](const Manual&) -> std::optional<Time> { return std::nullopt; },
                    },
                    schedule);
}

std::optional<Time> last_slot_at_or_before(const Schedule& schedule, Time t) {
  return std::visit(Overloaded{
                        [&](const Every& every) -> std::optional<Time> {
                          return slot_time(every, slot_index_at_or_before(every, t));
                        },
                        [](const Manual&) -> std::optional<Time> { return std::nullopt; },
                    },
                    schedule);
}

std::int64_t count_slots_between(const Schedule& schedule, Time after, Time until) {
  if (until <= after) return 0;
  return std::visit(Overloaded{
                        [&](const Every& every) -> std::int64_t {
                          return slot_index_at_or_before(every, until) - slot_index_at_or_before(every, after);
                        },
                        [](const Manual&) -> std::int64_t { return 0; },
                    },
                    schedule);
}

std::optional<Seconds> interval_around(const Schedule& schedule, Time) {
  return std::visit(Overloaded{
                        [](const Every& every) -> std::optional<Seconds> { return every.interval; },
                        [](const Manual&) -> std::optional<Seconds> { return std::nullopt; },
                    },
                    schedule);
}

bool has_slot_grid(const Schedule& schedule) {
  const auto* every = std::get_if<Every>(&schedule);
  return every && !every->after_finish;
}

}  // namespace taskd::core
