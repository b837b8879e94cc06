#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <vector>

#include "core/cron.hpp"

using namespace taskd::core;
using namespace std::chrono;

namespace {

Time utc(int y, unsigned m, unsigned d, int hh, int mm, int ss = 0) {
  return sys_days{year{y} / month{m} / day{d}} + hours{hh} + minutes{mm} + seconds{ss};
}

CronSpec parse(std::string_view expression, std::string_view task = "backup") {
  auto spec = parse_cron(expression, task);
  INFO(expression, ": ", spec ? "" : spec.error().message);
  REQUIRE(spec);
  return *spec;
}

std::string error_of(std::string_view expression) {
  auto spec = parse_cron(expression, "backup");
  if (spec) return "(parsed)";
  CHECK(spec.error().kind == ErrorKind::bad_input);
  return spec.error().message;
}

template <std::size_t N>
std::vector<int> values(const std::bitset<N>& bits) {
  std::vector<int> set;
  for (std::size_t i = 0; i < N; ++i) {
    if (bits[i]) set.push_back(static_cast<int>(i));
  }
  return set;
}

std::vector<int> range(int first, int last) {
  std::vector<int> all;
  for (int v = first; v <= last; ++v) all.push_back(v);
  return all;
}

// The next `count` slots after `from`, in RFC 3339 separated by spaces, so a
// failure reads well.
std::string slots(std::string_view expression, std::string_view zone_name, Time from, int count) {
  const auto spec = parse(expression);
  const auto zone = find_zone(zone_name).value();
  std::string out;
  Time t = from;
  for (int i = 0; i < count; ++i) {
    auto next = cron_next_after(spec, zone, t);
    REQUIRE(next);
    out += (out.empty() ? "" : " ") + format_rfc3339(*next);
    t = *next;
  }
  return out;
}

bool same_spec(const CronSpec& a, const CronSpec& b) {
  return a.seconds == b.seconds && a.minutes == b.minutes && a.hours == b.hours && a.days_of_month == b.days_of_month &&
         a.months == b.months && a.days_of_week == b.days_of_week &&
         a.day_of_month_restricted == b.day_of_month_restricted &&
         a.day_of_week_restricted == b.day_of_week_restricted && a.hour_follows_clock == b.hour_follows_clock;
}

}  // namespace

// ---- parsing ----------------------------------------------------------------

TEST_CASE("cron: a 5-field expression sets minute, hour, day, month and weekday, at second 0") {
  auto spec = parse("5 4 * * *");
  CHECK(values(spec.seconds) == std::vector{0});
  CHECK(values(spec.minutes) == std::vector{5});
  CHECK(values(spec.hours) == std::vector{4});
  CHECK(values(spec.days_of_month) == range(1, 31));
  CHECK(values(spec.months) == range(1, 12));
  CHECK(values(spec.days_of_week) == range(0, 6));
  CHECK_FALSE(spec.day_of_month_restricted);
  CHECK_FALSE(spec.day_of_week_restricted);
}

TEST_CASE("cron: a 6-field expression has the seconds first") {
  auto spec = parse("*/20 0 12 * * *");
  CHECK(values(spec.seconds) == std::vector{0, 20, 40});
  CHECK(values(spec.minutes) == std::vector{0});
  CHECK(values(spec.hours) == std::vector{12});
}

TEST_CASE("cron: a 7-field expression has the seconds first and the year last") {
  auto spec = parse("0 0 12 * * * 2027-2031/2,2040");
  CHECK(values(spec.hours) == std::vector{12});
  REQUIRE(spec.years);
  CHECK(values(*spec.years) == std::vector{2027 - 1970, 2029 - 1970, 2031 - 1970, 2040 - 1970});
  CHECK_FALSE(parse("0 0 12 * * *").years);
  CHECK(values(*parse("0 0 0 1 1 * 2090/5").years) == std::vector{2090 - 1970, 2095 - 1970});
  CHECK(values(*parse("0 0 0 1 1 * *").years) == range(0, 2099 - 1970));
}

TEST_CASE("cron: the year field's errors name it") {
  CHECK(error_of("0 0 0 * * * 2100") == "cron: field 7 (year): 2100 is out of range 1970-2099");
  CHECK(error_of("0 0 0 * * * 1969") == "cron: field 7 (year): 1969 is out of range 1970-2099");
  CHECK(error_of("0 0 0 * * * H") == "cron: field 7 (year): \"H\": H picks no year; list the years");
  CHECK(error_of("0 0 0 * * * 2030-2027") == "cron: field 7 (year): range 2030-2027 is reversed");
}

