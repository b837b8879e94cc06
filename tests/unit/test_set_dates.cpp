#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/recent_cache.hpp"
#include "core/schedule.hpp"
#include "core/set_dates.hpp"

using namespace taskd::core;

namespace {

Time utc(const char* text) { return parse_rfc3339(text).value(); }

std::vector<SetDate> dates(const char* text, bool days_allowed = true) {
  return parse_set_dates(text, days_allowed).value();
}

Zone berlin() { return find_zone("Europe/Berlin").value(); }

Schedule daily_at_nine_in_berlin(const char* added, const char* removed) {
  Schedule cron = Cron{parse_cron("0 9 * * *", "t").value(), berlin()};
  return with_changes(cron, std::make_shared<const SlotChanges>(dates(added, false), dates(removed), berlin()));
}

std::vector<std::string> next_slots(const Schedule& schedule, Time after, int count) {
  std::vector<std::string> slots;
  for (auto t = next_slot_after(schedule, after); t && count-- > 0; t = next_slot_after(schedule, *t))
    slots.push_back(format_rfc3339(*t));
  return slots;
}

std::vector<std::string> cursor_slots(const Schedule& schedule, Time after, int count) {
  std::vector<std::string> slots;
  SlotCursor cursor(schedule, after);
  for (auto t = cursor.next(); t && count-- > 0; t = cursor.next()) slots.push_back(format_rfc3339(*t));
  return slots;
}

}  // namespace

TEST_CASE("set dates: wall times, times with an offset and days, written back sorted and once each") {
  auto read = dates("2026-12-25, 2026-12-24 09:00,2026-12-24T08:00+01:00,2026-12-24T09:00:00,2026-12-23T10:00:30Z");
  CHECK(set_dates_text(read) == "2026-12-24T09:00:00,2026-12-23T10:00:30Z,2026-12-24T07:00:00Z,2026-12-25");
  CHECK(dates(set_dates_text(read).c_str()) == read);
  CHECK(dates("").empty());
}

TEST_CASE("set dates: a day only where days are allowed, nothing that is no date, at most 1000") {
  CHECK(parse_set_dates("2026-12-25", false).error().message.find("\"2026-12-25\" is not a date and time") == 0);
  CHECK_FALSE(parse_set_dates("2026-12-25T25:00", true));
  CHECK_FALSE(parse_set_dates("2026-12-24T09:00,", true));
  CHECK_FALSE(parse_set_dates("tomorrow", true));
  CHECK_FALSE(parse_set_dates("2026-02-30", true));
  std::string many;
  for (int i = 0; i < 1001; ++i) many += fmt::format("{}2026-01-01T00:00:{:02}", i ? "," : "", i % 60);
  CHECK(parse_set_dates(std::string_view(many).substr(0, 1000 * 20 - 1), true));
  CHECK(parse_set_dates(many, true).error().message == "more than 1000 dates");
}

TEST_CASE("a schedule gains its added slots and loses removed times and days, by next slot and by cursor") {
  // Berlin is UTC+1 in December.
  auto schedule = daily_at_nine_in_berlin("2026-12-24T15:30,2026-12-26T09:00,2026-12-27T09:00",
                                          "2026-12-25,2026-12-27T09:00,2026-12-28T08:00:00Z");
  const std::vector<std::string> expected{"2026-12-24T08:00:00Z", "2026-12-24T14:30:00Z", "2026-12-26T08:00:00Z",
                                          "2026-12-29T08:00:00Z"};
  CHECK(next_slots(schedule, utc("2026-12-24T00:00:00Z"), 4) == expected);
  CHECK(cursor_slots(schedule, utc("2026-12-24T00:00:00Z"), 4) == expected);
  CHECK(is_planned_slot(schedule, utc("2026-12-24T14:30:00Z")));
  CHECK_FALSE(is_planned_slot(schedule, utc("2026-12-25T08:00:00Z")));
  CHECK(last_slot_at_or_before(schedule, utc("2026-12-28T12:00:00Z")) == utc("2026-12-26T08:00:00Z"));
}

TEST_CASE("added slots go on after the schedule's own end, and a cursor of a rule walks past a removed day") {
  RRuleSpec spec = parse_rrule("FREQ=HOURLY;COUNT=30", parse_local("2026-12-24T00:00:00").value()).value();
  Schedule hourly = Recurrence{spec, berlin()};
  auto changed = with_changes(
      hourly, std::make_shared<const SlotChanges>(dates("2027-01-06T12:00", false), dates("2026-12-24"), berlin()));
  const std::vector<std::string> expected{"2026-12-24T23:00:00Z", "2026-12-25T00:00:00Z", "2026-12-25T01:00:00Z",
                                          "2026-12-25T02:00:00Z", "2026-12-25T03:00:00Z", "2026-12-25T04:00:00Z",
                                          "2027-01-06T11:00:00Z"};
  CHECK(next_slots(changed, utc("2026-12-20T00:00:00Z"), 10) == expected);
  CHECK(cursor_slots(changed, utc("2026-12-20T00:00:00Z"), 10) == expected);
}

