#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/rrule.hpp"

using namespace taskd::core;
using Strings = std::vector<std::string>;

namespace {

Time instant(std::string_view rfc3339) { return parse_rfc3339(rfc3339).value(); }

// "2026-03-28T02:30:00" as a wall time.
LocalTime wall(std::string_view text) {
  return LocalTime{std::chrono::floor<std::chrono::seconds>(instant(std::string(text) + "Z")).time_since_epoch()};
}

RRuleSpec spec_of(std::string_view rule, std::string_view dtstart) {
  auto spec = parse_rrule(rule, wall(dtstart));
  INFO(rule, ": ", spec ? "" : spec.error().message);
  REQUIRE(spec);
  return *spec;
}

// Up to `count` occurrences after `after`, in RFC 3339 UTC.
Strings occurrences(std::string_view rule, std::string_view dtstart, std::string_view zone, std::string_view after,
                    int count) {
  RRuleCursor cursor(spec_of(rule, dtstart), find_zone(zone).value(), instant(after));
  Strings found;
  for (int i = 0; i < count; ++i) {
    auto next = cursor.next();
    if (!next) break;
    found.push_back(format_rfc3339(*next));
  }
  return found;
}

std::string refusal(std::string_view rule) {
  auto spec = parse_rrule(rule, wall("2026-11-21T09:00:00"));
  REQUIRE_FALSE(spec);
  CHECK(spec.error().kind == ErrorKind::bad_input);
  return spec.error().message;
}

}  // namespace

TEST_CASE("rrule: FREQ=DAILY runs at DTSTART's wall time, DTSTART first") {
  CHECK(occurrences("FREQ=DAILY", "2026-11-21T09:30:00", "UTC", "2026-11-21T00:00:00Z", 3) ==
        Strings{"2026-11-21T09:30:00Z", "2026-11-22T09:30:00Z", "2026-11-23T09:30:00Z"});
}

TEST_CASE("rrule: the first occurrence is strictly after the start instant") {
  CHECK(occurrences("FREQ=DAILY", "2026-11-21T09:30:00", "UTC", "2026-11-22T09:30:00Z", 1) ==
        Strings{"2026-11-23T09:30:00Z"});
}

TEST_CASE("rrule: FREQ=WEEKLY with BYDAY and BYHOUR runs on those days at those hours") {
  CHECK(occurrences("FREQ=WEEKLY;BYDAY=MO,TH;BYHOUR=8,17;BYMINUTE=0;BYSECOND=0", "2026-11-19T12:00:00", "UTC",
                    "2026-11-01T00:00:00Z", 4) ==
        Strings{"2026-11-19T17:00:00Z", "2026-11-23T08:00:00Z", "2026-11-23T17:00:00Z", "2026-11-26T08:00:00Z"});
}

TEST_CASE("rrule: FREQ=MONTHLY;BYMONTHDAY=-1 is the last day of each month") {
  CHECK(occurrences("FREQ=MONTHLY;BYMONTHDAY=-1", "2026-12-15T06:00:00", "UTC", "2026-12-01T00:00:00Z", 3) ==
        Strings{"2026-12-31T06:00:00Z", "2027-01-31T06:00:00Z", "2027-02-28T06:00:00Z"});
}

TEST_CASE("rrule: FREQ=YEARLY on February 29 occurs in leap years only") {
  CHECK(occurrences("FREQ=YEARLY", "2024-02-29T12:00:00", "UTC", "2024-01-01T00:00:00Z", 3) ==
        Strings{"2024-02-29T12:00:00Z", "2028-02-29T12:00:00Z", "2032-02-29T12:00:00Z"});
}

TEST_CASE("rrule: FREQ=YEARLY;BYMONTHDAY without BYMONTH means every month, as in RFC 5545") {
  CHECK(occurrences("FREQ=YEARLY;BYMONTHDAY=1", "2026-11-21T09:00:00", "UTC", "2026-11-21T00:00:00Z", 3) ==
        Strings{"2026-12-01T09:00:00Z", "2027-01-01T09:00:00Z", "2027-02-01T09:00:00Z"});
}

TEST_CASE("rrule: BYDAY=-1FR is the last Friday of each month") {
  CHECK(occurrences("FREQ=MONTHLY;BYDAY=-1FR", "2026-11-01T18:00:00", "UTC", "2026-11-01T00:00:00Z", 3) ==
        Strings{"2026-11-27T18:00:00Z", "2026-12-25T18:00:00Z", "2027-01-29T18:00:00Z"});
}