TEST_CASE("cron: a year field skips to its years, and has no slot after the last") {
  CHECK(slots("0 30 9 1 1 * 2027,2029", "UTC", utc(2026, 11, 27, 0, 0), 2) ==
        "2027-01-01T09:30:00Z 2029-01-01T09:30:00Z");
  CHECK(slots("0 0 12 * * * 2027", "Europe/Berlin", utc(2026, 12, 31, 12, 0), 1) == "2027-01-01T11:00:00Z");
  const auto zone = find_zone("UTC").value();
  CHECK_FALSE(cron_next_after(parse("0 30 9 1 1 * 2027,2029"), zone, utc(2029, 1, 1, 9, 30)));
  CHECK_FALSE(cron_next_after(parse("0 0 0 29 2 * 2027"), zone, utc(2026, 1, 1, 0, 0)));  // no Feb 29 in 2027
  CHECK(format_rfc3339(*cron_next_after(parse("0 0 0 29 2 * 2027,2028"), zone, utc(2026, 1, 1, 0, 0))) ==
        "2028-02-29T00:00:00Z");
}

TEST_CASE("cron: ranges, steps and lists") {
  CHECK(values(parse("*/15 * * * *").minutes) == std::vector{0, 15, 30, 45});
  CHECK(values(parse("10-50/20 * * * *").minutes) == std::vector{10, 30, 50});
  CHECK(values(parse("1,5,7-9 * * * *").minutes) == std::vector{1, 5, 7, 8, 9});
  CHECK(values(parse("0 9-17/4,23 * * *").hours) == std::vector{9, 13, 17, 23});
  CHECK(values(parse("0 0 */10 * *").days_of_month) == std::vector{1, 11, 21, 31});
  CHECK(values(parse("0 0 1 */3 *").months) == std::vector{1, 4, 7, 10});
}

TEST_CASE("cron: a single value with a step runs from it to the end of the field") {
  CHECK(values(parse("10/20 * * * *").minutes) == std::vector{10, 30, 50});
  CHECK(values(parse("0 3/8 * * *").hours) == std::vector{3, 11, 19});
  CHECK(values(parse("0 0 * * 1/2").days_of_week) == std::vector{0, 1, 3, 5});  // 7 is Sunday
}

TEST_CASE("cron: month and weekday names, in any case, also in ranges and with steps") {
  auto spec = parse("0 0 * jan-MAR,Oct mon,Fri");
  CHECK(values(spec.months) == std::vector{1, 2, 3, 10});
  CHECK(values(spec.days_of_week) == std::vector{1, 5});
  CHECK(values(parse("0 0 * JAN-DEC/6 *").months) == std::vector{1, 7});
  CHECK(values(parse("0 0 * * MON-FRI").days_of_week) == range(1, 5));
}

TEST_CASE("cron: day of week 7 is Sunday, also at the end of a range") {
  CHECK(values(parse("0 0 * * 7").days_of_week) == std::vector{0});
  CHECK(values(parse("0 0 * * 5-7").days_of_week) == std::vector{0, 5, 6});
  CHECK(values(parse("0 0 * * FRI-SUN").days_of_week) == std::vector{0, 5, 6});
  CHECK(values(parse("0 0 * * 0-7").days_of_week) == range(0, 6));
}

TEST_CASE("cron: aliases stand for their expressions") {
  const std::array<std::pair<std::string_view, std::string_view>, 7> aliases{{
      {"@hourly", "0 * * * *"},
      {"@daily", "0 0 * * *"},
      {"@midnight", "0 0 * * *"},
      {"@weekly", "0 0 * * 0"},
      {"@monthly", "0 0 1 * *"},
      {"@yearly", "0 0 1 1 *"},
      {"@annually", "0 0 1 1 *"},
  }};
  for (auto [alias, expression] : aliases) {
    CAPTURE(alias);
    CHECK(same_spec(parse(alias), parse(expression)));
  }
  CHECK(same_spec(parse("  @Daily "), parse("0 0 * * *")));
}

TEST_CASE("cron: '?' stands for '*' in the day fields only") {
  CHECK(same_spec(parse("0 0 ? * MON"), parse("0 0 * * MON")));
  CHECK(same_spec(parse("0 0 1 * ?"), parse("0 0 1 * *")));
  CHECK(error_of("? * * * *") == "cron: field 1 (minute): \"?\" is not a number");
}

