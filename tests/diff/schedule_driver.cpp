// Prints taskd's occurrences for the differential tests: one query a line on
// stdin, tab-separated, one answer a line on stdout.
//   cron  EXPR  ZONE  FROM  COUNT
//   rrule RULE  DTSTART(local, YYYY-MM-DDTHH:MM:SS)  ZONE  FROM  COUNT
// FROM is RFC 3339; the answer is COUNT instants (RFC 3339 UTC) separated by
// spaces, fewer when the schedule ends, or "ERROR <message>".
#include <fmt/format.h>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/cron.hpp"
#include "core/rrule.hpp"

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
  return "ERROR malformed query";
}

}  // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) fmt::print("{}\n", answer(split_tabs(line)));
  return 0;
}
