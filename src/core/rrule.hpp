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

// Walks the occurrences after an instant, in order. Local times that fall in
// a DST gap move forward by the gap's length; in a repeated hour the first
// instant counts (RFC 5545, section 3.3.5).
class RRuleCursor {
 public:
  // The first occurrence `next()` returns is the first strictly after `after`.
  RRuleCursor(const RRuleSpec& spec, Zone zone, Time after);
  ~RRuleCursor();
  RRuleCursor(RRuleCursor&&) noexcept;
  RRuleCursor& operator=(RRuleCursor&&) noexcept;

  // The next occurrence, or none when COUNT/UNTIL has ended the rule.
  std::optional<Time> next();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The first occurrence strictly after `t`.
std::optional<Time> rrule_next_after(const RRuleSpec& spec, Zone zone, Time t);

}  // namespace taskd::core