TEST_CASE("cron: the hour field decides whether a job follows the clock at DST changes") {
  CHECK(parse("0 * * * *").hour_follows_clock);
  CHECK(parse("0 */2 * * *").hour_follows_clock);
  CHECK_FALSE(parse("0 2 * * *").hour_follows_clock);
  CHECK_FALSE(parse("* 0-23 * * *").hour_follows_clock);
  CHECK_FALSE(parse("0 0 12 * * *").hour_follows_clock);  // 6 fields: the hour is the third
  CHECK(parse("0 0 * * * *").hour_follows_clock);
}

TEST_CASE("cron: Vixie's rule ORs day of month and day of week when both are restricted") {
  auto spec = parse("0 0 13 * FRI");
  CHECK(spec.day_of_month_restricted);
  CHECK(spec.day_of_week_restricted);
  // Every Friday and every 13th; 2026-11-13 is a Friday too.
  CHECK(slots("0 0 13 * FRI", "UTC", utc(2026, 11, 10, 0, 0), 5) ==
        "2026-11-13T00:00:00Z 2026-11-20T00:00:00Z 2026-11-27T00:00:00Z 2026-12-04T00:00:00Z 2026-12-11T00:00:00Z");
  CHECK(slots("0 0 1,15 * MON", "UTC", utc(2026, 11, 20, 0, 0), 4) ==
        "2026-11-23T00:00:00Z 2026-11-30T00:00:00Z 2026-12-01T00:00:00Z 2026-12-07T00:00:00Z");
}

TEST_CASE("cron: a day field starting with '*' is unrestricted, so both day fields must match (cronie)") {
  auto spec = parse("0 0 */2 * MON");
  CHECK_FALSE(spec.day_of_month_restricted);
  CHECK(spec.day_of_week_restricted);
  // Mondays on odd days only (November's Mondays: 2, 9, 16, 23, 30).
  CHECK(slots("0 0 */2 * MON", "UTC", utc(2026, 11, 1, 0, 0), 3) ==
        "2026-11-09T00:00:00Z 2026-11-23T00:00:00Z 2026-12-07T00:00:00Z");
  CHECK(slots("0 0 1 * *", "UTC", utc(2026, 11, 21, 0, 0), 1) == "2026-12-01T00:00:00Z");
}

TEST_CASE("cron: errors name the field by number and name") {
  CHECK(error_of("0 0 32 * *") == "cron: field 3 (day of month): 32 is out of range 1-31");
  CHECK(error_of("60 * * * * *") == "cron: field 1 (second): 60 is out of range 0-59");
  CHECK(error_of("0 24 * * *") == "cron: field 2 (hour): 24 is out of range 0-23");
  CHECK(error_of("0 0 * 0 *") == "cron: field 4 (month): 0 is out of range 1-12");
  CHECK(error_of("* * * * 8") == "cron: field 5 (day of week): 8 is out of range 0-7");
  CHECK(error_of("99999999999999999999 * * * *") ==
        "cron: field 1 (minute): 99999999999999999999 is out of range 0-59");
}

TEST_CASE("cron: a zero or oversized step is an error") {
  CHECK(error_of("*/0 * * * *") == "cron: field 1 (minute): step 0 is out of range 1-59");
  CHECK(error_of("0 */24 * * *") == "cron: field 2 (hour): step 24 is out of range 1-23");
  CHECK(error_of("*/x * * * *") == "cron: field 1 (minute): step \"x\" in \"*/x\" is not a number");
  CHECK(error_of("*/ * * * *") == "cron: field 1 (minute): step \"\" in \"*/\" is not a number");
}

TEST_CASE("cron: a reversed range is an error") {
  CHECK(error_of("0 20-10 * * *") == "cron: field 2 (hour): range 20-10 is reversed");
  CHECK(error_of("0 0 * DEC-JAN *") == "cron: field 4 (month): range DEC-JAN is reversed");
}

TEST_CASE("cron: unknown names and stray characters are errors") {
  CHECK(error_of("0 0 * FOO *") == "cron: field 4 (month): unknown name \"FOO\" (use JAN-DEC)");
  CHECK(error_of("0 0 * * MONDAY") == "cron: field 5 (day of week): unknown name \"MONDAY\" (use SUN-SAT)");
  CHECK(error_of("0 0 * MON *") == "cron: field 4 (month): unknown name \"MON\" (use JAN-DEC)");
  CHECK(error_of("x * * * *") == "cron: field 1 (minute): \"x\" is not a number");
  CHECK(error_of("5x * * * *") == "cron: field 1 (minute): \"5x\" is not a number");
  CHECK(error_of("0 L * * *") == "cron: field 2 (hour): \"L\" is not a number");
}

