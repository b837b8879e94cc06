// DST rules per task (--dst-gap, --dst-repeat): every kind of schedule on a
// wall clock, across Europe/Berlin's 2026 changes (the clock skips 02:00 to
// 03:00 on 2026-03-29 at 01:00Z and shows 02:00 to 03:00 twice on 2026-10-25,
// from 00:00Z to 02:00Z) and America/New_York's (02:00 to 03:00 skipped on
// 2026-03-08 at 07:00Z; 01:00 to 02:00 shown twice on 2026-11-01, from 05:00Z
// to 07:00Z).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/schedule.hpp"

using namespace taskd::core;
using namespace std::chrono_literals;

namespace {

Time instant(const char* text) { return parse_rfc3339(text).value(); }

Zone zone(const char* name) { return find_zone(name).value(); }

constexpr DstPolicy run_after{DstGap::run_after, std::nullopt};
constexpr DstPolicy skip{DstGap::skip, std::nullopt};
constexpr DstPolicy once{std::nullopt, DstRepeat::once};
constexpr DstPolicy twice{std::nullopt, DstRepeat::twice};

Schedule cron(const char* expression, const char* tz, DstPolicy dst) {
  return Cron{parse_cron(expression, "task").value(), zone(tz), dst};
}

Schedule every(Seconds interval, const char* tz, DstPolicy dst) { return Every{interval, 0s, false, zone(tz), dst}; }

Schedule rrule(const char* rule, const char* tz, DstPolicy dst) {
  return Recurrence{parse_rrule(rule, parse_local("2026-01-01T00:00:00").value()).value(), zone(tz), dst};
}

// The slots in (from, until] as RFC 3339, after checking that the cursor,
// next_slot_after, slots_between and last_slot_at_or_before agree on them.
std::vector<std::string> slots(const Schedule& schedule, const char* from, const char* until) {
  std::vector<std::string> out;
  std::vector<Time> walked;
  SlotCursor cursor(schedule, instant(from));
  for (auto slot = cursor.next(); slot && *slot <= instant(until); slot = cursor.next()) {
    CHECK(next_slot_after(schedule, walked.empty() ? instant(from) : walked.back()) == *slot);
    CHECK(last_slot_at_or_before(schedule, *slot) == *slot);
    // Just before a slot, it is the next one (is_planned_slot), also where a gap ends.
    CHECK(next_slot_after(schedule, *slot - 1ms) == *slot);
    CHECK(next_slot_after(schedule, *slot - 1s) == *slot);
    CHECK(last_slot_at_or_before(schedule, *slot - 1ms) == (walked.empty() ? last_slot_at_or_before(schedule, instant(from)) : walked.back()));
    walked.push_back(*slot);
    out.push_back(format_rfc3339(*slot));
  }
  auto span = slots_between(schedule, instant(from), instant(until));
  CHECK(span.count == static_cast<std::int64_t>(walked.size()));
  if (!walked.empty()) CHECK((span.first == walked.front() && span.last == walked.back()));
  return out;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("a fixed cron time in the spring gap runs at the end of the gap, or not at all with --dst-gap skip") {
  const Strings after_gap{"2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"};
  CHECK(slots(cron("30 2 * * *", "Europe/Berlin", {}), "2026-03-28T00:00:00Z", "2026-03-30T12:00:00Z") == after_gap);
  CHECK(slots(cron("30 2 * * *", "Europe/Berlin", run_after), "2026-03-28T00:00:00Z", "2026-03-30T12:00:00Z") ==
        after_gap);
  CHECK(slots(cron("30 2 * * *", "Europe/Berlin", skip), "2026-03-28T00:00:00Z", "2026-03-30T12:00:00Z") ==
        Strings{"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z"});
  CHECK(slots(cron("30 2 * * *", "America/New_York", skip), "2026-03-07T00:00:00Z", "2026-03-09T12:00:00Z") ==
        Strings{"2026-03-07T07:30:00Z", "2026-03-09T06:30:00Z"});
}

TEST_CASE("a fixed cron time in the repeated hour runs at its first instant, or at both with --dst-repeat twice") {
  const Strings first_only{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"};
  CHECK(slots(cron("30 2 * * *", "Europe/Berlin", {}), "2026-10-24T12:00:00Z", "2026-10-26T12:00:00Z") == first_only);
  CHECK(slots(cron("30 2 * * *", "Europe/Berlin", once), "2026-10-24T12:00:00Z", "2026-10-26T12:00:00Z") ==
        first_only);
  CHECK(slots(cron("30 2 * * *", "Europe/Berlin", twice), "2026-10-24T12:00:00Z", "2026-10-26T12:00:00Z") ==
        Strings{"2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-26T01:30:00Z"});
  CHECK(slots(cron("30 1 * * *", "America/New_York", twice), "2026-11-01T00:00:00Z", "2026-11-01T12:00:00Z") ==
        Strings{"2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z"});
}

TEST_CASE("a cron job whose hour is * skips the gap by default; with run-after its gap times collapse into one run") {
  const char* from = "2026-03-29T00:00:00Z";
  const char* until = "2026-03-29T01:45:00Z";
  CHECK(slots(cron("0,30 * * * *", "Europe/Berlin", {}), from, until) ==
        Strings{"2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"});
  // 02:00 and 02:30 do not exist: one run at 03:00, which is a slot itself.
  CHECK(slots(cron("0,30 * * * *", "Europe/Berlin", run_after), from, until) ==
        Strings{"2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"});
  // 02:15 and 02:45 do not exist: one run at 03:00, which is no slot.
  CHECK(slots(cron("15,45 * * * *", "Europe/Berlin", run_after), from, until) ==
        Strings{"2026-03-29T00:15:00Z", "2026-03-29T00:45:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:15:00Z",
                "2026-03-29T01:45:00Z"});
  CHECK(slots(cron("15,45 * * * *", "Europe/Berlin", skip), from, until) ==
        Strings{"2026-03-29T00:15:00Z", "2026-03-29T00:45:00Z", "2026-03-29T01:15:00Z", "2026-03-29T01:45:00Z"});
}

TEST_CASE("a cron job whose hour is * runs in both passes of the repeated hour by default, in the first with once") {
  const char* from = "2026-10-24T23:50:00Z";
  const char* until = "2026-10-25T02:00:00Z";
  const Strings both{"2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:00:00Z", "2026-10-25T01:30:00Z",
                     "2026-10-25T02:00:00Z"};
  CHECK(slots(cron("0,30 * * * *", "Europe/Berlin", {}), from, until) == both);
  CHECK(slots(cron("0,30 * * * *", "Europe/Berlin", twice), from, until) == both);
  CHECK(slots(cron("0,30 * * * *", "Europe/Berlin", once), from, until) ==
        Strings{"2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T02:00:00Z"});
  // From inside the second pass, the next slot with once is after the repeated hour.
  CHECK(next_slot_after(cron("0,30 * * * *", "Europe/Berlin", once), instant("2026-10-25T01:10:00Z")) ==
        instant("2026-10-25T02:00:00Z"));
}

TEST_CASE("--every 15m on a zone's clock: each rule across both changes") {
  CHECK(slots(every(15min, "Europe/Berlin", {}), "2026-03-29T00:40:00Z", "2026-03-29T01:15:00Z") ==
        Strings{"2026-03-29T00:45:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:15:00Z"});
  CHECK(slots(every(15min, "Europe/Berlin", run_after), "2026-03-29T00:40:00Z", "2026-03-29T01:15:00Z") ==
        Strings{"2026-03-29T00:45:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:15:00Z"});
  CHECK(slots(every(15min, "Europe/Berlin", once), "2026-10-25T00:40:00Z", "2026-10-25T02:00:00Z") ==
        Strings{"2026-10-25T00:45:00Z", "2026-10-25T02:00:00Z"});
  CHECK(slots(every(15min, "Europe/Berlin", {}), "2026-10-25T00:40:00Z", "2026-10-25T01:15:00Z").size() == 3);
  CHECK(slots(every(15min, "America/New_York", once), "2026-11-01T05:40:00Z", "2026-11-01T07:00:00Z") ==
        Strings{"2026-11-01T05:45:00Z", "2026-11-01T07:00:00Z"});
}

TEST_CASE("--every 1d on a zone's clock is a fixed time: run-after and once by default, each rule on request") {
  // Midnight-aligned days at 02:30 (phase 2h30m).
  auto daily = [](DstPolicy dst) { return Schedule{Every{24h, 9000s, false, zone("Europe/Berlin"), dst}}; };
  CHECK(slots(daily({}), "2026-03-29T00:00:00Z", "2026-03-29T12:00:00Z") == Strings{"2026-03-29T01:00:00Z"});
  CHECK(slots(daily(skip), "2026-03-29T00:00:00Z", "2026-03-29T12:00:00Z").empty());
  CHECK(slots(daily(twice), "2026-10-25T00:00:00Z", "2026-10-25T12:00:00Z") ==
        Strings{"2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"});
}

TEST_CASE("an RRULE moves a gap time forward by default (RFC 5545), skips it with skip, runs a repeated time twice") {
  const char* daily = "FREQ=DAILY;BYHOUR=2;BYMINUTE=30";
  CHECK(slots(rrule(daily, "Europe/Berlin", {}), "2026-03-28T12:00:00Z", "2026-03-30T12:00:00Z") ==
        Strings{"2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"});
  CHECK(slots(rrule(daily, "Europe/Berlin", run_after), "2026-03-28T12:00:00Z", "2026-03-30T12:00:00Z") ==
        Strings{"2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"});
  CHECK(slots(rrule(daily, "Europe/Berlin", skip), "2026-03-28T12:00:00Z", "2026-03-30T12:00:00Z") ==
        Strings{"2026-03-30T00:30:00Z"});
  CHECK(slots(rrule(daily, "Europe/Berlin", once), "2026-10-24T12:00:00Z", "2026-10-25T12:00:00Z") ==
        Strings{"2026-10-25T00:30:00Z"});
  CHECK(slots(rrule(daily, "Europe/Berlin", twice), "2026-10-24T12:00:00Z", "2026-10-25T12:00:00Z") ==
        Strings{"2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"});
  // Both passes of a dense rule come in order: the second pass after the first of every repeated time.
  CHECK(slots(rrule("FREQ=MINUTELY;INTERVAL=30", "America/New_York", twice), "2026-11-01T04:50:00Z",
              "2026-11-01T07:00:00Z") == Strings{"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T06:00:00Z",
                                                 "2026-11-01T06:30:00Z", "2026-11-01T07:00:00Z"});
  // A UTC UNTIL ends the second pass too.
  CHECK(slots(rrule("FREQ=MINUTELY;INTERVAL=30;UNTIL=20261101T053000Z", "America/New_York", twice),
              "2026-11-01T04:50:00Z", "2026-11-01T07:00:00Z") ==
        Strings{"2026-11-01T05:00:00Z", "2026-11-01T05:30:00Z"});
  CHECK(slots(rrule("FREQ=MINUTELY;INTERVAL=30", "America/New_York", skip), "2026-03-08T06:20:00Z",
              "2026-03-08T07:30:00Z") == Strings{"2026-03-08T06:30:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z"});
}

TEST_CASE("dst_adjustment says which rule shaped a slot, and whether it was the schedule's default") {
  using Kind = DstAdjustment::Kind;
  auto fixed = cron("30 2 * * *", "Europe/Berlin", {});
  auto ran_after = dst_adjustment(fixed, instant("2026-03-29T01:00:00Z"));
  REQUIRE(ran_after);
  CHECK(ran_after->kind == Kind::ran_after_gap);
  CHECK(ran_after->by_default);
  CHECK(describe(*ran_after) ==
        "02:30 Europe/Berlin does not exist that day: runs at the end of the gap, --dst-gap run-after, the default "
        "for a fixed hour");
  CHECK_FALSE(dst_adjustment(fixed, instant("2026-03-30T00:30:00Z")));
  CHECK_FALSE(dst_adjustment(fixed, instant("2026-03-28T01:30:00Z")));

  auto both = cron("30 2 * * *", "Europe/Berlin", twice);
  auto second = dst_adjustment(both, instant("2026-10-25T01:30:00Z"));
  REQUIRE(second);
  CHECK(second->kind == Kind::second_pass);
  CHECK_FALSE(second->by_default);
  CHECK(describe(*second) == "02:30 Europe/Berlin happens twice that day: the second of two runs, --dst-repeat twice");
  CHECK(dst_adjustment(both, instant("2026-10-25T00:30:00Z"))->kind == Kind::first_pass);

  auto skipped = dst_adjustment(cron("30 2 * * *", "Europe/Berlin", skip), instant("2026-03-30T00:30:00Z"));
  REQUIRE(skipped);
  CHECK(skipped->kind == Kind::skipped_in_gap);
  CHECK(describe(*skipped) == "02:30 Europe/Berlin did not exist on 2026-03-29: skipped, --dst-gap skip");

  auto moved = dst_adjustment(rrule("FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "Europe/Berlin", {}),
                              instant("2026-03-29T01:30:00Z"));
  REQUIRE(moved);
  CHECK(describe(*moved) ==
        "02:30 Europe/Berlin does not exist that day: runs the gap's length later, --dst-gap run-after, the default "
        "for --rrule (RFC 5545)");
  // Only the first slot after a skipped gap says so; UTC grids have no wall clock.
  auto hourly = cron("0 * * * *", "Europe/Berlin", {});
  CHECK(dst_adjustment(hourly, instant("2026-03-29T01:00:00Z"))->kind == Kind::skipped_in_gap);
  CHECK_FALSE(dst_adjustment(hourly, instant("2026-03-29T02:00:00Z")));
  CHECK_FALSE(dst_adjustment(Every{1h, 0s}, instant("2026-03-29T01:00:00Z")));
}

TEST_CASE("the defaults follow cronie and RFC 5545; the rules read and print as written") {
  CHECK(default_dst(cron("30 2 * * *", "UTC", {})) == fixed_time_dst);
  CHECK(default_dst(cron("30 */2 * * *", "UTC", {})) == clock_following_dst);
  CHECK(default_dst(every(15min, "UTC", {})) == clock_following_dst);
  CHECK(default_dst(every(48h, "UTC", {})) == fixed_time_dst);
  CHECK(default_dst(rrule("FREQ=DAILY", "UTC", {})) == fixed_time_dst);
  CHECK(parse_dst_gap("run-after").value() == DstGap::run_after);
  CHECK(parse_dst_repeat("twice").value() == DstRepeat::twice);
  CHECK(to_string(DstGap::skip) == "skip");
  CHECK(to_string(DstRepeat::once) == "once");
  for (auto bad : {"", "run_after", "Skip", "after"}) CHECK_FALSE(parse_dst_gap(bad));
  for (auto bad : {"", "both", "1"}) CHECK_FALSE(parse_dst_repeat(bad));
}
