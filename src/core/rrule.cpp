#include "core/rrule.hpp"

namespace taskd::core {

struct RRuleCursor::State {};

Result<RRuleSpec> parse_rrule(std::string_view, LocalTime) { return fail(ErrorKind::bad_input, "rrule: being written"); }
RRuleCursor::RRuleCursor(const RRuleSpec&, Zone, Time) : state_(std::make_unique<State>()) {}
RRuleCursor::~RRuleCursor() = default;
RRuleCursor::RRuleCursor(RRuleCursor&&) noexcept = default;
RRuleCursor& RRuleCursor::operator=(RRuleCursor&&) noexcept = default;
std::optional<Time> RRuleCursor::next() { return std::nullopt; }
std::optional<Time> rrule_next_after(const RRuleSpec&, Zone, Time) { return std::nullopt; }

}  // namespace taskd::core
