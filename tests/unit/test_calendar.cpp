#include <doctest/doctest.h>

#include <string>

#include "core/calendar.hpp"

using namespace taskd::core;

namespace {

date::local_days day(int y, unsigned m, unsigned d) { return date::local_days{date::year{y} / m / d}; }

std::string error_of(const Result<std::vector<CalendarDate>>& parsed) {
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().kind == ErrorKind::bad_input);
  return parsed.error().message;
}

}  // namespace

TEST_CASE("a dates file: days with names, comments and blank lines; sorted, repeats merged") {
  auto dates = parse_calendar_dates(
                   "# holidays\n\n2026-12-26 Boxing Day\n2026-12-25   Christmas Day  \n2027-01-01\r\n"
                   "  # indented comment\n2026-12-25 Weihnachten\n2026-12-26 Boxing Day\n",
                   "days.txt")
                   .value();
  REQUIRE(dates.size() == 3);
  CHECK(dates[0] == CalendarDate{day(2026, 12, 25), "Christmas Day; Weihnachten"});
  CHECK(dates[1] == CalendarDate{day(2026, 12, 26), "Boxing Day"});
  CHECK(dates[2] == CalendarDate{day(2027, 1, 1), ""});
  CHECK(parse_calendar_dates(calendar_dates_text(dates), "db").value() == dates);
}

TEST_CASE("a day's joined names are each named once and fit a name, so they read back") {
  const std::string long_name(150, 'x');
  std::string text = "2027-01-01 A\n2027-01-01 B\n2027-01-01 A\n";
  for (char c : std::string("123")) text += "2027-01-01 " + long_name + c + "\n";
  auto dates = parse_calendar_dates(text, "days.txt").value();
  REQUIRE(dates.size() == 1);
  CHECK(dates[0].name == "A; B; " + long_name + "1");
  CHECK(parse_calendar_dates(calendar_dates_text(dates), "db").value() == dates);
}

TEST_CASE("a dates file's bad lines are named with the file and the line") {
  CHECK(error_of(parse_calendar_dates("2026-12-25 ok\n2026-02-30 no such day\n", "days.txt"))
            .starts_with("days.txt:2: "));
  CHECK(error_of(parse_calendar_dates("\n\n25.12.2026\n", "f")).starts_with("f:3: \"25.12.2026\" does not start"));
  CHECK(error_of(parse_calendar_dates("2026-12-25x\n", "f")).starts_with("f:1: "));
  CHECK(error_of(parse_calendar_dates("2026-12-25 a\x1b[2Jb\n", "f")) == "f:1: the day's name has a control character");
  CHECK(error_of(parse_calendar_dates("2026-12-25 " + std::string(201, 'x'), "f"))
            .starts_with("f:1: the day's name is longer"));
  CHECK(parse_calendar_dates("", "f").value().empty());
}

TEST_CASE("a dates file of more than max_calendar_dates days is refused") {
  std::string text;
  for (std::size_t i = 0; i <= max_calendar_dates; ++i)
    text += date::format("%F\n", date::local_days{date::year{2000} / 1 / 1} + date::days{static_cast<int>(i)});
  CHECK(error_of(parse_calendar_dates(text, "f")) == "f:100001: more than 100000 days in a calendar");
}

TEST_CASE("an iCalendar file: all-day and timed events, folded lines, escapes, quoted parameters") {
  const char* ics =
      "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n"
      "BEGIN:VEVENT\r\nUID:1\r\nDTSTART;VALUE=DATE:20261225\r\nSUMMARY:Christmas\r\n  Day\r\nEND:VEVENT\r\n"
      "BEGIN:VEVENT\r\nDTSTART;TZID=\"Europe/Berlin:odd;name\":20270101T090000\r\n"
      "SUMMARY;LANGUAGE=de:Neujahr\\, Feiertag\\; frei\\nzweite Zeile \\\\ ende\r\nEND:VEVENT\r\n"
      "begin:vevent\ndtstart:20270102T230000Z\nBEGIN:VALARM\nACTION:EMAIL\nSUMMARY:reminder\nEND:VALARM\n"
      "end:vevent\n"
      "END:VCALENDAR\r\n";
  auto dates = parse_calendar_ics(ics, "h.ics").value();
  REQUIRE(dates.size() == 3);
  CHECK(dates[0] == CalendarDate{day(2026, 12, 25), "Christmas Day"});
  CHECK(dates[1] == CalendarDate{day(2027, 1, 1), "Neujahr, Feiertag; frei zweite Zeile \\ ende"});
  CHECK(dates[2] == CalendarDate{day(2027, 1, 2), ""});
}