TEST_CASE("cron: empty list items and missing values are errors") {
  CHECK(error_of("1,,2 * * * *") == "cron: field 1 (minute): empty list item in \"1,,2\"");
  CHECK(error_of("5, * * * *") == "cron: field 1 (minute): empty list item in \"5,\"");
  CHECK(error_of("5- * * * *") == "cron: field 1 (minute): missing a value in \"5-\"");
  CHECK(error_of("-5 * * * *") == "cron: field 1 (minute): missing a value in \"-5\"");
}

TEST_CASE("cron: the wrong number of fields, an empty expression and unknown aliases are errors") {
  CHECK(error_of("* * * *") ==
        "cron: expected 5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, or 7 with "
        "seconds first and the year last, found 4 in \"* * * *\"");
  CHECK(error_of("* * * * * * * *").find("found 8") != std::string::npos);
  CHECK(error_of("   ") == "cron: empty expression (write e.g. \"*/15 * * * *\")");
  CHECK(error_of("@reboot") ==
        "cron: unknown alias \"@reboot\" (use @hourly, @daily, @midnight, @weekly, @monthly, @yearly or @annually)");
}

TEST_CASE("cron: an expression that can never run is an error") {
  CHECK(error_of("0 0 30 2 *") ==
        "cron: field 3 (day of month): \"30\" never falls in the months of field 4 (\"2\"), so the expression never "
        "runs");
  CHECK(error_of("0 0 0 31 4,6,9,11 *") ==
        "cron: field 4 (day of month): \"31\" never falls in the months of field 5 (\"4,6,9,11\"), so the "
        "expression never runs");
  CHECK(error_of("0 0 30,31 FEB */2") != "(parsed)");  // '*/2' is unrestricted: both fields must match
  CHECK(parse_cron("0 0 29 2 *", ""));                 // leap years only
  CHECK(parse_cron("0 0 30 2 MON", ""));               // Vixie's rule: every Monday in February
  CHECK(parse_cron("0 0 31 1-3 *", ""));
}

TEST_CASE("cron: hostile input is refused, never a crash") {
  for (std::string_view first_field : {"H(", "H()", "H(5-", "H(-)", "H(9-3)", "H(1-99)", "H/0", "H(1-5)/x", "H(1-5)x",
                                       "Hx", "-", "/", "*/", ",", "*-5", "1-2-3", "\x01", "*/99999999999", "@"}) {
    CAPTURE(first_field);
    CHECK_FALSE(parse_cron(fmt::format("{} * * * *", first_field), "backup"));
  }
  CHECK_FALSE(parse_cron(std::string_view("*\0 * * * *", 10), "backup"));
  CHECK_FALSE(parse_cron(std::string(100000, ',') + " * * * *", "backup"));
  std::string long_list = "1";
  for (int i = 0; i < 50000; ++i) long_list += ",1";
  CHECK(parse_cron(long_list + " * * * *", "backup"));
}

// ---- H ------------------------------------------------------------------------

TEST_CASE("cron: H gives the same value for the same name, and separate values per field") {
  CHECK(same_spec(parse("H H * * *", "nightly-report"), parse("H H * * *", "nightly-report")));
  CHECK(values(parse("H * * * *", "a").minutes) == values(parse("0 H * * * *", "a").minutes));
  int differing = 0;
  for (int i = 0; i < 50; ++i) {
    auto spec = parse("H H * * *", fmt::format("task-{}", i));
    differing += values(spec.minutes).front() != values(spec.hours).front();
  }
  CHECK(differing > 40);
}

TEST_CASE("cron: H spreads 1000 task names over the hour") {
  std::array<int, 60> per_minute{};
  for (int i = 0; i < 1000; ++i) {
    const auto name = fmt::format("task-{}", i);
    auto minutes = values(parse("H * * * *", name).minutes);
    REQUIRE(minutes.size() == 1);
    CHECK(values(parse("H * * * *", name).minutes) == minutes);
    ++per_minute[static_cast<std::size_t>(minutes.front())];
  }
  const double mean = 1000.0 / 60;
  const int peak = *std::ranges::max_element(per_minute);
  CAPTURE(peak);
  CHECK(peak / mean <= 2.0);
  CHECK(std::ranges::count(per_minute, 0) == 0);
}