TEST_CASE("rrule: BYSETPOS=-1 picks the last working day of each month") {
  CHECK(occurrences("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "2026-01-01T17:00:00", "UTC",
                    "2026-01-01T00:00:00Z",
                    3) == Strings{"2026-01-30T17:00:00Z", "2026-02-27T17:00:00Z", "2026-03-31T17:00:00Z"});
}

TEST_CASE("rrule: BYDAY with numbered and plain weekdays takes the union (RFC 5545; dateutil the intersection)") {
  // The first Monday and every Friday of December 2026.
  CHECK(occurrences("FREQ=MONTHLY;BYDAY=1MO,FR", "2026-12-01T09:00:00", "UTC", "2026-12-01T00:00:00Z", 5) ==
        Strings{"2026-12-04T09:00:00Z", "2026-12-07T09:00:00Z", "2026-12-11T09:00:00Z", "2026-12-18T09:00:00Z",
                "2026-12-25T09:00:00Z"});
}

TEST_CASE("rrule: BYWEEKNO counts weeks across New Year, from either end") {
  // 2024 starts on a Monday: its week 1 is January 1-7 and it has 52 weeks. December 30 and 31,
  // 2024 are in week 1 of 2025, which has 52 weeks too: its week -52. 2026 has 53 weeks, so
  // its week -52 is its week 2, January 5-11; and 2025's week -52 holds no Monday or Tuesday of 2025.
  CHECK(occurrences("FREQ=YEARLY;BYWEEKNO=-52;BYDAY=MO,TU", "2024-01-01T09:00:00", "UTC", "2023-12-31T00:00:00Z", 6) ==
        Strings{"2024-01-01T09:00:00Z", "2024-01-02T09:00:00Z", "2024-12-30T09:00:00Z", "2024-12-31T09:00:00Z",
                "2026-01-05T09:00:00Z", "2026-01-06T09:00:00Z"});
  // Without BYDAY every day of the week. With WKST=SU, week 1 of 2026 is the one from Sunday,
  // January 4 (with WKST=MO, from Monday, December 29, 2025).
  CHECK(occurrences("FREQ=YEARLY;BYWEEKNO=1;WKST=SU", "2026-01-01T09:00:00", "UTC", "2025-12-31T00:00:00Z", 4) ==
        Strings{"2026-01-04T09:00:00Z", "2026-01-05T09:00:00Z", "2026-01-06T09:00:00Z", "2026-01-07T09:00:00Z"});
}

TEST_CASE("rrule: FREQ=WEEKLY;BYSETPOS picks from the whole week, from WKST, as every other period") {
  // DTSTART is Wednesday, November 25, 2026: that week's first pick, Monday 23, lies before it.
  CHECK(occurrences("FREQ=WEEKLY;BYDAY=MO,WE,FR;BYSETPOS=1", "2026-11-25T09:00:00", "UTC", "2026-11-24T00:00:00Z",
                    2) == Strings{"2026-11-30T09:00:00Z", "2026-12-07T09:00:00Z"});
}

TEST_CASE("rrule: BYSETPOS picks among every time of the period, below a day too") {
  CHECK(occurrences("FREQ=MONTHLY;BYDAY=MO;BYHOUR=9,17;BYSETPOS=-1", "2026-11-01T00:00:00", "UTC",
                    "2026-11-01T00:00:00Z", 2) == Strings{"2026-11-30T17:00:00Z", "2026-12-28T17:00:00Z"});
  CHECK(occurrences("FREQ=HOURLY;BYMINUTE=0,15,30,45;BYSETPOS=-1,2", "2026-11-01T00:00:00", "UTC",
                    "2026-11-01T00:00:00Z", 3) ==
        Strings{"2026-11-01T00:15:00Z", "2026-11-01T00:45:00Z", "2026-11-01T01:15:00Z"});
  CHECK(occurrences("FREQ=DAILY;BYHOUR=8,12,18;BYSETPOS=2", "2026-11-01T00:00:00", "UTC", "2026-11-01T00:00:00Z", 2) ==
        Strings{"2026-11-01T12:00:00Z", "2026-11-02T12:00:00Z"});
}