TEST_CASE("an iCalendar file's bad events are named with the file and the line") {
  auto wrapped = [](std::string events) { return "BEGIN:VCALENDAR\n" + events + "END:VCALENDAR\n"; };
  CHECK(error_of(parse_calendar_ics(wrapped("BEGIN:VEVENT\nSUMMARY:x\nEND:VEVENT\n"), "h.ics")) ==
        "h.ics:2: an event without DTSTART");
  CHECK(error_of(parse_calendar_ics(wrapped("BEGIN:VEVENT\nDTSTART:2026-12-25\nEND:VEVENT\n"), "h.ics"))
            .starts_with("h.ics:3: DTSTART \"2026-12-25\" is not a date"));
  CHECK(error_of(parse_calendar_ics(wrapped("BEGIN:VEVENT\nDTSTART:20261232\nEND:VEVENT\n"), "h.ics"))
            .starts_with("h.ics:3: "));
  CHECK(
      error_of(parse_calendar_ics(wrapped("BEGIN:VEVENT\nDTSTART:20261225\nRRULE:FREQ=YEARLY\nEND:VEVENT\n"), "h.ics"))
          .starts_with("h.ics:4: RRULE: an event that repeats"));
  CHECK(error_of(parse_calendar_ics(wrapped("BEGIN:VEVENT\nDTSTART:20261225\n"), "h.ics")) ==
        "h.ics:2: an event without END:VEVENT");
  CHECK(error_of(parse_calendar_ics(wrapped("just text\n"), "h.ics")) == "h.ics:2: not an iCalendar line (NAME:VALUE)");
  CHECK(error_of(parse_calendar_ics("2026-12-25 Christmas\n", "h.ics")) ==
        "h.ics: not an iCalendar file (it does not start with BEGIN:VCALENDAR)");
  CHECK(error_of(parse_calendar_ics("\r\n", "h.ics")) == "h.ics: empty, not an iCalendar file");
}

TEST_CASE("an iCalendar all-day event covers each day up to its DTEND or for its DURATION") {
  auto wrapped = [](std::string events) { return "BEGIN:VCALENDAR\n" + events + "END:VCALENDAR\n"; };
  auto days_of = [&](std::string events) {
    std::vector<std::string> out;
    const auto dates = parse_calendar_ics(wrapped(std::move(events)), "h.ics").value();
    for (const auto& date : dates) out.push_back(date::format("%F ", date.day) + date.name);
    return out;
  };
  // DTEND is the first day after the event (RFC 5545), and may come before DTSTART.
  CHECK(days_of("BEGIN:VEVENT\nDTEND;VALUE=DATE:20261227\nDTSTART;VALUE=DATE:20261224\nSUMMARY:Xmas\nEND:VEVENT\n") ==
        std::vector<std::string>{"2026-12-24 Xmas", "2026-12-25 Xmas", "2026-12-26 Xmas"});
  CHECK(days_of("BEGIN:VEVENT\nDTSTART;VALUE=DATE:20261230\nDURATION:P3D\nSUMMARY:x\nEND:VEVENT\n") ==
        std::vector<std::string>{"2026-12-30 x", "2026-12-31 x", "2027-01-01 x"});
  CHECK(days_of("BEGIN:VEVENT\nDTSTART;VALUE=DATE:20270104\nDURATION:+P1W\nEND:VEVENT\n").size() == 7);
  // One day: DTEND the day after, DTEND not after DTSTART, no DTEND.
  CHECK(days_of("BEGIN:VEVENT\nDTSTART;VALUE=DATE:20261225\nDTEND;VALUE=DATE:20261226\nEND:VEVENT\n") ==
        std::vector<std::string>{"2026-12-25 "});
  CHECK(days_of("BEGIN:VEVENT\nDTSTART;VALUE=DATE:20261225\nDTEND;VALUE=DATE:20261225\nEND:VEVENT\n") ==
        std::vector<std::string>{"2026-12-25 "});
  // Spans that overlap give each day once, names joined.
  CHECK(days_of("BEGIN:VEVENT\nDTSTART:20261224\nDURATION:P2D\nSUMMARY:a\nEND:VEVENT\n"
                "BEGIN:VEVENT\nDTSTART:20261225\nDURATION:P2D\nSUMMARY:b\nEND:VEVENT\n") ==
        std::vector<std::string>{"2026-12-24 a", "2026-12-25 a; b", "2026-12-26 b"});
}