TEST_CASE("cron: H(a-b) stays within its range") {
  for (int i = 0; i < 200; ++i) {
    auto minutes = values(parse("H(10-19) * * * *", fmt::format("task-{}", i)).minutes);
    REQUIRE(minutes.size() == 1);
    CHECK(minutes.front() >= 10);
    CHECK(minutes.front() <= 19);
  }
}

TEST_CASE("cron: H/step starts at a hashed offset below the step, then every step") {
  std::set<int> offsets;
  for (int i = 0; i < 200; ++i) {
    auto minutes = values(parse("H/15 * * * *", fmt::format("task-{}", i)).minutes);
    REQUIRE(minutes.size() == 4);
    CHECK(minutes[0] < 15);
    CHECK(minutes == std::vector{minutes[0], minutes[0] + 15, minutes[0] + 30, minutes[0] + 45});
    offsets.insert(minutes[0]);
  }
  CHECK(offsets.size() == 15);
}

TEST_CASE("cron: H(a-b)/step starts within the range, below a+step") {
  for (int i = 0; i < 200; ++i) {
    auto minutes = values(parse("H(30-59)/10 * * * *", fmt::format("task-{}", i)).minutes);
    REQUIRE(minutes.size() == 3);
    CHECK(minutes[0] >= 30);
    CHECK(minutes[0] < 40);
    CHECK(minutes[2] == minutes[0] + 20);
  }
}

TEST_CASE("cron: H picks days 1-28 and weekdays 0-6, which every month and week has") {
  for (int i = 0; i < 300; ++i) {
    auto spec = parse("0 0 H * H", fmt::format("task-{}", i));
    CHECK(values(spec.days_of_month).front() <= 28);
    CHECK(values(spec.days_of_week).size() == 1);
  }
  CHECK(parse_cron("0 0 H 2 *", "any"));
}

// ---- next slot in UTC -------------------------------------------------------

TEST_CASE("cron: the next slot is strictly after the given instant") {
  const auto utc_zone = find_zone("UTC").value();
  const auto every_quarter = parse("*/15 * * * *");
  CHECK(cron_next_after(every_quarter, utc_zone, utc(2026, 11, 21, 14, 7)) == utc(2026, 11, 21, 14, 15));
  CHECK(cron_next_after(every_quarter, utc_zone, utc(2026, 11, 21, 14, 15)) == utc(2026, 11, 21, 14, 30));
  CHECK(cron_next_after(every_quarter, utc_zone, utc(2026, 11, 21, 14, 15) - milliseconds{1}) ==
        utc(2026, 11, 21, 14, 15));
  CHECK(cron_next_after(every_quarter, utc_zone, utc(2026, 11, 21, 14, 15) + milliseconds{1}) ==
        utc(2026, 11, 21, 14, 30));
  CHECK(cron_next_after(every_quarter, utc_zone, utc(2026, 12, 31, 23, 50)) == utc(2027, 1, 1, 0, 0));
}

TEST_CASE("cron: seconds fields give slots within the minute") {
  CHECK(slots("*/20 * * * * *", "UTC", utc(2026, 11, 21, 14, 0, 30), 3) ==
        "2026-11-21T14:00:40Z 2026-11-21T14:01:00Z 2026-11-21T14:01:20Z");
  CHECK(slots("30 59 23 31 12 *", "UTC", utc(2026, 11, 21, 0, 0), 1) == "2026-12-31T23:59:30Z");
}

TEST_CASE("cron: the next slot skips months and days that cannot match") {
  CHECK(slots("0 9 1 JAN,JUL *", "UTC", utc(2026, 11, 21, 0, 0), 3) ==
        "2027-01-01T09:00:00Z 2027-07-01T09:00:00Z 2028-01-01T09:00:00Z");
  CHECK(slots("0 0 29 2 *", "UTC", utc(2026, 11, 21, 0, 0), 2) == "2028-02-29T00:00:00Z 2032-02-29T00:00:00Z");
  CHECK(slots("0 0 31 * *", "UTC", utc(2026, 11, 21, 0, 0), 3) ==
        "2026-12-31T00:00:00Z 2027-01-31T00:00:00Z 2027-03-31T00:00:00Z");
  CHECK(slots("0 12 * * SAT,SUN", "UTC", utc(2026, 11, 21, 12, 0), 3) ==
        "2026-11-22T12:00:00Z 2026-11-28T12:00:00Z 2026-11-29T12:00:00Z");
}

TEST_CASE("cron: a spec that matches nothing gives no slot instead of looping forever") {
  CHECK_FALSE(cron_next_after(CronSpec{}, find_zone("UTC").value(), utc(2026, 11, 21, 0, 0)));
}