TEST_CASE("rrule: BYYEARDAY goes with BYMONTH and BYMONTHDAY: the days that meet both") {
  // Day 100 is April 10, or April 9 in a leap year; day -1 is never in April.
  CHECK(occurrences("FREQ=YEARLY;BYYEARDAY=100,-1;BYMONTH=4", "2027-01-01T09:00:00", "UTC", "2027-01-01T00:00:00Z",
                    2) == Strings{"2027-04-10T09:00:00Z", "2028-04-09T09:00:00Z"});
  CHECK(occurrences("FREQ=YEARLY;BYYEARDAY=-1,1;BYMONTHDAY=31", "2027-01-01T09:00:00", "UTC", "2027-01-01T00:00:00Z",
                    2) == Strings{"2027-12-31T09:00:00Z", "2028-12-31T09:00:00Z"});
}

TEST_CASE("rrule: COUNT ends the schedule and next() then has nothing") {
  RRuleCursor cursor(spec_of("FREQ=DAILY;COUNT=2", "2026-11-21T15:00:00"), find_zone("UTC").value(),
                     instant("2026-11-21T00:00:00Z"));
  CHECK(cursor.next() == instant("2026-11-21T15:00:00Z"));
  CHECK(cursor.next() == instant("2026-11-22T15:00:00Z"));
  CHECK_FALSE(cursor.next());
  CHECK_FALSE(cursor.next());
}

TEST_CASE("rrule: a UTC UNTIL is an instant and a floating UNTIL a wall time, both inclusive") {
  auto in_berlin = [](std::string_view rule) {
    return occurrences(rule, "2026-11-21T09:00:00", "Europe/Berlin", "2026-11-21T00:00:00Z", 5);
  };
  Strings three_days{"2026-11-21T08:00:00Z", "2026-11-22T08:00:00Z", "2026-11-23T08:00:00Z"};
  CHECK(in_berlin("FREQ=DAILY;UNTIL=20261123T090000") == three_days);
  CHECK(in_berlin("FREQ=DAILY;UNTIL=20261123T080000Z") == three_days);
  CHECK(in_berlin("FREQ=DAILY;UNTIL=20261123T075959Z") == Strings(three_days.begin(), three_days.begin() + 2));
  CHECK(in_berlin("FREQ=DAILY;UNTIL=20261123T085959") == Strings(three_days.begin(), three_days.begin() + 2));
}

TEST_CASE("rrule: WKST decides which weeks FREQ=WEEKLY;INTERVAL=2 takes") {
  auto weeks = [](std::string_view week_start) {
    return occurrences(fmt::format("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,SU;WKST={}", week_start), "2026-11-02T09:00:00",
                       "UTC", "2026-11-01T00:00:00Z", 4);
  };
  CHECK(weeks("MO") ==
        Strings{"2026-11-02T09:00:00Z", "2026-11-08T09:00:00Z", "2026-11-16T09:00:00Z", "2026-11-22T09:00:00Z"});
  CHECK(weeks("SU") ==
        Strings{"2026-11-02T09:00:00Z", "2026-11-15T09:00:00Z", "2026-11-16T09:00:00Z", "2026-11-29T09:00:00Z"});
}

TEST_CASE("rrule: an INTERVAL far above 32767 is stepped at every frequency") {
  // dateutil: 2026-01-02T01:01:01, 2026-01-03T02:02:02 (90061 s = 1 d 1 h 1 min 1 s).
  CHECK(occurrences("FREQ=SECONDLY;INTERVAL=90061", "2026-01-01T00:00:00", "UTC", "2025-12-31T00:00:00Z", 3) ==
        Strings{"2026-01-01T00:00:00Z", "2026-01-02T01:01:01Z", "2026-01-03T02:02:02Z"});
  CHECK(occurrences("FREQ=HOURLY;INTERVAL=40000;COUNT=2", "2026-01-01T00:00:00", "UTC", "2025-12-31T00:00:00Z", 3) ==
        Strings{"2026-01-01T00:00:00Z", "2030-07-25T16:00:00Z"});
  CHECK(occurrences("FREQ=DAILY;INTERVAL=40000", "1950-01-01T12:00:00", "UTC", "1949-12-31T00:00:00Z", 3) ==
        Strings{"1950-01-01T12:00:00Z", "2059-07-08T12:00:00Z", "2169-01-12T12:00:00Z"});
  // With a BYxxx part as well (as dateutil).
  CHECK(occurrences("FREQ=SECONDLY;INTERVAL=90061;BYHOUR=3", "2026-01-01T00:00:00", "UTC", "2025-12-31T00:00:00Z", 2) ==
        Strings{"2026-01-04T03:03:03Z", "2026-01-29T03:27:27Z"});
}