TEST_CASE("an iCalendar timed event gives the day it starts on; a cancelled event gives none") {
  auto wrapped = [](std::string events) { return "BEGIN:VCALENDAR\n" + events + "END:VCALENDAR\n"; };
  auto dates = parse_calendar_ics(wrapped("BEGIN:VEVENT\nDTSTART:20261224T220000\nDTEND:20261227T020000\nEND:VEVENT\n"
                                          "BEGIN:VEVENT\nDTSTART:20261228T090000Z\nDURATION:P3D\nEND:VEVENT\n"
                                          "BEGIN:VEVENT\nDTSTART;VALUE=DATE:20261231\nDURATION:P2D\n"
                                          "status:cancelled\nEND:VEVENT\n"
                                          "BEGIN:VEVENT\nDTSTART:20270105\nSTATUS:CONFIRMED\nEND:VEVENT\n"),
                                  "h.ics")
                   .value();
  REQUIRE(dates.size() == 3);
  CHECK(dates[0].day == day(2026, 12, 24));
  CHECK(dates[1].day == day(2026, 12, 28));
  CHECK(dates[2].day == day(2027, 1, 5));
}

TEST_CASE("an iCalendar event's days count against the bound; bad DTEND and DURATION name the line") {
  auto wrapped = [](std::string events) { return "BEGIN:VCALENDAR\n" + events + "END:VCALENDAR\n"; };
  CHECK(parse_calendar_ics(wrapped("BEGIN:VEVENT\nDTSTART:20000101\nDURATION:P100000D\nEND:VEVENT\n"), "h.ics")
            .value()
            .size() == max_calendar_dates);
  CHECK(error_of(parse_calendar_ics(
            wrapped("BEGIN:VEVENT\nDTSTART:20000101\nEND:VEVENT\nBEGIN:VEVENT\nDTSTART:20010101\nDURATION:P100000D\n"
                    "END:VEVENT\n"),
            "h.ics")) == "h.ics:8: more than 100000 days in a calendar");
  CHECK(error_of(parse_calendar_ics(wrapped("BEGIN:VEVENT\nDTSTART:00010101\nDTEND:99991231\nEND:VEVENT\n"), "h.ics")) ==
        "h.ics:5: more than 100000 days in a calendar");
  CHECK(error_of(parse_calendar_ics(wrapped("BEGIN:VEVENT\nDTSTART:99991230\nDURATION:P3D\nEND:VEVENT\n"), "h.ics")) ==
        "h.ics:2: the event lasts past the year 9999");
  CHECK(error_of(parse_calendar_ics(wrapped("BEGIN:VEVENT\nDTSTART:20261225\nDURATION:PT24H\nEND:VEVENT\n"), "h.ics")) ==
        "h.ics:4: DURATION \"PT24H\" is not days (P3D) or weeks (P1W), as an all-day event's is");
  CHECK(error_of(parse_calendar_ics(wrapped("BEGIN:VEVENT\nDTSTART:20261225\nDTEND:2026-12-27\nEND:VEVENT\n"), "h.ics"))
            .starts_with("h.ics:4: DTEND \"2026-12-27\" is not a date"));
}