// ---- next slot across DST changes -------------------------------------------

TEST_CASE("cron: Berlin spring forward: a fixed time in the gap runs once at the end of the gap") {
  // 2026-03-29 02:00 CET jumps to 03:00 CEST (01:00 UTC).
  CHECK(slots("30 2 * * *", "Europe/Berlin", utc(2026, 3, 27, 12, 0), 3) ==
        "2026-03-28T01:30:00Z 2026-03-29T01:00:00Z 2026-03-30T00:30:00Z");
}

TEST_CASE("cron: Berlin spring forward: several fixed times in the gap still run once") {
  CHECK(slots("0,15,30,45 2 * * *", "Europe/Berlin", utc(2026, 3, 28, 12, 0), 3) ==
        "2026-03-29T01:00:00Z 2026-03-30T00:00:00Z 2026-03-30T00:15:00Z");
  // A slot at 03:00 itself coincides with the gap's run: once.
  CHECK(slots("30 2,3 * * *", "Europe/Berlin", utc(2026, 3, 28, 12, 0), 3) ==
        "2026-03-29T01:00:00Z 2026-03-29T01:30:00Z 2026-03-30T00:30:00Z");
}

TEST_CASE("cron: Berlin fall back: a fixed time in the repeated hour runs once, at its first instant") {
  // 2026-10-25 03:00 CEST falls back to 02:00 CET (01:00 UTC).
  CHECK(slots("30 2 * * *", "Europe/Berlin", utc(2026, 10, 24, 12, 0), 2) ==
        "2026-10-25T00:30:00Z 2026-10-26T01:30:00Z");
  CHECK(slots("0,30 2 * * *", "Europe/Berlin", utc(2026, 10, 24, 12, 0), 3) ==
        "2026-10-25T00:00:00Z 2026-10-25T00:30:00Z 2026-10-26T01:00:00Z");
}

TEST_CASE("cron: Berlin: '*'-hour jobs follow the clock in both directions") {
  // 01:30 CET, [02:30 does not exist], 03:30 CEST, 04:30 CEST.
  CHECK(slots("30 * * * *", "Europe/Berlin", utc(2026, 3, 29, 0, 0), 3) ==
        "2026-03-29T00:30:00Z 2026-03-29T01:30:00Z 2026-03-29T02:30:00Z");
  // 01:30 CEST, 02:30 CEST, 02:30 CET, 03:30 CET.
  CHECK(slots("30 * * * *", "Europe/Berlin", utc(2026, 10, 24, 23, 0), 4) ==
        "2026-10-24T23:30:00Z 2026-10-25T00:30:00Z 2026-10-25T01:30:00Z 2026-10-25T02:30:00Z");
}

TEST_CASE("cron: New York fall back: '*'-hour jobs run in both passes of the repeated hour") {
  // 01:00 EDT, 01:30 EDT, 01:00 EST, 01:30 EST, 02:00 EST.
  CHECK(slots("*/30 * * * *", "America/New_York", utc(2026, 11, 1, 4, 45), 5) ==
        "2026-11-01T05:00:00Z 2026-11-01T05:30:00Z 2026-11-01T06:00:00Z 2026-11-01T06:30:00Z 2026-11-01T07:00:00Z");
}

TEST_CASE("cron: New York: fixed times run once at DST changes") {
  CHECK(slots("30 1 * * *", "America/New_York", utc(2026, 10, 31, 12, 0), 2) ==
        "2026-11-01T05:30:00Z 2026-11-02T06:30:00Z");  // 01:30 EDT only
  CHECK(slots("30 2 * * *", "America/New_York", utc(2026, 3, 7, 12, 0), 2) ==
        "2026-03-08T07:00:00Z 2026-03-09T06:30:00Z");  // 03:00 EDT
}

TEST_CASE("cron: New York spring forward: '*'-hour jobs skip wall times that do not exist") {
  // 01:30 EST, [02:30 does not exist], 03:30 EDT.
  CHECK(slots("30 * * * *", "America/New_York", utc(2026, 3, 8, 6, 0), 2) ==
        "2026-03-08T06:30:00Z 2026-03-08T07:30:00Z");
}

