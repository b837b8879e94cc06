// Prints taskd's occurrences for the differential tests: one query a line on
// stdin, tab-separated, one answer a line on stdout.
//   cron  EXPR  ZONE  FROM  COUNT
//   rrule RULE  DTSTART(local, YYYY-MM-DDTHH:MM:SS)  ZONE  FROM  COUNT
//   rset  SET  ZONE  FROM  COUNT   (see set_occurrences)
//   periods ZONE  FROM  TO
//   local ZONE  WALL(local, YYYY-MM-DDTHH:MM:SS)
// FROM and TO are RFC 3339. cron and rrule answer COUNT instants (RFC 3339
// UTC) separated by spaces, fewer when the schedule ends; periods the offset
// periods that cover [FROM, TO) as "BEGIN OFFSET" pairs (the first begins at
// FROM, offsets in seconds east of UTC); local "unique T", "skipped T" (the
// end of the gap) or "repeated T1 T2"; any of them "ERROR <message>".
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/cron.hpp"
#include "core/rrule.hpp"
#include "core/schedule.hpp"
#include "core/set_dates.hpp"
#include "core/zone.hpp"

using namespace taskd::core;

namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, '\t')) fields.push_back(field);
  return fields;
}

template <class Next>
std::string occurrences(Time from, int count, Next next) {
  std::string out;
  Time t = from;
  for (int i = 0; i < count; ++i) {
    auto slot = next(t);
    if (!slot) break;
    out += (out.empty() ? "" : " ") + format_rfc3339(*slot);
    t = *slot;
  }
  return out;
}

std::string periods(Zone zone, Time from, Time to) {
  std::string out;
  for (auto t = std::chrono::floor<std::chrono::seconds>(from); t < to;) {
    const auto period = offset_period(zone, t);
    out += fmt::format("{}{} {}", out.empty() ? "" : " ", format_rfc3339(Time{t}), period.offset.count());
    t = period.end;
  }
  return out;
}

std::string local_instants(Zone zone, LocalTime wall) {
  const auto instants = resolve_local(zone, wall);
  switch (instants.kind) {
    case LocalKind::unique:
      return "unique " + format_rfc3339(instants.first);
    case LocalKind::skipped:
      return "skipped " + format_rfc3339(instants.first);
    case LocalKind::repeated:
      return fmt::format("repeated {} {}", format_rfc3339(instants.first), format_rfc3339(instants.second));
  }
  return "ERROR unknown kind";
}

std::string zone_answer(const std::vector<std::string>& q) {
  auto zone = find_zone(q[1]);
  if (!zone) return "ERROR " + zone.error().message;
  if (q[0] == "periods") {
    auto from = parse_rfc3339(q[2]);
    auto to = parse_rfc3339(q[3]);
    if (!from || !to) return "ERROR bad time";
    return periods(*zone, *from, *to);
  }
  auto wall = parse_local(q[2]);
  if (!wall) return "ERROR " + wall.error().message;
  return local_instants(*zone, *wall);
}

// rset SET ZONE FROM COUNT: SET is --rrule's iCalendar form with '|' for
// each newline; ZONE is the set's where its DTSTART has none.
std::string set_occurrences(const std::vector<std::string>& q) {
  std::string text = q[1];
  std::ranges::replace(text, '|', '\n');
  auto set = parse_recurrence_set(text);
  if (!set) return "ERROR " + set.error().message;
  auto zone = find_zone(set->zone.empty() ? q[2] : set->zone);
  auto from = parse_rfc3339(q[3]);
  if (!zone || !from || !set->dtstart) return "ERROR bad zone, time or DTSTART";
  auto spec = parse_rrule(set->rule, *set->dtstart);
  if (!spec) return "ERROR " + spec.error().message;
  auto schedule =
      with_changes(Recurrence{*spec, *zone}, std::make_shared<const SlotChanges>(set->rdate, set->exdate, *zone));
  SlotCursor cursor(schedule, *from);
  return occurrences(*from, std::stoi(q[4]), [&](Time) { return cursor.next(); });
}

std::string answer(const std::vector<std::string>& q) {
  if (q.size() == 5 && q[0] == "cron") {
    auto spec = parse_cron(q[1], "driver");
    if (!spec) return "ERROR " + spec.error().message;
    auto zone = find_zone(q[2]);
    auto from = parse_rfc3339(q[3]);
    if (!zone || !from) return "ERROR bad zone or time";
    return occurrences(*from, std::stoi(q[4]), [&](Time t) { return cron_next_after(*spec, *zone, t); });
  }
  if (q.size() == 6 && q[0] == "rrule") {
    auto dtstart = parse_local(q[2]);
    if (!dtstart) return "ERROR " + dtstart.error().message;
    auto spec = parse_rrule(q[1], *dtstart);
    if (!spec) return "ERROR " + spec.error().message;
    auto zone = find_zone(q[3]);
    auto from = parse_rfc3339(q[4]);
    if (!zone || !from) return "ERROR bad zone or time";
    RRuleCursor cursor(*spec, *zone, *from);
    return occurrences(*from, std::stoi(q[5]), [&](Time) { return cursor.next(); });
  }
  if (q.size() == 5 && q[0] == "rset") return set_occurrences(q);
  if ((q.size() == 4 && q[0] == "periods") || (q.size() == 3 && q[0] == "local")) return zone_answer(q);
  return "ERROR malformed query";
}

}  // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) fmt::print("{}\n", answer(split_tabs(line)));
  return 0;
}
