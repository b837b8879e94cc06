"""--skip-calendar and --only-calendar: a task without slots on a calendar's
days, or with slots only on them, in the task's zone."""

import datetime
import hashlib
import os
import unittest

from taskd_test import TaskdTestCase

T0 = "2026-12-20 12:00:00"
BERLIN_NINE = ["--cron", "0 9 * * *", "--tz", "Europe/Berlin"]
XMAS = "2026-12-24 Christmas Eve\n2026-12-25 Christmas Day\n2026-12-28\n"


class CalendarTaskTest(TaskdTestCase):
    def calendar(self, name, text, *more, faketime=T0):
        path = os.path.join(self.tmp, f"{name}.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        self.ok("calendar", "add", name, "--dates", path, *more, faketime=faketime)

    def preview(self, name, count, faketime=T0):
        """The start times preview prints, without the slots it marks as skipped."""
        return [line.split()[0] for line in self.ok("preview", name, "--count", str(count), "--utc",
                                                   faketime=faketime).splitlines() if "(skipped: " not in line]

    def test_skip_calendar_takes_its_days_from_the_slots_and_show_names_it(self):
        self.calendar("xmas", XMAS)
        self.calendar("other", "2026-12-22\n")
        self.add("standup", *BERLIN_NINE, "--skip-calendar", "xmas,other", "--", "true", faketime=T0)
        self.assertEqual(self.preview("standup", 5), [
            "2026-12-21T08:00:00Z", "2026-12-23T08:00:00Z", "2026-12-26T08:00:00Z", "2026-12-27T08:00:00Z",
            "2026-12-29T08:00:00Z"])
        task = self.task("standup")
        self.assertEqual((task["skip_calendar"], task["only_calendar"]), ("other,xmas", ""))
        self.assertRegex(self.ok("show", "standup"), r"skip calendars +other,xmas\n")

    def test_only_calendar_keeps_its_days_alone_in_utc_for_every_without_tz(self):
        # 23:00 on the 21st in UTC is the 22nd in Berlin: --every without --tz reads the days in UTC.
        self.calendar("pay", "2026-12-21 payday\n2027-01-04 payday\n")
        self.add("payroll", "--every", "6h", "--phase", "5h", "--only-calendar", "pay", "--", "true", faketime=T0)
        self.assertEqual(self.preview("payroll", 5), [
            "2026-12-21T05:00:00Z", "2026-12-21T11:00:00Z", "2026-12-21T17:00:00Z", "2026-12-21T23:00:00Z",
            "2027-01-04T05:00:00Z"])
        self.assertEqual(self.task("payroll")["next_run_at"], "2026-12-21T05:00:00Z")

    def test_a_calendar_in_a_zone_whose_day_differs_from_utc_skips_the_local_day(self):
        # Auckland is 13 h ahead in December: 09:00 on the 25th is 20:00 UTC on the 24th.
        self.calendar("xmas", XMAS)
        self.add("nz", "--cron", "0 9 * * *", "--tz", "Pacific/Auckland", "--skip-calendar", "xmas", "--",
                 "true", faketime=T0)
        self.assertEqual(self.preview("nz", 4), [
            "2026-12-20T20:00:00Z", "2026-12-21T20:00:00Z", "2026-12-22T20:00:00Z", "2026-12-25T20:00:00Z"])
        # Los Angeles is 8 h behind: 23:30 on the 25th is 07:30 UTC on the 26th.
        self.add("la", "--cron", "30 23 * * *", "--tz", "America/Los_Angeles", "--skip-calendar", "xmas", "--",
                 "true", faketime=T0)
        self.assertEqual(self.preview("la", 8), [
            "2026-12-21T07:30:00Z", "2026-12-22T07:30:00Z", "2026-12-23T07:30:00Z", "2026-12-24T07:30:00Z",
            "2026-12-27T07:30:00Z", "2026-12-28T07:30:00Z", "2026-12-30T07:30:00Z", "2026-12-31T07:30:00Z"])

    def test_a_calendar_and_a_dst_change_together(self):
        # Berlin's clocks go forward on 2027-03-28: the 27th is +01:00, the 29th +02:00.
        self.calendar("spring", "2027-03-28 clocks change\n")
        self.add("early", "--cron", "30 0 * * *", "--tz", "Europe/Berlin", "--skip-calendar", "spring", "--",
                 "true", faketime="2027-03-26 12:00:00")
        self.assertEqual(self.preview("early", 3, faketime="2027-03-26 12:00:00"), [
            "2027-03-26T23:30:00Z", "2027-03-28T22:30:00Z", "2027-03-29T22:30:00Z"])

    def test_an_unknown_calendar_is_refused_at_add_edit_and_apply_and_nothing_is_written(self):
        code, out, err = self.run_taskd("add", "t", *BERLIN_NINE, "--skip-calendar", "nope", "--", "true")
        self.assertEqual((code, out), (65, ""))
        self.assertOneErrorLine(err, "t: --skip-calendar nope: no calendar named \"nope\"")
        code, _, err = self.run_taskd("add", "t", *BERLIN_NINE, "--only-calendar", "nope", "--", "true")
        self.assertEqual(code, 65)
        self.assertIn("--only-calendar nope", err)
        self.assertEqual(self.tasks(), [])
        self.add("t", *BERLIN_NINE, "--", "true", faketime=T0)
        code, _, err = self.run_taskd("edit", "t", "--skip-calendar", "nope")
        self.assertEqual(code, 65)
        self.assertEqual(self.task("t")["skip_calendar"], "")
        path = os.path.join(self.tmp, "tasks.toml")
        with open(path, "w") as f:
            f.write('[[task]]\nname = "u"\ncommand = "true"\nevery = "1h"\nskip_calendar = ["nope"]\n')
        code, _, err = self.run_taskd("apply", path)
        self.assertEqual(code, 65, err)
        self.assertIn('no calendar named "nope"', err)
        self.assertEqual([t["name"] for t in self.tasks()], ["t"])
        for bad in ("a,,b", "a b"):
            code, _, err = self.run_taskd("add", "v", *BERLIN_NINE, "--skip-calendar", bad, "--", "true")
            self.assertEqual(code, 65)
            self.assertIn("is not a calendar's name", err)
        code, _, err = self.run_taskd("add", "v", "--manual", "--skip-calendar", "x", "--", "true")
        self.assertEqual(code, 65)
        self.assertIn("--skip-calendar needs a schedule of slots", err)

    def test_edit_sets_and_clears_them(self):
        self.calendar("xmas", XMAS)
        self.add("standup", *BERLIN_NINE, "--", "true", faketime="2026-12-23 12:00:00")
        self.ok("edit", "standup", "--skip-calendar", "xmas", faketime="2026-12-23 12:00:00")
        self.assertEqual(self.task("standup")["next_run_at"], "2026-12-26T08:00:00Z")
        self.ok("edit", "standup", "--skip-calendar", "", faketime="2026-12-23 12:00:00")
        self.assertEqual(self.task("standup")["next_run_at"], "2026-12-24T08:00:00Z")

    def test_rm_is_refused_while_a_task_uses_the_calendar_and_list_names_them(self):
        self.calendar("xmas", XMAS)
        self.calendar("x_mas", "2026-12-01\n")
        self.add("a", *BERLIN_NINE, "--skip-calendar", "xmas", "--", "true", faketime=T0)
        self.add("b", "--every", "1h", "--only-calendar", "xmas", "--", "true", faketime=T0)
        listed = {c["name"]: c["tasks"] for c in self.json_of("calendar", "list")}
        self.assertEqual(listed, {"x_mas": [], "xmas": ["a", "b"]})
        self.assertRegex(self.ok("calendar", "list"), r"xmas +3 +2026-12-24 +2026-12-28 +a,b\n")
        code, out, err = self.run_taskd("calendar", "rm", "xmas")
        self.assertEqual((code, out), (65, ""))
        self.assertOneErrorLine(err, '"xmas" is in use by a, b')
        self.ok("calendar", "rm", "x_mas")
        self.ok("edit", "a", "--skip-calendar", "")
        self.ok("edit", "b", "--only-calendar", "")
        self.ok("calendar", "rm", "xmas")

    def test_replace_plans_the_tasks_that_use_the_calendar_again(self):
        self.calendar("xmas", XMAS)
        self.add("standup", *BERLIN_NINE, "--skip-calendar", "xmas", "--", "true", faketime="2026-12-23 12:00:00")
        self.add("other", *BERLIN_NINE, "--", "true", faketime="2026-12-23 12:00:00")
        self.assertEqual(self.task("standup")["next_run_at"], "2026-12-26T08:00:00Z")
        self.calendar("xmas", "2026-12-25\n", "--replace", faketime="2026-12-23 12:00:00")
        self.assertEqual(self.task("standup")["next_run_at"], "2026-12-24T08:00:00Z")
        self.assertEqual(self.preview("standup", 3, faketime="2026-12-23 12:00:00"), [
            "2026-12-24T08:00:00Z", "2026-12-26T08:00:00Z", "2026-12-27T08:00:00Z"])
        self.assertEqual(self.task("other")["next_run_at"], "2026-12-24T08:00:00Z")

    def test_the_days_are_kept_once_beside_the_tasks_and_go_with_the_last_task(self):
        # A task row is rewritten at each claim and end: it names its days by their SHA-256 instead
        # of carrying them, and tasks with the same days share one copy.
        def kept():
            return self.sql("SELECT digest, days FROM calendar_day_sets ORDER BY digest")

        def digest(days):
            return hashlib.sha256(days.encode()).hexdigest()

        self.calendar("xmas", XMAS)
        self.add("a", *BERLIN_NINE, "--skip-calendar", "xmas", "--", "true", faketime=T0)
        self.add("b", *BERLIN_NINE, "--skip-calendar", "xmas", "--", "true", faketime=T0)
        self.add("plain", *BERLIN_NINE, "--", "true", faketime=T0)
        days = "skip 2026-12-24,+1,+3"
        self.assertEqual(kept(), [(digest(days), days)])
        self.assertEqual(self.sql("SELECT name, calendar_days_digest FROM tasks ORDER BY name"),
                         [("a", digest(days)), ("b", digest(days)), ("plain", "")])
        self.calendar("xmas", "2026-12-25\n", "--replace", faketime=T0)
        self.assertEqual(kept(), [(digest("skip 2026-12-25"), "skip 2026-12-25")])
        self.ok("rm", "a")
        self.assertEqual(len(kept()), 1)
        self.ok("rm", "b")
        self.assertEqual(kept(), [])

    def test_a_task_naming_days_the_database_lacks_is_malformed_and_edit_mends_it(self):
        self.calendar("xmas", XMAS)
        self.add("a", *BERLIN_NINE, "--skip-calendar", "xmas", "--", "true", faketime=T0)
        self.sql("UPDATE tasks SET calendar_days_digest = 'f00d'")
        self.assertRegex(self.ok("show", "a"), r"\nmalformed +calendar_days: the days its calendar_days_digest names "
                                               r"are not in the database\n")
        self.ok("edit", "a", "--skip-calendar", "xmas", faketime=T0)
        self.assertEqual(self.preview("a", 2), ["2026-12-21T08:00:00Z", "2026-12-22T08:00:00Z"])

    def test_explain_names_the_day_and_its_calendar(self):
        self.calendar("xmas", XMAS)
        self.calendar("pay", "2026-12-21\n")
        self.add("standup", *BERLIN_NINE, "--skip-calendar", "xmas", "--", "true", faketime=T0)
        out = self.ok("explain", "standup", "--at", "2026-12-25T08:00:00Z", faketime=T0)
        self.assertIn("2026-12-25 is Christmas Day in xmas (--skip-calendar). Its SKIPPED run is written when the "
                      "task's next slot is served.", out)
        out = self.ok("explain", "standup", "--at", "2026-12-28T08:00:00Z", faketime=T0)
        self.assertIn("2026-12-28 is a day of xmas", out)
        self.assertNotIn("xmas", self.ok("explain", "standup", "--at", "2026-12-23T08:00:00Z", faketime=T0))
        self.add("payroll", *BERLIN_NINE, "--only-calendar", "pay", "--", "true", faketime=T0)
        out = self.ok("explain", "payroll", "--at", "2026-12-22T08:00:00Z", faketime=T0)
        self.assertIn("2026-12-22 is not a day of pay (--only-calendar)", out)
        self.add("late", *BERLIN_NINE, "--only-calendar", "pay", "--", "true", faketime="2026-12-22 12:00:00")
        self.assertIsNone(self.task("late")["next_run_at"])
        out = self.ok("explain", "late", faketime="2026-12-22 12:00:00")
        self.assertIn("none of its slots falls on a day of --only-calendar", out)

    def test_forecast_and_backfill_leave_the_days_out(self):
        self.calendar("xmas", XMAS)
        self.add("standup", *BERLIN_NINE, "--skip-calendar", "xmas", "--", "true", faketime=T0)
        day = self.json_of("forecast", "--window", "10d", faketime="2026-12-21 00:00:00")
        self.assertEqual(sum(b["starts"] for b in day["buckets"]), 7)
        listed = self.json_of("backfill", "standup", "--from", "2026-12-23T12:00:00Z", "--until",
                              "2026-12-29T12:00:00Z", "--dry-run", faketime="2027-01-05 12:00:00")
        self.assertEqual([slot["scheduled_at"] for slot in listed], [
            "2026-12-26T08:00:00Z", "2026-12-27T08:00:00Z", "2026-12-29T08:00:00Z"])

    def test_check_does_not_count_a_calendar_s_days_against_alert_after(self):
        # A daily 09:00 report that succeeded on the 23rd; the 24th, 25th and 28th are holidays.
        self.calendar("xmas", XMAS)
        self.add("report", *BERLIN_NINE, "--alert-after", "2d", "--skip-calendar", "xmas", "--", "true",
                 faketime="2026-12-23 07:00:00")
        self.run_once(faketime="2026-12-23 08:00:01")
        self.assertEqual(self.task("report")["last_succeeded_at"], "2026-12-23T08:00:01.000Z")
        # Three days later, two of them holidays: one day counts.
        code, out, err = self.run_taskd("check", faketime="2026-12-26 08:00:02")
        self.assertEqual((code, err), (0, ""), out)
        self.ok("edit", "report", "--skip-calendar", "", faketime="2026-12-26 08:00:02")
        code, out, err = self.run_taskd("check", faketime="2026-12-26 08:00:02")
        self.assertEqual(code, 2, out)
        self.assertIn("CRITICAL report: no success for 3d1s (alert after 2d; last success 2026-12-23", out)

    def skipped(self, name):
        return [(r["scheduled_at"], r["reason"]) for r in self.history(name, "--status", "skipped")]

    def test_the_slot_after_the_holidays_writes_a_skipped_row_for_each_of_them(self):
        self.calendar("xmas", XMAS)
        self.add("standup", "--cron", "0 9 * * 1-5", "--tz", "Europe/Berlin", "--skip-calendar", "xmas", "--",
                 "true", faketime="2026-12-23 07:00:00")
        self.run_once(faketime="2026-12-23 08:00:01")
        # On a holiday nothing is due: its row comes with the next slot served.
        self.run_once(faketime="2026-12-25 08:00:01")
        self.assertEqual(self.skipped("standup"), [])
        self.run_once(faketime="2026-12-29 08:00:01")
        self.assertEqual(sorted(self.skipped("standup")), [
            ("2026-12-24T08:00:00Z", "slot 2026-12-24T08:00:00Z skipped: 2026-12-24 is Christmas Eve in xmas"),
            ("2026-12-25T08:00:00Z", "slot 2026-12-25T08:00:00Z skipped: 2026-12-25 is Christmas Day in xmas"),
            ("2026-12-28T08:00:00Z", "slot 2026-12-28T08:00:00Z skipped: 2026-12-28 is a day of xmas")])
        self.run_once(faketime="2026-12-30 08:00:01")
        self.assertEqual(len(self.skipped("standup")), 3)
        self.assertEqual([r["status"] for r in self.history("standup")].count("succeeded"), 3)
        table = self.ok("history", "standup", "--status", "skipped", faketime="2026-12-30 08:00:02")
        self.assertIn("2026-12-25 is Christmas Day in xmas", table)
        # explain on a holiday points at its row.
        told = self.ok("explain", "standup", "--at", "2026-12-25T08:00:00Z", faketime="2026-12-30 08:00:02")
        row = [r["id"] for r in self.history("standup", "--status", "skipped")
               if r["scheduled_at"] == "2026-12-25T08:00:00Z"][0]
        self.assertIn(f"2026-12-25 is Christmas Day in xmas (--skip-calendar). Run {row} records the day", told)
        # The rows are no part of the story of the slot before the holidays.
        told = self.ok("explain", "standup", "--at", "2026-12-23T08:00:00Z", faketime="2026-12-30 08:00:02")
        self.assertIn("succeeded", told)
        self.assertNotIn("xmas", told)

    def test_two_ticks_racing_after_a_holiday_write_its_row_once(self):
        self.calendar("xmas", "2026-12-25 Christmas Day\n")
        self.add("standup", "--cron", "0 9 * * 1-5", "--tz", "Europe/Berlin", "--skip-calendar", "xmas", "--",
                 "true", faketime="2026-12-24 07:00:00")
        self.run_once(faketime="2026-12-24 08:00:01")
        ticks = [self.popen_taskd("run-once", faketime="2026-12-28 08:00:01") for _ in range(2)]
        for tick in ticks:
            out, err = tick.communicate(timeout=60)
            self.assertEqual((tick.returncode, out), (0, ""), err)
        self.assertEqual(self.skipped("standup"), [
            ("2026-12-25T08:00:00Z", "slot 2026-12-25T08:00:00Z skipped: 2026-12-25 is Christmas Day in xmas")])

    def test_a_minutely_task_gets_one_row_for_the_whole_day(self):
        self.calendar("xmas", "2026-12-25 Christmas Day\n")
        self.add("tick", "--cron", "* * * * *", "--tz", "Europe/Berlin", "--skip-calendar", "xmas", "--", "true",
                 faketime="2026-12-24 22:58:30")
        self.run_once(faketime="2026-12-24 22:59:01")
        self.run_once(faketime="2026-12-25 23:00:01")  # 00:00 on the 26th in Berlin
        self.assertEqual(self.skipped("tick"), [
            ("2026-12-24T23:00:00Z", "1440 slots from 2026-12-24T23:00:00Z to 2026-12-25T22:59:00Z skipped: "
                                     "2026-12-25 is Christmas Day in xmas")])

    def test_the_rows_a_tick_writes_for_skipped_days_are_bounded(self):
        first = datetime.date(2027, 1, 2)
        self.calendar("long", "".join("%s closed\n" % (first + datetime.timedelta(days=i)) for i in range(150)),
                      faketime="2027-01-01 08:00:00")
        self.add("daily", "--cron", "0 9 * * *", "--tz", "UTC", "--skip-calendar", "long", "--", "true",
                 faketime="2027-01-01 08:00:00")
        self.run_once(faketime="2027-01-01 09:00:01")
        self.run_once(faketime="2027-06-01 09:00:01")
        rows = sorted(self.skipped("daily"))
        self.assertEqual(len(rows), 101)
        self.assertEqual(rows[0][1], "slot 2027-01-02T09:00:00Z skipped: 2027-01-02 is closed in long")
        self.assertEqual(rows[99][1], "slot 2027-04-11T09:00:00Z skipped: 2027-04-11 is closed in long")
        self.assertEqual(rows[100][1], "slots on 50 more days from 2027-04-12T09:00:00Z to 2027-05-31T09:00:00Z "
                                       "skipped: days of long (--skip-calendar)")

    def test_preview_marks_the_slots_a_calendar_removes_without_counting_them(self):
        self.calendar("xmas", XMAS)
        self.add("standup", *BERLIN_NINE, "--skip-calendar", "xmas", "--", "true", faketime=T0)
        out = self.ok("preview", "standup", "--count", "5", "--utc", faketime=T0).splitlines()
        self.assertEqual(out, [
            "2026-12-21T08:00:00Z", "2026-12-22T08:00:00Z", "2026-12-23T08:00:00Z",
            "2026-12-24T08:00:00Z  (skipped: 2026-12-24 is Christmas Eve in xmas)",
            "2026-12-25T08:00:00Z  (skipped: 2026-12-25 is Christmas Day in xmas)",
            "2026-12-26T08:00:00Z", "2026-12-27T08:00:00Z"])
        # --json lists the start times alone: each element is a time.
        listed = self.json_of("preview", "standup", "--count", "5", "--from", "2026-12-26T12:00:00Z", faketime=T0)
        self.assertEqual(listed, ["2026-12-27T08:00:00Z", "2026-12-29T08:00:00Z", "2026-12-30T08:00:00Z",
                                  "2026-12-31T08:00:00Z", "2027-01-01T08:00:00Z"])
        # A day of many slots is one line, from its first removed slot to its last.
        self.add("quarterly", "--cron", "*/15 * * * *", "--tz", "Europe/Berlin", "--skip-calendar", "xmas", "--",
                 "true", faketime=T0)
        out = self.ok("preview", "quarterly", "--count", "2", "--from", "2026-12-24T22:40:00Z", "--utc",
                      faketime=T0).splitlines()
        self.assertEqual(out, [
            "2026-12-24T22:45:00Z  (skipped: 2026-12-24 is Christmas Eve in xmas)",
            "2026-12-24T23:00:00Z  (skipped, and each slot to 2026-12-25T22:45:00Z: 2026-12-25 is Christmas Day in "
            "xmas)",
            "2026-12-25T23:00:00Z", "2026-12-25T23:15:00Z"])
        # A task without a calendar has no marks.
        self.add("plain", *BERLIN_NINE, "--", "true", faketime=T0)
        self.assertNotIn("skipped", self.ok("preview", "plain", "--count", "5", faketime=T0))

    def test_export_writes_the_keys_that_apply_reads_back(self):
        self.calendar("xmas", XMAS)
        self.calendar("pay", "2026-12-21\n")
        self.add("a", *BERLIN_NINE, "--skip-calendar", "xmas,pay", "--", "true", faketime=T0)
        self.add("b", *BERLIN_NINE, "--only-calendar", "pay", "--", "true", faketime=T0)
        exported = self.ok("export")
        self.assertIn('skip_calendar = ["pay", "xmas"]\n', exported)
        self.assertIn('only_calendar = "pay"\n', exported)
        path = os.path.join(self.tmp, "exported.toml")
        with open(path, "w") as f:
            f.write(exported)
        self.assertIn("0 added, 0 changed, 0 removed, 2 unchanged", self.ok("apply", path, faketime=T0))
        self.ok("rm", "a")
        self.ok("apply", path, faketime=T0)
        self.assertEqual(self.preview("a", 2), ["2026-12-22T08:00:00Z", "2026-12-23T08:00:00Z"])

    def test_weekdays_except_the_holidays_of_python_holidays(self):
        try:
            import holidays
        except ImportError:
            self.skipTest("SKIPPED: no python3-holidays here")
        first, last = datetime.date(2027, 1, 1), datetime.date(2028, 12, 31)
        days = holidays.CountryHoliday("DE", years=[2027, 2028])
        self.calendar("de", "".join(f"{day} {name}\n" for day, name in sorted(days.items())))
        self.add("report", "--cron", "0 9 * * 1-5", "--tz", "Europe/Berlin", "--skip-calendar", "de", "--",
                 "true", faketime="2026-12-31 12:00:00")
        weekdays = [first + datetime.timedelta(n) for n in range((last - first).days + 1)]
        weekdays = [day for day in weekdays if day.weekday() < 5]
        expected = [day for day in weekdays if day not in days]
        self.assertGreater(len(weekdays) - len(expected), 10)
        listed = self.json_of("preview", "report", "--count", str(len(expected)), faketime="2026-12-31 12:00:00")
        utc = lambda text: datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
        slots = [utc(s) for s in listed]
        # 09:00 in Berlin is 08:00 or 07:00 UTC: the same day.
        self.assertEqual([s.date() for s in slots], expected)
        self.assertTrue(all(s.hour in (7, 8) for s in slots))
        # The holidays on weekdays are the slots preview marks, each with its name.
        lines = self.ok("preview", "report", "--count", str(len(expected)), "--utc",
                        faketime="2026-12-31 12:00:00").splitlines()
        marked = [line.split("  (skipped: ") for line in lines if "  (skipped: " in line]
        self.assertEqual([utc(slot).date() for slot, _ in marked], [day for day in weekdays if day in days])
        self.assertTrue(all(why.endswith(" in de)") for _, why in marked))

if __name__ == "__main__":
    unittest.main()
