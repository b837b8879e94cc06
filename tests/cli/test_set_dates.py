"""--rdate and --exdate: slots added to a schedule and taken from it (RFC 5545's RDATE and EXDATE)."""

import os
import unittest

from taskd_test import TaskdTestCase

T0 = "2026-12-20 12:00:00"
BERLIN_NINE = ["--cron", "0 9 * * *", "--tz", "Europe/Berlin"]


class SetDatesTest(TaskdTestCase):
    def preview(self, name, count):
        return [line.split()[0] for line in self.ok("preview", name, "--count", str(count), "--utc",
                                                   faketime=T0).splitlines()]

    def add_holiday_task(self, *more):
        self.add("standup", *BERLIN_NINE, "--rdate", "2026-12-24 15:30,2026-12-26T09:00+01:00",
                 "--exdate", "2026-12-25,2026-12-28T09:00", *more, "--", "true", faketime=T0)

    def test_added_and_removed_dates_shape_the_slots_of_preview_and_the_next_run(self):
        self.add_holiday_task()
        self.assertEqual(self.preview("standup", 8), [
            "2026-12-21T08:00:00Z", "2026-12-22T08:00:00Z", "2026-12-23T08:00:00Z", "2026-12-24T08:00:00Z",
            "2026-12-24T14:30:00Z", "2026-12-26T08:00:00Z", "2026-12-27T08:00:00Z", "2026-12-29T08:00:00Z"])
        task = self.task("standup")
        self.assertEqual((task["rdate"], task["exdate"]),
                         ("2026-12-24T15:30:00,2026-12-26T08:00:00Z", "2026-12-28T09:00:00,2026-12-25"))
        self.assertEqual(task["next_run_at"], "2026-12-21T08:00:00Z")
        show = self.ok("show", "standup")
        self.assertRegex(show, r"extra slots +2026-12-24T15:30:00,2026-12-26T08:00:00Z\n")
        self.assertRegex(show, r"removed slots +2026-12-28T09:00:00,2026-12-25\n")

    def test_explain_says_which_exdate_removed_a_slot(self):
        self.add_holiday_task()
        out = self.ok("explain", "standup", "--at", "2026-12-25T08:00:00Z", faketime=T0)
        self.assertIn("is excluded by --exdate 2026-12-25.", out)
        out = self.ok("explain", "standup", "--at", "2026-12-28T08:00:00Z", faketime=T0)
        self.assertIn("is excluded by --exdate 2026-12-28T09:00:00.", out)
        self.assertNotIn("excluded", self.ok("explain", "standup", "--at", "2026-12-24T14:30:00Z", faketime=T0))

    def test_forecast_and_backfill_count_the_added_slots_and_not_the_removed(self):
        self.add_holiday_task()
        day = self.json_of("forecast", "--window", "30d", faketime="2026-12-24 00:00:00")
        # From the 24th to 22 January: 30 days at 09:00, the 25th and 28th removed, 15:30 on the 24th added.
        self.assertEqual(sum(b["starts"] for b in day["buckets"]), 29)
        listed = self.json_of("backfill", "standup", "--from", "2026-12-23T12:00:00Z", "--until",
                              "2026-12-29T12:00:00Z", "--dry-run", faketime="2027-01-05 12:00:00")
        self.assertEqual([slot["scheduled_at"] for slot in listed], [
            "2026-12-24T08:00:00Z", "2026-12-24T14:30:00Z", "2026-12-26T08:00:00Z", "2026-12-27T08:00:00Z",
            "2026-12-29T08:00:00Z"])

    def test_every_and_rrule_take_them_too(self):
        # Without --tz, in UTC; the removed day takes the extra slot on it too (RFC 5545).
        self.add("poll", "--every", "6h", "--phase", "0", "--exdate", "2026-12-21",
                 "--rdate", "2026-12-21T07:00,2026-12-22T07:00", "--", "true", faketime=T0)
        self.assertEqual(self.preview("poll", 4), [
            "2026-12-20T18:00:00Z", "2026-12-22T00:00:00Z", "2026-12-22T06:00:00Z", "2026-12-22T07:00:00Z"])
        self.add("monthly", "--rrule", "FREQ=MONTHLY;BYMONTHDAY=1", "--dtstart", "2027-01-01T06:00:00",
                 "--tz", "Asia/Tokyo", "--exdate", "2027-02-01", "--", "true", faketime=T0)
        self.assertEqual(self.preview("monthly", 3), [
            "2026-12-31T21:00:00Z", "2027-02-28T21:00:00Z", "2027-03-31T21:00:00Z"])

    def test_bad_dates_are_refused_naming_the_option_and_the_value_and_nothing_is_written(self):
        many = ",".join(f"2027-01-01T{hour:02}:{minute:02}" for hour in range(24) for minute in range(60))[:1001 * 17 - 1]
        cases = [
            (["--rdate", "2026-12-25"], ["--rdate", '"2026-12-25" is not a date and time']),
            (["--exdate", "christmas"], ["--exdate", '"christmas" is not a date and time']),
            (["--exdate", "2026-12-24T09:00,"], ["--exdate", '"" is not a date and time']),
            (["--rdate", "2026-02-30T09:00"], ["--rdate", '"2026-02-30T09:00"']),
            (["--rdate", many], ["--rdate", "more than 1000 dates"]),
        ]
        for options, fragments in cases:
            code, _, err = self.run_taskd("add", "bad", *BERLIN_NINE, *options, "--", "true", faketime=T0)
            self.assertEqual(code, 65, err)
            self.assertOneErrorLine(err, *fragments)
        code, _, err = self.run_taskd("add", "bad", "--manual", "--rdate", "2026-12-24T09:00", "--", "true")
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, "--rdate needs a schedule of slots")
        self.assertEqual(self.tasks(), [])

    def test_edit_sets_and_clears_them(self):
        self.add("standup", *BERLIN_NINE, "--", "true", faketime=T0)
        self.ok("edit", "standup", "--exdate", "2026-12-21", faketime=T0)
        self.assertEqual(self.task("standup", faketime=T0)["next_run_at"], "2026-12-22T08:00:00Z")
        code, _, err = self.run_taskd("edit", "standup", "--rdate", "soon", faketime=T0)
        self.assertEqual(code, 65, err)
        self.assertEqual(self.task("standup", faketime=T0)["exdate"], "2026-12-21")
        self.ok("edit", "standup", "--exdate", "", faketime=T0)
        task = self.task("standup", faketime=T0)
        self.assertEqual((task["exdate"], task["next_run_at"]), ("", "2026-12-21T08:00:00Z"))

    def test_export_writes_arrays_that_apply_reads_back(self):
        self.add_holiday_task()
        exported = self.ok("export")
        self.assertIn('rdate = ["2026-12-24T15:30:00", "2026-12-26T08:00:00Z"]\n', exported)
        self.assertIn('exdate = ["2026-12-28T09:00:00", "2026-12-25"]\n', exported)
        path = os.path.join(self.tmp, "exported.toml")
        with open(path, "w") as f:
            f.write(exported)
        self.assertIn("0 added, 0 changed, 0 removed, 1 unchanged", self.ok("apply", path, faketime=T0))
        self.ok("rm", "standup")
        self.ok("apply", path, faketime=T0)
        self.assertEqual(self.preview("standup", 8)[4:], [
            "2026-12-24T14:30:00Z", "2026-12-26T08:00:00Z", "2026-12-27T08:00:00Z", "2026-12-29T08:00:00Z"])
        with open(path, "w") as f:
            f.write('[[task]]\nname = "x"\ncommand = "true"\nevery = "1h"\nexdate = "2026-12-25"\n')
        code, _, err = self.run_taskd("apply", path)
        self.assertEqual(code, 65, err)
        self.assertIn("exdate", err)
        self.assertIn("an array of strings", err)


