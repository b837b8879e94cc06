#pragma once
// RFC 5545 recurrence rules, every one the RFC allows: FREQ from SECONDLY to
// YEARLY, INTERVAL, the BYxxx parts, COUNT, UNTIL, WKST. DTSTART is a wall
// time in the task's zone.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/time.hpp"
#include "core/zone.hpp"

namespace taskd::core {

struct RRuleSpec {
  std::string rule;    // normalized by parse_rrule, without a leading "RRULE:"
  LocalTime dtstart;   // wall time in the task's zone
};

// Validates `rule`; an error names the rule and what is wrong.
Result<RRuleSpec> parse_rrule(std::string_view rule, LocalTime dtstart);

// Walks the occurrences after an instant, in order. By default (RFC 5545,
// section 3.3.5, fixed_time_dst) local times that fall in a DST gap move
// forward by the gap's length, and in a repeated hour the first instant
// counts; `policy` may skip the former (DstGap::skip) and run the latter at
// both instants (DstRepeat::twice). DstGap::run_after is that move forward.
class RRuleCursor {
 public:
  // The first occurrence `next()` returns is the first strictly after `after`.
  RRuleCursor(const RRuleSpec& spec, Zone zone, Time after, DstPolicy policy = {});
  ~RRuleCursor();
  RRuleCursor(RRuleCursor&&) noexcept;
  RRuleCursor& operator=(RRuleCursor&&) noexcept;

  // The next occurrence, or none when COUNT/UNTIL has ended the rule.
  std::optional<Time> next();

 private:
  // Walks the next wall time, adding its instants to those pending.
  void walk_one();

  struct State;
  std::unique_ptr<State> state_;
};

// The first occurrence strictly after `t`.
std::optional<Time> rrule_next_after(const RRuleSpec& spec, Zone zone, Time t, DstPolicy policy = {});

// The first wall time at or after `from` that the rule names, COUNT counted
// and UNTIL aside.
std::optional<LocalTime> rrule_next_wall(const RRuleSpec& spec, LocalTime from);

}  // namespace taskd::core
