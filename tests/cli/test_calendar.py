"""taskd calendar: named sets of days kept in the database (add, list, show, rm),
read from a file of "YYYY-MM-DD [name]" lines or from an iCalendar file."""

import datetime
import os
import unittest

from taskd_test import TaskdTestCase

DAYS = """# Feiertage
2026-12-25 Christmas Day
2026-12-26 Boxing Day

2027-01-01 New Year's Day
"""


def ics_of(days):
    """An iCalendar file of all-day events, as calendar programs write them
    (CRLF, long lines folded, commas and semicolons escaped)."""
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//taskd tests//EN"]
    for number, (day, name) in enumerate(days):
        summary = name.replace("\\", "\\\\").replace(",", "\\,").replace(";", "\\;")
        lines += ["BEGIN:VEVENT", f"UID:{number}@taskd.test", f"DTSTART;VALUE=DATE:{day:%Y%m%d}",
                  f"DTEND;VALUE=DATE:{day + datetime.timedelta(days=1):%Y%m%d}"]
        text = f"SUMMARY:{summary}"
        lines += [text[:40]] + [" " + text[i:i + 40] for i in range(40, len(text), 40)]
        lines += ["END:VEVENT"]
    lines += ["END:VCALENDAR"]
    return "\r\n".join(lines) + "\r\n"


class CalendarTest(TaskdTestCase):
    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_a_dates_file_is_listed_and_shown_by_year(self):
        path = self.write("days.txt", DAYS)
        self.assertEqual(self.ok("calendar", "add", "holidays", "--dates", path), "calendar holidays: 3 days\n")
        self.assertEqual(self.json_of("calendar", "list"), [
            {"name": "holidays", "days": 3, "first_day": "2026-12-25", "last_day": "2027-01-01", "tasks": []}])
        self.assertRegex(self.ok("calendar", "list"), r"holidays +3 +2026-12-25 +2027-01-01 +-\n")
        self.assertEqual(self.ok("calendar", "show", "holidays"),
                         "2026-12-25  Christmas Day\n2026-12-26  Boxing Day\n2027-01-01  New Year's Day\n")
        self.assertEqual(self.json_of("calendar", "show", "holidays", "--year", "2027"),
                         [{"date": "2027-01-01", "name": "New Year's Day"}])
        self.assertEqual(self.json_of("calendar", "show", "holidays", "--year", "2030"), [])
        code, out, err = self.run_taskd("calendar", "show", "holidays", "--year", "67890")
        self.assertEqual((code, out), (65, ""))
        self.assertOneErrorLine(err, "--year 67890 is not a year")

    def test_an_icalendar_file_gives_each_events_day_and_summary(self):
        days = [(datetime.date(2026, 12, 25), "Christmas Day, the first; of two"),
                (datetime.date(2026, 12, 26), "A long name " * 6 + "end")]
        path = self.write("h.ics", ics_of(days))
        self.ok("calendar", "add", "h", "--ics", path)
        self.assertEqual(self.json_of("calendar", "show", "h"),
                         [{"date": f"{day}", "name": name} for day, name in days])

    def test_add_refuses_a_second_calendar_of_a_name_and_replace_replaces_its_days(self):
        self.ok("calendar", "add", "h", "--dates", self.write("a.txt", DAYS))
        code, out, err = self.run_taskd("calendar", "add", "h", "--dates", self.write("b.txt", "2028-05-01 May Day\n"))
        self.assertEqual((code, out), (65, ""))
        self.assertOneErrorLine(err, 'a calendar named "h" exists', "--replace")
        self.assertEqual(len(self.json_of("calendar", "show", "h")), 3)
        self.ok("calendar", "add", "h", "--dates", os.path.join(self.tmp, "b.txt"), "--replace")
        self.assertEqual(self.json_of("calendar", "show", "h"), [{"date": "2028-05-01", "name": "May Day"}])

    def test_bad_input_names_the_file_and_line_and_writes_nothing(self):
        bad = self.write("bad.txt", "2026-12-25 ok\n2026-13-01 no such month\n")
        code, out, err = self.run_taskd("calendar", "add", "h", "--dates", bad)
        self.assertEqual((code, out), (65, ""))
        self.assertOneErrorLine(err, f"{bad}:2: ", '"2026-13-01 no such month" does not start with a day')
        if not self.db.startswith("postgresql:"):
            self.assertFalse(os.path.exists(self.db), "bad input made no database file")
        ics = self.write("bad.ics", "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20261225\nRRULE:FREQ=YEARLY\n"
                                    "END:VEVENT\nEND:VCALENDAR\n")
        code, out, err = self.run_taskd("calendar", "add", "h", "--ics", ics)
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, f"{ics}:4: RRULE: an event that repeats")
        code, out, err = self.run_taskd("calendar", "add", "h", "--ics", bad)
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, f"{bad}: not an iCalendar file")
        code, out, err = self.run_taskd("calendar", "add", "bad name!", "--dates", self.write("ok.txt", DAYS))
        self.assertEqual(code, 65)
        self.assertIn("calendar add: invalid calendar name", err)
        self.assertEqual(self.run_taskd("calendar", "add", "h")[0], 2)
        self.assertEqual(self.run_taskd("calendar", "add", "h", "--dates", bad, "--ics", bad)[0], 2)
        self.assertEqual(self.json_of("calendar", "list"), [])

    def test_a_name_with_control_characters_is_refused(self):
        code, out, err = self.run_taskd("calendar", "add", "h", "--dates", self.write("c.txt", "2026-12-25 a\x1b]0;x\x07\n"))
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, ":1: the day's name has a control character")
        self.assertNotIn("\x1b", err)
        path = os.path.join(self.tmp, "latin1.txt")
        with open(path, "wb") as f:
            f.write(b"2026-12-25 Gr\xfc\xdfe\n")
        code, out, err = self.run_taskd("calendar", "add", "h", "--dates", path)
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, path, "UTF-8")

    def test_rm_removes_a_calendar_and_refuses_one_that_does_not_exist(self):
        self.ok("calendar", "add", "h", "--dates", self.write("a.txt", DAYS))
        self.assertEqual(self.ok("calendar", "rm", "h"), "calendar h: removed\n")
        self.assertEqual(self.json_of("calendar", "list"), [])
        for command in (("rm", "h"), ("show", "h")):
            code, out, err = self.run_taskd("calendar", *command)
            self.assertEqual((code, out), (65, ""))
            self.assertOneErrorLine(err, 'no calendar named "h"')

    def test_a_calendar_of_python_holidays_for_two_countries_reads_back_as_the_library_has_it(self):
        try:
            import holidays
        except ImportError:
            self.skipTest("SKIPPED: no python3-holidays here")
        years = list(range(2026, 2031))
        for country in ("DE", "US"):
            days = sorted(holidays.CountryHoliday(country, years=years).items())
            self.ok("calendar", "add", f"{country.lower()}-holidays", "--ics", self.write(f"{country}.ics", ics_of(days)))
            shown = self.json_of("calendar", "show", f"{country.lower()}-holidays")
            self.assertEqual([(d["date"], d["name"]) for d in shown], [(f"{day}", name) for day, name in days])
            self.assertEqual(self.json_of("calendar", "show", f"{country.lower()}-holidays", "--year", "2028"),
                             [{"date": f"{day}", "name": name} for day, name in days if day.year == 2028])


if __name__ == "__main__":
    unittest.main()