TEST_CASE("rrule: FREQ=MINUTELY;INTERVAL=5 keeps DTSTART's phase") {
  CHECK(occurrences("FREQ=MINUTELY;INTERVAL=5", "2026-11-21T09:02:30", "UTC", "2026-11-21T10:00:00Z", 3) ==
        Strings{"2026-11-21T10:02:30Z", "2026-11-21T10:07:30Z", "2026-11-21T10:12:30Z"});
}

TEST_CASE("rrule: FREQ=SECONDLY with BYxxx parts keeps INTERVAL's phase") {
  CHECK(occurrences("FREQ=SECONDLY;INTERVAL=20;BYMINUTE=0", "2026-11-21T09:00:10", "UTC", "2026-11-21T09:00:30Z", 4) ==
        Strings{"2026-11-21T09:00:50Z", "2026-11-21T10:00:10Z", "2026-11-21T10:00:30Z", "2026-11-21T10:00:50Z"});
}

TEST_CASE("rrule: FREQ=HOURLY;INTERVAL=2 with BYHOUR keeps only the hours it reaches") {
  CHECK(occurrences("FREQ=HOURLY;INTERVAL=2;BYHOUR=9,10", "2026-11-21T00:15:00", "UTC", "2026-11-21T00:00:00Z", 2) ==
        Strings{"2026-11-21T10:15:00Z", "2026-11-22T10:15:00Z"});
}

TEST_CASE("rrule: a sub-daily INTERVAL that divides a day but not the next unit steps from DTSTART") {
  // Every 36 minutes from 09:03 within the hours 9 and 10: 09:03, 09:39, 10:15, 10:51, and the
  // same the next day (1440 is 40 * 36).
  CHECK(occurrences("FREQ=MINUTELY;INTERVAL=36;BYHOUR=9,10", "2026-11-18T09:03:00", "UTC", "2026-11-18T09:30:00Z", 4) ==
        Strings{"2026-11-18T09:39:00Z", "2026-11-18T10:15:00Z", "2026-11-18T10:51:00Z", "2026-11-19T09:03:00Z"});
  // COUNT counts only the times on the step, also when the walk starts far after DTSTART.
  CHECK(occurrences("FREQ=MINUTELY;INTERVAL=36;BYHOUR=9,10;COUNT=6", "2026-11-18T09:03:00", "UTC",
                    "2026-11-19T09:30:00Z", 5) == Strings{"2026-11-19T09:39:00Z"});
  CHECK(occurrences("FREQ=SECONDLY;INTERVAL=45;BYSECOND=0,30", "2026-11-18T09:03:00", "UTC", "2026-11-18T09:03:00Z",
                    3) == Strings{"2026-11-18T09:04:30Z", "2026-11-18T09:06:00Z", "2026-11-18T09:07:30Z"});
}

TEST_CASE("rrule: far after DTSTART without COUNT the INTERVAL's phase holds") {
  // 2026-11-22 is 9822 = 3 * 3274 days after 2000-01-01; 2026-11 is 322 months after 2000-01, 2027-02 325.
  CHECK(occurrences("FREQ=DAILY;INTERVAL=3", "2000-01-01T06:00:00", "UTC", "2026-11-21T00:00:00Z", 2) ==
        Strings{"2026-11-22T06:00:00Z", "2026-11-25T06:00:00Z"});
  CHECK(occurrences("FREQ=MONTHLY;INTERVAL=5;BYDAY=2TU", "2000-01-11T06:00:00", "UTC", "2026-11-21T00:00:00Z", 2) ==
        Strings{"2027-02-09T06:00:00Z", "2027-07-13T06:00:00Z"});
}

TEST_CASE("rrule: far after DTSTART with COUNT the count still holds") {
  CHECK(occurrences("FREQ=DAILY;BYHOUR=6,18;COUNT=10", "2026-01-01T00:00:00", "UTC", "2026-01-04T12:00:00Z", 5) ==
        Strings{"2026-01-04T18:00:00Z", "2026-01-05T06:00:00Z", "2026-01-05T18:00:00Z"});
  CHECK(occurrences("FREQ=MINUTELY;COUNT=10", "2026-01-01T00:00:00", "UTC", "2026-01-01T00:08:00Z", 5) ==
        Strings{"2026-01-01T00:09:00Z"});
  CHECK(occurrences("FREQ=WEEKLY;COUNT=10", "2026-01-01T00:00:00", "UTC", "2027-01-01T00:00:00Z", 5).empty());
}

