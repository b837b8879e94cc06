#include <doctest/doctest.h>

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