TEST_CASE("cron: Lord Howe shifts by 30 minutes; fixed times and '*'-hour jobs keep their rules") {
  // 2026-10-04 02:00 LHST (+10:30) jumps to 02:30 LHDT (+11), at 15:30 UTC.
  CHECK(slots("15 2 * * *", "Australia/Lord_Howe", utc(2026, 10, 3, 0, 0), 2) ==
        "2026-10-03T15:30:00Z 2026-10-04T15:15:00Z");
  CHECK(slots("*/15 * * * *", "Australia/Lord_Howe", utc(2026, 10, 3, 15, 0), 3) ==
        "2026-10-03T15:15:00Z 2026-10-03T15:30:00Z 2026-10-03T15:45:00Z");
  // 2026-04-05 02:00 LHDT (+11) falls back to 01:30 LHST (+10:30), at 15:00 UTC.
  CHECK(slots("*/15 * * * *", "Australia/Lord_Howe", utc(2026, 4, 4, 14, 20), 5) ==
        "2026-04-04T14:30:00Z 2026-04-04T14:45:00Z 2026-04-04T15:00:00Z 2026-04-04T15:15:00Z 2026-04-04T15:30:00Z");
  CHECK(slots("45 1 * * *", "Australia/Lord_Howe", utc(2026, 4, 4, 0, 0), 2) ==
        "2026-04-04T14:45:00Z 2026-04-05T15:15:00Z");
}

TEST_CASE("cron: Tokyo has no DST: the same wall time every day") {
  CHECK(slots("0 9 * * *", "Asia/Tokyo", utc(2026, 3, 28, 12, 0), 3) ==
        "2026-03-29T00:00:00Z 2026-03-30T00:00:00Z 2026-03-31T00:00:00Z");
  CHECK(slots("30 2 * * *", "Asia/Tokyo", utc(2026, 10, 24, 0, 0), 2) == "2026-10-24T17:30:00Z 2026-10-25T17:30:00Z");
}

TEST_CASE("cron: successive slots strictly increase across DST changes") {
  const std::array zones{"Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Tokyo"};
  const std::array expressions{"*/7 * * * *",   "0 */2 * * *", "30 1-3 * * *",   "* 2 * * *",
                               "15,45 * * * *", "0 0-3 * * *", "*/20 1 * * * *", "H/10 H(1-3) * * *"};
  for (auto zone_name : zones) {
    const auto zone = find_zone(zone_name).value();
    for (auto expression : expressions) {
      const auto spec = parse(expression);
      for (auto from : {utc(2026, 3, 7, 0, 0), utc(2026, 3, 27, 0, 0), utc(2026, 4, 3, 0, 0), utc(2026, 10, 2, 0, 0),
                        utc(2026, 10, 24, 0, 0), utc(2026, 10, 31, 0, 0)}) {
        Time t = from;
        for (int i = 0; i < 3000 && t < from + days{3}; ++i) {
          auto next = cron_next_after(spec, zone, t);
          REQUIRE(next);
          if (*next <= t)
            FAIL(fmt::format("{} in {}: {} after {}", expression, zone_name, format_rfc3339(*next), format_rfc3339(t)));
          t = *next;
        }
      }
    }
  }
}

// ---- the days that depend on the month (L, L-N, NW, LW, D#N, DL) ------------------------
// 2026: Jan 1 is a Thursday, Feb 1 and Mar 1 Sundays, Aug 1 a Saturday;
// Jan 31 is a Saturday and May 31 a Sunday. 2028 is a leap year.

TEST_CASE("cron: L is the month's last day, a leap February's 29th too") {
  CHECK(slots("0 0 L 2 *", "UTC", utc(2027, 1, 1, 0, 0), 3) ==
        "2027-02-28T00:00:00Z 2028-02-29T00:00:00Z 2029-02-28T00:00:00Z");
  CHECK(slots("0 0 7,14,L * *", "UTC", utc(2026, 2, 1, 0, 0), 3) ==
        "2026-02-07T00:00:00Z 2026-02-14T00:00:00Z 2026-02-28T00:00:00Z");
}

TEST_CASE("cron: L-N counts N days back from the last day") {
  CHECK(slots("0 0 L-2 * *", "UTC", utc(2026, 1, 1, 0, 0), 3) ==
        "2026-01-29T00:00:00Z 2026-02-26T00:00:00Z 2026-03-29T00:00:00Z");
}

TEST_CASE("cron: a range may end at L, and a month shorter than its start has none of it") {
  CHECK(slots("0 0 29-L * *", "UTC", utc(2026, 1, 31, 0, 0), 2) == "2026-03-29T00:00:00Z 2026-03-30T00:00:00Z");
}