TEST_CASE("rrule: in the Europe/Berlin spring gap 02:30 becomes 03:30 CEST") {
  CHECK(occurrences("FREQ=DAILY", "2026-03-28T02:30:00", "Europe/Berlin", "2026-03-27T00:00:00Z", 3) ==
        Strings{"2026-03-28T01:30:00Z", "2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"});
}

TEST_CASE("rrule: in the Europe/Berlin fall-back hour 02:30 runs once, at its first instant") {
  CHECK(occurrences("FREQ=DAILY", "2026-10-24T02:30:00", "Europe/Berlin", "2026-10-23T00:00:00Z", 3) ==
        Strings{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"});
}

TEST_CASE("rrule: FREQ=HOURLY follows the wall clock through the repeated hour") {
  CHECK(occurrences("FREQ=HOURLY", "2026-10-25T00:00:00", "Europe/Berlin", "2026-10-24T21:00:00Z", 4) ==
        Strings{"2026-10-24T22:00:00Z", "2026-10-24T23:00:00Z", "2026-10-25T00:00:00Z", "2026-10-25T02:00:00Z"});
}

TEST_CASE("rrule: a gap time that lands on a later occurrence counts once") {
  CHECK(occurrences("FREQ=MINUTELY;INTERVAL=30", "2026-03-29T01:30:00", "Europe/Berlin", "2026-03-29T00:00:00Z", 4) ==
        Strings{"2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z", "2026-03-29T02:00:00Z"});
}

TEST_CASE("rrule: America/New_York moves 02:30 to 03:30 EDT on the spring day") {
  CHECK(occurrences("FREQ=DAILY", "2026-03-07T02:30:00", "America/New_York", "2026-03-07T00:00:00Z", 3) ==
        Strings{"2026-03-07T07:30:00Z", "2026-03-08T07:30:00Z", "2026-03-09T06:30:00Z"});
}

TEST_CASE("rrule: Australia/Lord_Howe moves a time in its 30-minute gap by 30 minutes") {
  CHECK(occurrences("FREQ=DAILY", "2026-10-03T02:15:00", "Australia/Lord_Howe", "2026-10-01T00:00:00Z", 3) ==
        Strings{"2026-10-02T15:45:00Z", "2026-10-03T15:45:00Z", "2026-10-04T15:15:00Z"});
}

TEST_CASE("rrule: Asia/Tokyo, without DST, keeps a fixed offset") {
  CHECK(occurrences("FREQ=WEEKLY", "2026-03-29T02:30:00", "Asia/Tokyo", "2026-03-01T00:00:00Z", 2) ==
        Strings{"2026-03-28T17:30:00Z", "2026-04-04T17:30:00Z"});
}

TEST_CASE("rrule: the rule is stored normalized, without RRULE: and in upper case") {
  CHECK(spec_of("RRULE:freq=weekly;byday=mo,fr;interval=1;", "2026-11-21T09:00:00").rule == "FREQ=WEEKLY;BYDAY=MO,FR");
  CHECK(spec_of("FREQ=DAILY;UNTIL=20261231T235959Z;WKST=SU", "2026-11-21T09:00:00").rule ==
        "FREQ=DAILY;UNTIL=20261231T235959Z;WKST=SU");
}

TEST_CASE("rrule_next_after is a cursor's first occurrence") {
  auto spec = spec_of("FREQ=MONTHLY;BYDAY=1MO", "2026-11-02T07:00:00");
  auto zone = find_zone("Europe/Berlin").value();
  CHECK(rrule_next_after(spec, zone, instant("2026-11-02T06:00:00Z")) == instant("2026-12-07T06:00:00Z"));
  CHECK(rrule_next_after(spec, zone, instant("2026-11-01T00:00:00Z")) == instant("2026-11-02T06:00:00Z"));
}

TEST_CASE("rrule: a spec parse_rrule did not make has no occurrences") {
  RRuleCursor cursor(RRuleSpec{"FREQ=NEVER", wall("2026-11-21T09:00:00")}, find_zone("UTC").value(),
                     instant("2026-11-21T00:00:00Z"));
  CHECK_FALSE(cursor.next());
}

TEST_CASE("rrule: malformed rules are refused, naming the rule and the problem") {
  struct Case {
    std::string_view rule;
    std::string_view problem;
  };
  for (auto [rule, problem] : std::vector<Case>{
           {"", "the rule is empty"},
           {"COUNT=3", "FREQ is missing"},
           {"FREQ=SOMETIMES", "unknown FREQ \"SOMETIMES\""},
           {"FREQ=DAILY;COLOR=RED", "unknown part \"COLOR\""},
           {"FREQ=DAILY;;COUNT=3", "\"\" is not NAME=VALUE"},
           {"FREQ=DAILY;COUNT=3;COUNT=4", "COUNT is given twice"},
           {"FREQ=DAILY;COUNT=3x", "COUNT takes a whole number from 1 to 100000, not \"3X\""},
           {"FREQ=DAILY;INTERVAL=99999999999", "INTERVAL takes a whole number from 1 to 1000000000"},
           {"FREQ=DAILY;COUNT=2;UNTIL=20270101T000000Z", "COUNT and UNTIL exclude each other"},
           {"FREQ=DAILY;UNTIL=20270101", "UNTIL takes a date-time"},
           {"FREQ=DAILY;BYHOUR=24", "BYHOUR takes 0..23, not \"24\""},
           {"FREQ=YEARLY;BYDAY=MO;BYSETPOS=0", "BYSETPOS takes 1..366 or -366..-1, not \"0\""},
           {"FREQ=MONTHLY;BYDAY=1XX", "BYDAY takes weekdays such as MO, 2TU or -1FR"},
           {"FREQ=WEEKLY;BYDAY=1MO", "BYDAY with a number (1MO, -1FR) needs FREQ=MONTHLY or FREQ=YEARLY"},
           {"FREQ=MONTHLY;BYDAY=6MO", "BYDAY=6MO never occurs"},
           {"FREQ=DAILY;BYWEEKNO=3", "BYWEEKNO needs FREQ=YEARLY"},
           {"FREQ=MINUTELY;BYHOUR=9;BYSETPOS=2", "produces no occurrence: BYSETPOS=2 picks from 1 time a minute"},
           {"FREQ=DAILY;BYHOUR=9,17;BYSETPOS=3,-3", "produces no occurrence: BYSETPOS=-3,3 picks from 2 times a day"},
           {"FREQ=SECONDLY;INTERVAL=10;BYSECOND=5", "produces no occurrence: INTERVAL=10 from DTSTART never reaches"},
           {"FREQ=MINUTELY;INTERVAL=8;BYMINUTE=1", "produces no occurrence: INTERVAL=8 from DTSTART never reaches"},
           {"FREQ=MONTHLY;BYMONTH=2;BYMONTHDAY=30", "produces no occurrence from DTSTART 2026-11-21T09:00:00 on"},
           {"FREQ=HOURLY;INTERVAL=2;BYHOUR=10", "produces no occurrence: INTERVAL=2 from DTSTART never reaches"},
           {"FREQ=DAILY;UNTIL=20261120T000000", "produces no occurrence"},
       }) {
    INFO(rule);
    auto message = refusal(rule);
    INFO(message);
    CHECK(message.starts_with(fmt::format("rrule \"{}\": ", rule)));
    CHECK(message.find(problem) != std::string::npos);
  }
}

TEST_CASE("rrule: absurd rules are refused or computed quickly, never hang") {
  for (auto rule :
       {"FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30", "FREQ=YEARLY;INTERVAL=32767;BYMONTH=2;BYMONTHDAY=29",
        "FREQ=SECONDLY;BYMONTH=12;BYDAY=MO", "FREQ=YEARLY;BYYEARDAY=366;BYDAY=MO", "FREQ=SECONDLY;COUNT=100000"}) {
    auto spec = parse_rrule(rule, wall("2026-01-01T00:00:00"));
    if (!spec) continue;
    RRuleCursor cursor(*spec, find_zone("UTC").value(), instant("2030-06-01T00:00:00Z"));
    CHECK_NOTHROW(cursor.next());
  }
}

TEST_CASE("rrule: DTSTART outside the years 1900 to 2582 is refused") {
  CHECK_FALSE(parse_rrule("FREQ=DAILY", wall("1899-12-31T00:00:00")));
  CHECK_FALSE(parse_rrule("FREQ=DAILY", wall("2583-01-01T00:00:00")));
}
