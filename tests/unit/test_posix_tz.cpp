#include <doctest/doctest.h>

#include "core/posix_tz.hpp"
#include "core/time.hpp"

using namespace taskd::core;
using namespace std::chrono;

namespace {

sys_seconds utc(int y, unsigned m, unsigned d, int hh, int mm = 0) {
  return sys_days{year{y} / month{m} / day{d}} + hours{hh} + minutes{mm};
}

PosixTz parse(std::string_view text) {
  auto tz = parse_posix_tz(text);
  INFO(text);
  REQUIRE(tz);
  return *tz;
}

// The period at `t` as "begin end offset-in-minutes", so a failure reads well.
std::string period_at(std::string_view text, sys_seconds t) {
  auto period = posix_tz_period(parse(text), t);
  return format_rfc3339(Time{period.begin}) + " " + format_rfc3339(Time{period.end}) + " " +
         std::to_string(duration_cast<minutes>(period.offset).count());
}

}  // namespace

TEST_CASE("posix tz: offsets are written west of UTC; DST is an hour ahead unless given") {
  auto berlin = parse("CET-1CEST,M3.5.0,M10.5.0/3");
  CHECK(berlin.std_offset == 1h);
  CHECK(berlin.dst_offset == 2h);
  CHECK(berlin.dst_start.time == 2h);
  CHECK(berlin.dst_end.time == 3h);
  auto lord_howe = parse("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0");
  CHECK(lord_howe.std_offset == 10h + 30min);
  CHECK(lord_howe.dst_offset == 11h);
}

TEST_CASE("posix tz: Berlin's last Sundays of March and October") {
  const auto berlin = "CET-1CEST,M3.5.0,M10.5.0/3";
  CHECK(period_at(berlin, utc(2040, 7, 1, 12)) == "2040-03-25T01:00:00Z 2040-10-28T01:00:00Z 120");
  CHECK(period_at(berlin, utc(2040, 1, 1, 12)) == "2039-10-30T01:00:00Z 2040-03-25T01:00:00Z 60");
  CHECK(period_at(berlin, utc(2040, 3, 25, 1)) == "2040-03-25T01:00:00Z 2040-10-28T01:00:00Z 120");
  CHECK(period_at(berlin, utc(2040, 3, 25, 0, 59)) == "2039-10-30T01:00:00Z 2040-03-25T01:00:00Z 60");
}

TEST_CASE("posix tz: southern zones have DST across the new year") {
  const auto santiago = "<-04>4<-03>,M9.1.6/24,M4.1.6/24";
  CHECK(period_at(santiago, utc(2040, 1, 1, 12)) == "2039-09-04T04:00:00Z 2040-04-08T03:00:00Z -180");
  CHECK(period_at(santiago, utc(2040, 7, 1, 12)) == "2040-04-08T03:00:00Z 2040-09-02T04:00:00Z -240");
}

TEST_CASE("posix tz: negative and late transition times, and negative DST") {
  CHECK(period_at("<-02>2<-01>,M3.5.0/-1,M10.5.0/0", utc(2040, 7, 1, 12)) ==
        "2040-03-25T01:00:00Z 2040-10-28T01:00:00Z -60");
  CHECK(period_at("IST-2IDT,M3.4.4/26,M10.5.0", utc(2040, 7, 1, 12)) ==
        "2040-03-23T00:00:00Z 2040-10-27T23:00:00Z 180");
  // Dublin: standard time is summer's IST; winter's GMT is the "DST".
  CHECK(period_at("IST-1GMT0,M10.5.0,M3.5.0/1", utc(2040, 7, 1, 12)) ==
        "2040-03-25T01:00:00Z 2040-10-28T01:00:00Z 60");
  CHECK(period_at("IST-1GMT0,M10.5.0,M3.5.0/1", utc(2040, 1, 1, 12)) ==
        "2039-10-30T01:00:00Z 2040-03-25T01:00:00Z 0");
}

TEST_CASE("posix tz: Julian days skip February 29, zero-based days count it") {
  // 2040 is a leap year: J60 is March 1, day 59 is February 29.
  CHECK(period_at("AAA0BBB,J60/0,J305/0", utc(2040, 3, 1, 12)).starts_with("2040-03-01T00:00:00Z"));
  CHECK(period_at("AAA0BBB,59/0,304/0", utc(2040, 3, 1, 12)).starts_with("2040-02-29T00:00:00Z"));
}

TEST_CASE("posix tz: DST all year round") {
  const auto always = "EST5EDT,0/0,J365/25";
  CHECK(period_at(always, utc(2040, 7, 1, 12)).ends_with(" -240"));
  CHECK(period_at(always, utc(2040, 12, 31, 23)).ends_with(" -240"));
  CHECK(period_at(always, utc(2041, 1, 1, 5)).ends_with(" -240"));
}

TEST_CASE("posix tz: strings without DST or outside the grammar give no rule") {
  for (auto text : {"", "JST-9", "<+0530>-5:30", "CET-1CEST", "CET-1CEST,M3.5.0", "CET-1CEST,M13.5.0,M10.5.0",
                    "CET-1CEST,M3.6.0,M10.5.0", "CET-1CEST,J0,J100", "CET-1CEST,M3.5.0,M10.5.0/3x", "C-1CEST,M3.5.0,M10.5.0",
                    "<+1030-10:30<+11>-11,M10.1.0,M4.1.0", "CET-99CEST,M3.5.0,M10.5.0"}) {
    INFO(text);
    CHECK_FALSE(parse_posix_tz(text));
  }
}