TEST_CASE("cron: NW is the weekday nearest day N, never in another month") {
  // Feb 1 and Mar 1 are Sundays: the Monday after. Aug 1 is a Saturday: the
  // Monday after, not Friday July 31.
  CHECK(slots("0 0 1W * *", "UTC", utc(2026, 1, 31, 0, 0), 3) ==
        "2026-02-02T00:00:00Z 2026-03-02T00:00:00Z 2026-04-01T00:00:00Z");
  CHECK(slots("0 0 1W 8 *", "UTC", utc(2026, 1, 1, 0, 0), 1) == "2026-08-03T00:00:00Z");
  // May 31 is a Sunday, the month's last day: the Friday before. Months
  // without a 31st have no slot.
  CHECK(slots("0 0 31W * *", "UTC", utc(2026, 4, 1, 0, 0), 2) == "2026-05-29T00:00:00Z 2026-07-31T00:00:00Z");
  CHECK(slots("0 0 15W 2 *", "UTC", utc(2026, 1, 1, 0, 0), 1) == "2026-02-16T00:00:00Z");
}

TEST_CASE("cron: LW is the month's last Monday to Friday") {
  CHECK(slots("0 0 LW * *", "UTC", utc(2026, 1, 1, 0, 0), 5) ==
        "2026-01-30T00:00:00Z 2026-02-27T00:00:00Z 2026-03-31T00:00:00Z 2026-04-30T00:00:00Z 2026-05-29T00:00:00Z");
}

TEST_CASE("cron: D#N is the Nth weekday D, and a month without a fifth has no slot") {
  CHECK(slots("0 0 * * 5#5", "UTC", utc(2026, 1, 1, 0, 0), 4) ==
        "2026-01-30T00:00:00Z 2026-05-29T00:00:00Z 2026-07-31T00:00:00Z 2026-10-30T00:00:00Z");
  CHECK(slots("0 9 * * MON#1", "UTC", utc(2026, 1, 1, 0, 0), 2) == "2026-01-05T09:00:00Z 2026-02-02T09:00:00Z");
}

TEST_CASE("cron: DL is the month's last weekday D") {
  CHECK(slots("0 0 * * 0L", "UTC", utc(2026, 1, 1, 0, 0), 3) ==
        "2026-01-25T00:00:00Z 2026-02-22T00:00:00Z 2026-03-29T00:00:00Z");
  CHECK(slots("0 0 * * friL", "UTC", utc(2026, 1, 1, 0, 0), 1) == "2026-01-30T00:00:00Z");
}

TEST_CASE("cron: the month's days follow Vixie's OR with the other day field") {
  CHECK(slots("0 0 L * 1#1", "UTC", utc(2026, 1, 1, 0, 0), 4) ==
        "2026-01-05T00:00:00Z 2026-01-31T00:00:00Z 2026-02-02T00:00:00Z 2026-02-28T00:00:00Z");
  CHECK(slots("0 0 L * *", "UTC", utc(2026, 1, 1, 0, 0), 2) == "2026-01-31T00:00:00Z 2026-02-28T00:00:00Z");
}

TEST_CASE("cron: the last Sunday of March at 02:30 in Berlin falls in the DST gap and runs after it") {
  CHECK(slots("30 2 * * 0L", "Europe/Berlin", utc(2026, 3, 1, 0, 0), 1) == "2026-03-29T01:00:00Z");
}

TEST_CASE("cron: L, W and # are refused where they mean nothing, naming the field") {
  CHECK(error_of("0 0 * * L") == "cron: field 5 (day of week): \"L\" alone is not a day of week: write DL for the "
                                 "last weekday D (5L, FRIL)");
  CHECK(error_of("0 0 * * 5#6") ==
        "cron: field 5 (day of week): \"5#6\": D#N takes N from 1 to 5 (the Nth weekday D of the month)");
  CHECK(error_of("0 0 L-0 * *") ==
        "cron: field 3 (day of month): \"L-0\": L-N counts 1 to 30 days back from the month's last day");
  CHECK(error_of("0 0 1-5W * *") ==
        "cron: field 3 (day of month): \"1-5W\": NW takes one day N from 1 to 31 (no range, list or step)");
  CHECK(error_of("0 0 L/2 * *") ==
        "cron: field 3 (day of month): \"L/2\": L and W are L, L-N, NW, LW, or the end of a range (29-L)");
  CHECK(error_of("0 0 1 L *") == "cron: field 4 (month): unknown name \"L\" (use JAN-DEC)");
  CHECK(error_of("0 0 L-30 2 *").find("never runs") != std::string::npos);
  CHECK(error_of("0 0 30W 2 *").find("never runs") != std::string::npos);
}
