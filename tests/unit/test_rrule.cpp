#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/rrule.hpp"

using namespace taskd::core;
using namespace std::chrono;

namespace {

Time utc(int y, unsigned m, unsigned d, int hh, int mm, int ss = 0) {
  return sys_days{year{y} / month{m} / day{d}} + hours{hh} + minutes{mm} + seconds{ss};
}

LocalTime local(int y, unsigned m, unsigned d, int hh, int mm) {
  return date::local_days{date::year{y} / date::month{m} / date::day{d}} + hours{hh} + minutes{mm};
}

std::vector<std::string> walk(std::string_view rule, LocalTime dtstart, std::string_view zone_name, Time after,
                              int count) {
  auto spec = parse_rrule(rule, dtstart);
  REQUIRE(spec);
  RRuleCursor cursor(*spec, find_zone(zone_name).value(), after);
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    auto next = cursor.next();
    if (!next) break;
    out.push_back(format_rfc3339(*next));
  }
  return out;
}

std::string refusal(std::string_view rule) {
  auto spec = parse_rrule(rule, local(2026, 1, 1, 9, 0));
  REQUIRE_FALSE(spec);
  CHECK(spec.error().kind == ErrorKind::bad_input);
  return spec.error().message;
}

}  // namespace

TEST_CASE("rrule: a daily rule from DTSTART, with or without the RRULE: prefix") {
  auto expected = std::vector<std::string>{"2026-01-01T09:00:00Z", "2026-01-02T09:00:00Z"};
  CHECK(walk("FREQ=DAILY", local(2026, 1, 1, 9, 0), "UTC", utc(2025, 12, 31, 0, 0), 2) == expected);
  CHECK(walk("RRULE:FREQ=DAILY", local(2026, 1, 1, 9, 0), "UTC", utc(2025, 12, 31, 0, 0), 2) == expected);
}

TEST_CASE("rrule: occurrences come strictly after the given instant") {
  CHECK(walk("FREQ=DAILY", local(2026, 1, 1, 9, 0), "UTC", utc(2026, 1, 2, 9, 0), 1) ==
        std::vector<std::string>{"2026-01-03T09:00:00Z"});
}

TEST_CASE("rrule: far after DTSTART the interval keeps DTSTART's phase") {
  CHECK(walk("FREQ=MINUTELY;INTERVAL=7", local(2026, 1, 1, 9, 0), "UTC", utc(2026, 6, 15, 10, 2), 2) ==
        std::vector<std::string>{"2026-06-15T10:04:00Z", "2026-06-15T10:11:00Z"});
  CHECK(walk("FREQ=MONTHLY;INTERVAL=5;BYDAY=-1FR", local(2025, 1, 1, 9, 0), "UTC", utc(2026, 6, 15, 10, 2), 2) ==
        std::vector<std::string>{"2026-09-25T09:00:00Z", "2027-02-26T09:00:00Z"});
}

TEST_CASE("rrule: COUNT and UNTIL end the schedule") {
  CHECK(walk("FREQ=DAILY;COUNT=2", local(2026, 1, 1, 9, 0), "UTC", utc(2025, 1, 1, 0, 0), 5).size() == 2);
  CHECK(walk("FREQ=DAILY;COUNT=2", local(2026, 1, 1, 9, 0), "UTC", utc(2026, 1, 1, 9, 0), 5) ==
        std::vector<std::string>{"2026-01-02T09:00:00Z"});
  // A floating UNTIL is wall time in the zone: 10:00 in Berlin is 09:00Z.
  CHECK(walk("FREQ=HOURLY;UNTIL=20260101T100000", local(2026, 1, 1, 8, 0), "Europe/Berlin", utc(2025, 1, 1, 0, 0),
             9) == std::vector<std::string>{"2026-01-01T07:00:00Z", "2026-01-01T08:00:00Z", "2026-01-01T09:00:00Z"});
  CHECK(walk("FREQ=HOURLY;UNTIL=20260101T080000Z", local(2026, 1, 1, 8, 0), "Europe/Berlin", utc(2025, 1, 1, 0, 0),
             9) == std::vector<std::string>{"2026-01-01T07:00:00Z", "2026-01-01T08:00:00Z"});
}

TEST_CASE("rrule: a wall time in the spring gap moves forward by the gap (Europe/Berlin)") {
  CHECK(walk("FREQ=DAILY", local(2026, 3, 27, 2, 30), "Europe/Berlin", utc(2026, 3, 27, 0, 0), 3) ==
        std::vector<std::string>{"2026-03-27T01:30:00Z", "2026-03-28T01:30:00Z", "2026-03-29T01:30:00Z"});
}

TEST_CASE("rrule: a wall time in the repeated hour runs once, at its first instant (America/New_York)") {
  CHECK(walk("FREQ=DAILY", local(2026, 10, 31, 1, 30), "America/New_York", utc(2026, 10, 31, 0, 0), 3) ==
        std::vector<std::string>{"2026-10-31T05:30:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"});
}

TEST_CASE("rrule: Lord Howe's 30-minute gap and a zone without DST") {
  CHECK(walk("FREQ=DAILY", local(2026, 10, 3, 2, 15), "Australia/Lord_Howe", utc(2026, 10, 2, 0, 0), 2) ==
        std::vector<std::string>{"2026-10-02T15:45:00Z", "2026-10-03T15:45:00Z"});
  CHECK(walk("FREQ=WEEKLY;BYDAY=MO", local(2026, 3, 1, 12, 0), "Asia/Tokyo", utc(2026, 3, 1, 0, 0), 2) ==
        std::vector<std::string>{"2026-03-02T03:00:00Z", "2026-03-09T03:00:00Z"});
}

TEST_CASE("rrule: malformed and unsupported rules are refused with the reason") {
  CHECK(refusal("FREQ=SOMETIMES").find("malformed") != std::string::npos);
  CHECK(refusal("INTERVAL=2").find("malformed") != std::string::npos);
  CHECK(refusal("FREQ=DAILY;COUNT=2;UNTIL=20260101T000000Z").find("malformed") != std::string::npos);
  CHECK(refusal("FREQ=MINUTELY;BYMINUTE=5").find("BYMINUTE") != std::string::npos);
  CHECK(refusal("FREQ=SECONDLY;BYMONTH=3").find("coarser") != std::string::npos);
  CHECK(refusal("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30").find("never occurs") != std::string::npos);
}