TEST_CASE("a schedule without added or removed dates is the schedule itself") {
  Schedule every = Every{std::chrono::seconds{60}, Millis{0}};
  auto same = with_changes(every, std::make_shared<const SlotChanges>(dates(""), dates(""), berlin()));
  CHECK(std::get<Every>(same).changes == nullptr);
}

TEST_CASE("a removed wall time removes the slots DST made of it: both of a repeated hour, the gap's end") {
  auto removed = dates("2026-03-29T02:30,2026-10-25T02:30");
  Schedule cron = Cron{parse_cron("30 2 * * *", "t").value(), berlin(), DstPolicy{.repeat = DstRepeat::twice}};
  auto changed = with_changes(cron, std::make_shared<const SlotChanges>(dates(""), removed, berlin()));
  // 02:30 on 29 March is in the gap, run at its end (03:00 CEST); on 25 October it comes twice.
  CHECK(next_slots(cron, utc("2026-03-28T12:00:00Z"), 1) == std::vector<std::string>{"2026-03-29T01:00:00Z"});
  CHECK(next_slots(changed, utc("2026-03-28T12:00:00Z"), 1) == std::vector<std::string>{"2026-03-30T00:30:00Z"});
  CHECK(next_slots(changed, utc("2026-10-24T12:00:00Z"), 1) == std::vector<std::string>{"2026-10-26T01:30:00Z"});
  for (const char* slot : {"2026-03-29T01:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"}) {
    CAPTURE(slot);
    CHECK(removing_date(removed, berlin(), utc(slot)).has_value());
  }
  CHECK_FALSE(removing_date(removed, berlin(), utc("2026-10-25T02:30:00Z")).has_value());
  // Every half hour: 03:30 CEST is a slot of its own, which 02:30 does not take with it.
  Schedule half_hourly = Cron{parse_cron("*/30 * * * *", "t").value(), berlin()};
  auto half_changed = with_changes(half_hourly, std::make_shared<const SlotChanges>(dates(""), removed, berlin()));
  CHECK(next_slots(half_changed, utc("2026-03-29T00:15:00Z"), 3) ==
        std::vector<std::string>{"2026-03-29T00:30:00Z", "2026-03-29T01:30:00Z", "2026-03-29T02:00:00Z"});
}

namespace {

std::vector<date::local_days> days_of(std::initializer_list<const char*> texts) {
  std::vector<date::local_days> days;
  for (const auto* text : texts) days.push_back(std::chrono::floor<date::days>(parse_local(text).value()));
  return days;
}

Schedule daily_at_nine_in_berlin_with(const CalendarDays& calendars) {
  Schedule cron = Cron{parse_cron("0 9 * * *", "t").value(), berlin()};
  return with_changes(
      cron, std::make_shared<const SlotChanges>(std::vector<SetDate>{}, std::vector<SetDate>{}, berlin(), calendars));
}

}  // namespace

TEST_CASE("calendar days: skipped days leave no slot, kept days alone keep theirs, in the zone's days") {
  const auto skip = daily_at_nine_in_berlin_with({days_of({"2026-12-24T00:00:00", "2026-12-25T00:00:00"}), {}});
  const auto from = utc("2026-12-22T12:00:00Z");
  const std::vector<std::string> without_the_holidays{"2026-12-23T08:00:00Z", "2026-12-26T08:00:00Z",
                                                      "2026-12-27T08:00:00Z"};
  CHECK(next_slots(skip, from, 3) == without_the_holidays);
  CHECK(cursor_slots(skip, from, 3) == without_the_holidays);
  CHECK_FALSE(is_planned_slot(skip, utc("2026-12-24T08:00:00Z")));

  const auto only = daily_at_nine_in_berlin_with({{}, days_of({"2026-12-23T00:00:00", "2027-03-01T00:00:00"})});
  const std::vector<std::string> kept{"2026-12-23T08:00:00Z", "2027-03-01T08:00:00Z"};
  CHECK(next_slots(only, from, 5) == kept);
  CHECK(cursor_slots(only, from, 5) == kept);
  CHECK_FALSE(next_slot_after(only, utc("2027-03-01T08:00:00Z")));
  // An only-calendar without days keeps no slot at all.
  CHECK_FALSE(next_slot_after(daily_at_nine_in_berlin_with({{}, std::vector<date::local_days>{}}), from));
}