ICALENDAR = """DTSTART;TZID=Europe/Berlin:20261221T090000
RRULE:FREQ=DAILY;COUNT=10
RDATE:20261224T143000Z
exdate;tzid=Europe/Berlin:20261223T090000,20261228T090000
EXDATE;VALUE=DATE:20261225
"""


class ICalendarRRuleTest(TaskdTestCase):
    def test_the_icalendar_form_is_stored_as_the_rule_dtstart_zone_and_dates(self):
        self.add("standup", "--rrule", ICALENDAR, "--", "true", faketime=T0)
        task = self.task("standup")
        self.assertEqual((task["schedule"], task["tz"], task["dtstart"], task["rdate"], task["exdate"]),
                         ({"kind": "rrule", "spec": "FREQ=DAILY;COUNT=10"}, "Europe/Berlin", "2026-12-21T09:00:00",
                          "2026-12-24T14:30:00Z", "2026-12-23T09:00:00,2026-12-28T09:00:00,2026-12-25"))
        starts = [line.split()[0] for line in self.ok("preview", "standup", "--count", "20", "--utc",
                                                     faketime=T0).splitlines()]
        self.assertEqual(starts, [
            "2026-12-21T08:00:00Z", "2026-12-22T08:00:00Z", "2026-12-24T08:00:00Z", "2026-12-24T14:30:00Z",
            "2026-12-26T08:00:00Z", "2026-12-27T08:00:00Z", "2026-12-29T08:00:00Z", "2026-12-30T08:00:00Z"])

    def test_a_task_file_gives_it_as_a_multi_line_string_and_export_writes_it_back_spread(self):
        path = os.path.join(self.tmp, "tasks.toml")
        with open(path, "w") as f:
            f.write(f'[[task]]\nname = "standup"\ncommand = "true"\nrrule = """\n{ICALENDAR}"""\n')
        self.ok("apply", path, faketime=T0)
        exported = self.ok("export")
        self.assertIn('rrule = "FREQ=DAILY;COUNT=10"\n', exported)
        self.assertIn('exdate = ["2026-12-23T09:00:00", "2026-12-28T09:00:00", "2026-12-25"]\n', exported)
        self.assertIn("0 added, 0 changed, 0 removed, 1 unchanged", self.ok("apply", path, faketime=T0))

    def test_bad_icalendar_text_is_refused_naming_the_line_and_nothing_is_written(self):
        cases = [
            ("DTSTART:20261221T090000\nRDATE:20261224", ["--rrule", "no RRULE line"]),
            ("DTSTART:20261221T090000\nRRULE:FREQ=DAILY\nRDATE;VALUE=DATE:20261224",
             ["--rrule", 'RDATE: "20261224" is a date without a time of day']),
            ("DTSTART:2026-12-21\nRRULE:FREQ=DAILY", ["--rrule", '"2026-12-21" is not an iCalendar date-time']),
            ("DTSTART:20261221T090000\nRRULE:FREQ=DAILY\nEXRULE:FREQ=WEEKLY", ["--rrule", "EXRULE", "not a line"]),
            ("DTSTART;TZID=Mars/Olympus:20261221T090000\nRRULE:FREQ=DAILY", ["--rrule", "Mars/Olympus"]),
            # a property without its value, read as the rule, is not read as the iCalendar form again
            ("RDATE", ["--rrule", '"RDATE" is not a rule', "NAME:VALUE"]),
            ("DTSTART:20261221T090000\nRRULE:DTSTART=1", ["--rrule", '"DTSTART=1" is not a rule']),
        ]
        for text, fragments in cases:
            code, _, err = self.run_taskd("add", "bad", "--rrule", text, "--", "true", faketime=T0)
            self.assertEqual(code, 65, err)
            self.assertOneErrorLine(err, *fragments)
        code, _, err = self.run_taskd("add", "bad", "--rrule", ICALENDAR, "--tz", "Asia/Tokyo", "--", "true")
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, "DTSTART is in Europe/Berlin and --tz is Asia/Tokyo")
        code, _, err = self.run_taskd("add", "bad", "--rrule", ICALENDAR, "--dtstart", "2026-12-21T09:00:00", "--",
                                      "true")
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, "DTSTART line and --dtstart")
        self.assertEqual(self.tasks(), [])


if __name__ == "__main__":
    unittest.main()
