#include <doctest/doctest.h>

#include <string>

#include "core/schedule.hpp"
#include "test_helpers.hpp"

using namespace taskd::core;
using taskd::test::at;
using namespace std::chrono_literals;

TEST_CASE("fixed-rate slots fall at the phase within each interval") {
  Schedule every_minute_at_15s = Every{60s, 15s};
  CHECK(next_slot_after(every_minute_at_15s, at(14, 0)) == at(14, 0, 15));
  CHECK(next_slot_after(every_minute_at_15s, at(14, 0, 15)) == at(14, 1, 15));
  CHECK(next_slot_after(every_minute_at_15s, at(14, 0, 14, 999)) == at(14, 0, 15));
  CHECK(last_slot_at_or_before(every_minute_at_15s, at(14, 0, 15)) == at(14, 0, 15));
  CHECK(last_slot_at_or_before(every_minute_at_15s, at(14, 0, 14)) == at(13, 59, 15));
}

TEST_CASE("an hourly task with phase 0 runs on the hour") {
  Schedule hourly = Every{3600s, 0s};
  CHECK(next_slot_after(hourly, at(13, 59, 59)) == at(14, 0));
  CHECK(next_slot_after(hourly, at(14, 0)) == at(15, 0));
}

TEST_CASE("slots before 1970 are on the same grid") {
  Schedule every_7s = Every{7s, 3s};
  Time before_epoch = from_unix_ms(-10'000);
  auto next = next_slot_after(every_7s, before_epoch).value();
  CHECK(to_unix_ms(next) == -4'000);
  CHECK(last_slot_at_or_before(every_7s, before_epoch).value() == from_unix_ms(-11'000));
}

TEST_CASE("the slots in a range: how many, the first and the last") {
  Schedule every_minute = Every{60s, 0s};
  auto five = slots_between(every_minute, at(14, 0), at(14, 5));
  CHECK(five.count == 5);
  CHECK(five.first == at(14, 1));
  CHECK(five.last == at(14, 5));
  CHECK(slots_between(every_minute, at(14, 0), at(14, 4, 59)).count == 4);
  CHECK(slots_between(every_minute, at(14, 0, 30), at(14, 0, 31)).count == 0);
  CHECK(slots_between(every_minute, at(14, 5), at(14, 0)).count == 0);
  // A year of missed seconds is counted, not iterated.
  CHECK(slots_between(Every{1s, 0s}, at(0, 0) - std::chrono::days{365}, at(0, 0)).count == 365 * 86400);
}

TEST_CASE("a cursor walks the slots in order") {
  Schedule every_minute = Every{60s, 0s};
  SlotCursor cursor(every_minute, at(14, 0));
  CHECK(cursor.next() == at(14, 1));
  CHECK(cursor.next() == at(14, 2));
}

TEST_CASE("a manual schedule has no slots and no interval") {
  Schedule manual = Manual{};
  CHECK_FALSE(next_slot_after(manual, at(14, 0)));
  CHECK_FALSE(last_slot_at_or_before(manual, at(14, 0)));
  CHECK_FALSE(interval_around(manual, at(14, 0)));
  CHECK(slots_between(manual, at(14, 0), at(15, 0)).count == 0);
  CHECK_FALSE(has_slot_grid(manual));
}

TEST_CASE("fixed delay has no slot grid; fixed rate has one") {
  CHECK(has_slot_grid(Every{60s, 0s, false}));
  CHECK_FALSE(has_slot_grid(Every{60s, 0s, true}));
}

namespace {

Time utc(int y, unsigned m, unsigned d, int hh, int mm) {
  using namespace std::chrono;
  return sys_days{year{y} / month{m} / day{d}} + hours{hh} + minutes{mm};
}

Every on_wall_clock(Seconds interval, Millis phase, std::string_view zone) {
  return Every{interval, phase, false, find_zone(zone).value()};
}

// The next `count` slots after `from`, as RFC 3339 separated by spaces.
std::string slots(const Schedule& schedule, Time from, int count) {
  std::string out;
  SlotCursor cursor(schedule, from);
  for (int i = 0; i < count; ++i) {
    auto slot = cursor.next();
    REQUIRE(slot);
    out += (out.empty() ? "" : " ") + format_rfc3339(*slot);
  }
  return out;
}

}  // namespace

TEST_CASE("phase 0 on a wall clock: an hourly task runs on the local hour, :30 UTC in Kolkata") {
  Schedule hourly = on_wall_clock(1h, 0s, "Asia/Kolkata");
  CHECK(next_slot_after(hourly, at(14, 0)) == at(14, 30));
  CHECK(next_slot_after(hourly, at(14, 30)) == at(15, 30));
  CHECK(last_slot_at_or_before(hourly, at(14, 29, 59)) == at(13, 30));
}

TEST_CASE("phase 0 on a wall clock: every 6h at 00, 06, 12 and 18 local time; the phase offsets from there") {
  // November: Berlin is UTC+1.
  CHECK(slots(on_wall_clock(6h, 0s, "Europe/Berlin"), at(0, 0), 4) ==
        "2026-11-21T05:00:00Z 2026-11-21T11:00:00Z 2026-11-21T17:00:00Z 2026-11-21T23:00:00Z");
  CHECK(slots(on_wall_clock(6h, 15min, "Europe/Berlin"), at(0, 0), 2) ==
        "2026-11-21T05:15:00Z 2026-11-21T11:15:00Z");
  // July: UTC+2, the same wall-clock times.
  CHECK(slots(on_wall_clock(6h, 0s, "Europe/Berlin"), utc(2026, 7, 1, 0, 0), 2) ==
        "2026-07-01T04:00:00Z 2026-07-01T10:00:00Z");
}

TEST_CASE("a wall-clock grid shorter than a day follows the clock when it springs forward") {
  // Berlin, 2026-03-29: 02:00 CET jumps to 03:00 CEST; 02:00 and 02:30 never come.
  CHECK(slots(on_wall_clock(30min, 0s, "Europe/Berlin"), utc(2026, 3, 29, 0, 0), 3) ==
        "2026-03-29T00:30:00Z 2026-03-29T01:00:00Z 2026-03-29T01:30:00Z");
  // Every 6h at 02:00: the 02:00 of that day does not exist and is not run.
  CHECK(slots(on_wall_clock(6h, 2h, "Europe/Berlin"), utc(2026, 3, 28, 23, 0), 2) ==
        "2026-03-29T06:00:00Z 2026-03-29T12:00:00Z");
}

TEST_CASE("a wall-clock grid shorter than a day runs a repeated hour twice") {
  // New York, 2026-11-01: 01:00 to 02:00 happens in EDT, then again in EST.
  CHECK(slots(on_wall_clock(1h, 0s, "America/New_York"), utc(2026, 11, 1, 4, 30), 4) ==
        "2026-11-01T05:00:00Z 2026-11-01T06:00:00Z 2026-11-01T07:00:00Z 2026-11-01T08:00:00Z");
}

TEST_CASE("Lord Howe's 30-minute shift: an hourly wall-clock grid keeps the local hours") {
  // 2026-10-04 02:00 (+10:30) jumps to 02:30 (+11): 02:00 never comes, so
  // 01:00 and 03:00 are 90 minutes apart.
  CHECK(slots(on_wall_clock(1h, 0s, "Australia/Lord_Howe"), utc(2026, 10, 3, 14, 0), 3) ==
        "2026-10-03T14:30:00Z 2026-10-03T16:00:00Z 2026-10-03T17:00:00Z");
}

TEST_CASE("a daily wall-clock grid is a fixed time: once after a gap, once in a repeated hour") {
  // Berlin 02:30 on 2026-03-29 does not exist: the run comes at 03:00 CEST.
  CHECK(slots(on_wall_clock(24h, 2h + 30min, "Europe/Berlin"), utc(2026, 3, 28, 12, 0), 3) ==
        "2026-03-29T01:00:00Z 2026-03-30T00:30:00Z 2026-03-31T00:30:00Z");
  // New York 01:30 on 2026-11-01 comes twice: the run comes at the first.
  CHECK(slots(on_wall_clock(24h, 1h + 30min, "America/New_York"), utc(2026, 10, 31, 12, 0), 3) ==
        "2026-11-01T05:30:00Z 2026-11-02T06:30:00Z 2026-11-03T06:30:00Z");
}

TEST_CASE("a weekly wall-clock grid counts whole days from Thursday 1970-01-01") {
  // Phase 4d9h: Mondays at 09:00 Berlin time, in winter and in summer.
  CHECK(slots(on_wall_clock(7 * 24h, 4 * 24h + 9h, "Europe/Berlin"), at(0, 0), 2) ==
        "2026-11-23T08:00:00Z 2026-11-30T08:00:00Z");
  CHECK(slots(on_wall_clock(7 * 24h, 4 * 24h + 9h, "Europe/Berlin"), utc(2026, 7, 1, 0, 0), 1) ==
        "2026-07-06T07:00:00Z");
}

TEST_CASE("a phase's milliseconds shift every wall-clock slot, across a DST gap too") {
  CHECK(slots(on_wall_clock(30min, 250ms, "Europe/Berlin"), utc(2026, 3, 29, 0, 0), 3) ==
        "2026-03-29T00:00:00.250Z 2026-03-29T00:30:00.250Z 2026-03-29T01:00:00.250Z");
  Schedule hourly = on_wall_clock(1h, 10min + 250ms, "Asia/Kolkata");
  CHECK(next_slot_after(hourly, at(13, 40)) == at(13, 40, 0, 250));
  CHECK(next_slot_after(hourly, at(13, 40, 0, 250)) == at(14, 40, 0, 250));
  CHECK(last_slot_at_or_before(hourly, at(14, 40, 0, 249)) == at(13, 40, 0, 250));
}

TEST_CASE("a zone without DST: a wall-clock grid is a plain offset") {
  CHECK(slots(on_wall_clock(1h, 0s, "Asia/Tokyo"), utc(2026, 3, 29, 0, 30), 2) ==
        "2026-03-29T01:00:00Z 2026-03-29T02:00:00Z");
}

TEST_CASE("only intervals that divide a day or are whole days fit a wall clock") {
  for (Seconds fits : {Seconds{1s}, Seconds{5s}, Seconds{90min}, Seconds{6h}, Seconds{24h}, Seconds{48h}})
    CHECK(fits_wall_clock(fits));
  for (Seconds does_not : {Seconds{7s}, Seconds{7min}, Seconds{7h}, Seconds{25h}, Seconds{36h}}) CHECK_FALSE(fits_wall_clock(does_not));
}