TEST_CASE("calendar days: written as skip and only lines that read back") {
  CalendarDays days{days_of({"2026-12-24T00:00:00", "2026-12-25T00:00:00"}), days_of({"2027-01-04T00:00:00"})};
  CHECK(calendar_days_text(days) == "skip 2026-12-24,+1\nonly 2027-01-04");
  CHECK(parse_calendar_days(calendar_days_text(days)).value() == days);
  // Whole dates read as well (a database written before the days were counted).
  CHECK(parse_calendar_days("skip 2026-12-24,2026-12-25\nonly 2027-01-04").value() == days);
  CHECK(parse_calendar_days("skip 2026-12-30,+3,2027-01-04").value().skipped ==
        days_of({"2026-12-30T00:00:00", "2027-01-02T00:00:00", "2027-01-04T00:00:00"}));
  CHECK_FALSE(parse_calendar_days("skip +1"));
  CHECK_FALSE(parse_calendar_days("skip 2026-12-24,+0"));
  CHECK_FALSE(parse_calendar_days("skip 2026-12-24,+x"));
  CHECK(parse_calendar_days("only").value() == CalendarDays{{}, std::vector<date::local_days>{}});
  CHECK(parse_calendar_days("").value().empty());
  CHECK_FALSE(parse_calendar_days("skip 2026-13-01"));
  CHECK_FALSE(parse_calendar_days("skip 2026-12-25,2026-12-24"));
  CHECK_FALSE(parse_calendar_days("keep 2026-12-25"));
}

TEST_CASE("a calendar's spans are made once for each distinct days and zone, shared by threads") {
  const CalendarDays days{days_of({"2026-12-24T00:00:00", "2026-12-25T00:00:00"}), {}};
  const auto berlin_spans = calendar_spans(days, berlin());
  REQUIRE(berlin_spans->skipped.size() == 2);
  CHECK(berlin_spans->skipped[0] == std::pair{utc("2026-12-23T23:00:00Z"), utc("2026-12-24T23:00:00Z")});
  CHECK_FALSE(berlin_spans->kept);
  auto copy = days;
  CHECK(calendar_spans(copy, berlin()).get() == berlin_spans.get());
  const auto utc_spans = calendar_spans(days, find_zone("UTC").value());
  CHECK(utc_spans.get() != berlin_spans.get());
  CHECK(utc_spans->skipped[0] == std::pair{utc("2026-12-24T00:00:00Z"), utc("2026-12-25T00:00:00Z")});
  const CalendarDays kept{{}, days.skipped};
  const auto kept_spans = calendar_spans(kept, berlin());
  CHECK(kept_spans->skipped.empty());
  CHECK(kept_spans->kept == berlin_spans->skipped);

  std::vector<std::thread> threads;
  std::vector<int> same(4, 1);  // not vector<bool>: each thread writes its own
  for (std::size_t i = 0; i < same.size(); ++i)
    threads.emplace_back([&, i] {
      for (int n = 0; n < 200; ++n) {
        const auto& wanted = n % 2 ? days : kept;
        const auto& expected = n % 2 ? *berlin_spans : *kept_spans;
        const auto spans = calendar_spans(wanted, berlin());
        same[i] = same[i] != 0 && spans->skipped == expected.skipped && spans->kept == expected.kept;
      }
    });
  for (auto& thread : threads) thread.join();
  CHECK(same == std::vector<int>(4, 1));
}

TEST_CASE("a recent cache compares the whole key, and lets go of the key used longest ago") {
  RecentCache<std::string, int> cache(2);
  cache.insert(7, "a", std::make_shared<const int>(1));
  CHECK(cache.find(7, std::string_view("b")) == nullptr);  // the same hash, another key
  cache.insert(7, "b", std::make_shared<const int>(2));
  CHECK(*cache.find(7, std::string_view("a")) == 1);
  cache.insert(8, "c", std::make_shared<const int>(3));  // "b" was used longest ago
  CHECK(cache.find(7, std::string_view("b")) == nullptr);
  CHECK(*cache.find(7, std::string_view("a")) == 1);
  CHECK(*cache.find(8, std::string_view("c")) == 3);
}

TEST_CASE("calendar days read twice read the same, and a bad text is an error each time") {
  const std::string text = "skip 2026-12-24,2026-12-25\nonly 2027-01-04";
  CHECK(parse_calendar_days(text).value() == parse_calendar_days(std::string(text)).value());
  CHECK_FALSE(parse_calendar_days("skip 2026-12-25,2026-12-24"));
  CHECK_FALSE(parse_calendar_days("skip 2026-12-25,2026-12-24"));
}

TEST_CASE("a day both an --exdate and a calendar's is off once") {
  const CalendarDays calendar{days_of({"2026-12-24T00:00:00"}), {}};
  const SlotChanges changes(dates(""), dates("2026-12-24"), berlin(), calendar);
  CHECK(changes.time_off(utc("2026-12-23T00:00:00Z"), utc("2026-12-26T00:00:00Z")) == std::chrono::hours{24});
  const SlotChanges kept(dates(""), dates("2026-12-24"), berlin(),
                         CalendarDays{{}, days_of({"2026-12-24T00:00:00", "2026-12-25T00:00:00"})});
  CHECK(kept.time_off(utc("2026-12-23T23:00:00Z"), utc("2026-12-25T23:00:00Z")) == std::chrono::hours{24});
}
