"""Schedules from the command line: cron and RRULE in a zone, jitter,
preview (which must agree with what the scheduler does) and forecast."""

import os
import unittest

from taskd_test import TaskdTestCase, parse_time


class ScheduleTest(TaskdTestCase):
    def preview(self, *args, **kwargs):
        """The start times preview prints, without what it says of DST changes."""
        return [line.split()[0] for line in self.ok("preview", *args, **kwargs).splitlines()]

    def test_cron_task_waits_for_its_slot_in_its_zone(self):
        self.add("quarter", "--cron", "*/15 * * * *", "--tz", "Asia/Kolkata", "--", "true",
                 faketime="2026-11-21 14:07:00")
        task = self.task("quarter")
        self.assertEqual(task["schedule"], {"kind": "cron", "spec": "*/15 * * * *"})
        self.assertEqual(task["tz"], "Asia/Kolkata")
        self.assertEqual(task["next_run_at"], "2026-11-21T14:15:00Z")

    def test_a_year_field_runs_in_its_years_and_one_whose_years_have_passed_is_refused(self):
        self.add("launch", "--cron", "0 0 12 1 * * 2027-2028", "--tz", "UTC", "--", "true",
                 faketime="2026-11-21 14:07:00")
        self.assertEqual(self.task("launch")["next_run_at"], "2027-01-01T12:00:00Z")
        starts = self.preview("launch", "--count", "30", faketime="2026-11-21 14:07:00")
        self.assertEqual((len(starts), starts[-1]), (24, "2028-12-01T12:00:00Z"))  # two years of months, then none
        for expression in ("0 0 12 * * * 2025", "0 0 0 29 2 * 2027"):
            code, _, err = self.run_taskd("add", "past", "--cron", expression, "--", "true",
                                          faketime="2026-11-21 14:07:00")
            self.assertEqual(code, 65, err)
            self.assertOneErrorLine(err, f'cron: field 7 (year) of "{expression}": no slot from now on')
        self.assertEqual([task["name"] for task in self.tasks()], ["launch"])

    def test_zone_defaults_to_TZ_and_is_stored_with_the_task(self):
        env = dict(self.env, TZ="America/New_York")
        self.add("nightly", "--cron", "0 3 * * *", "--", "true", env=env, faketime="2026-11-21 12:00:00")
        task = self.task("nightly")
        self.assertEqual(task["tz"], "America/New_York")
        self.assertEqual(task["next_run_at"], "2026-11-22T08:00:00Z")  # 03:00 EST

    def test_TZ_is_read_as_glibc_reads_it_and_one_that_names_no_zone_is_refused(self):
        for tz in (":Europe/Berlin", "/usr/share/zoneinfo/Europe/Berlin"):
            self.add("daily", "--cron", "0 3 * * *", "--", "true", env=dict(self.env, TZ=tz))
            self.assertEqual(self.task("daily")["tz"], "Europe/Berlin", tz)
            self.ok("rm", "daily")
        code, _, err = self.run_taskd("add", "daily", "--cron", "0 3 * * *", "--", "true",
                                      env=dict(self.env, TZ="Europe/Berlinn"))
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, 'TZ="Europe/Berlinn": unknown time zone "Europe/Berlinn"')
        self.assertEqual(self.tasks(), [])

    def test_last_day_last_weekday_and_nth_weekday_from_crontab_to_export(self):
        crontab = os.path.join(self.tmp, "crontab")
        with open(crontab, "w") as f:
            f.write("0 3 L * * /usr/bin/backup\n30 17 LW * * /usr/bin/payroll\n0 9 * * MON#1 /usr/bin/report\n")
        self.ok("import-crontab", crontab, env=dict(self.env, TZ="UTC"), faketime="2026-11-21 12:00:00")
        self.assertEqual(self.task("backup")["next_run_at"], "2026-11-30T03:00:00Z")
        self.assertEqual(self.task("payroll")["next_run_at"], "2026-11-30T17:30:00Z")  # a Monday
        self.assertEqual(self.task("report")["next_run_at"], "2026-12-07T09:00:00Z")
        self.assertEqual(self.preview("--cron", "0 0 L-1 * 5L", "--tz", "UTC", "--from", "2026-11-21T00:00:00Z",
                                      "--count", "3"),
                         ["2026-11-27T00:00:00Z", "2026-11-29T00:00:00Z", "2026-12-25T00:00:00Z"])
        exported = os.path.join(self.tmp, "tasks.toml")
        with open(exported, "w") as f:
            f.write(self.ok("export"))
        copy = os.path.join(self.tmp, "copy.db")
        self.ok("apply", exported, db=copy, faketime="2026-11-21 12:00:00")
        self.assertEqual(self.ok("export", db=copy), self.ok("export"))
        code, _, err = self.run_taskd("add", "x", "--cron", "0 0 * * 5#9", "--", "true")
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, "field 5 (day of week)", "5#9", "N from 1 to 5")

    def test_a_fixed_time_in_the_spring_gap_runs_once_right_after_it(self):
        times = self.preview("--cron", "30 2 * * *", "--tz", "Europe/Berlin", "--from", "2026-03-28T12:00:00Z",
                             "--count", "2")
        self.assertEqual(times, ["2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"])

    def test_every_with_phase_0_runs_on_the_hour_of_its_zone(self):
        self.add("hourly", "--every", "1h", "--phase", "0", "--tz", "Asia/Kolkata", "--", "true",
                 faketime="2026-11-21 14:07:00")
        task = self.task("hourly")
        self.assertEqual(task["tz"], "Asia/Kolkata")
        self.assertEqual(task["phase"], 0)
        self.assertEqual(task["next_run_at"], "2026-11-21T14:30:00Z")  # 20:00 IST
        self.assertIn("every 1h (Asia/Kolkata)", self.ok("show", "hourly"))
        self.assertIn("every 1h (Asia/Kolkata)", self.ok("list"))
        self.assertEqual(self.preview("--every", "6h", "--phase", "15m", "--tz", "Europe/Berlin",
                                      "--from", "2026-11-21T00:00:00Z", "--count", "2"),
                         ["2026-11-21T05:15:00Z", "2026-11-21T11:15:00Z"])  # 06:15 and 12:15 CET

    def test_preview_agrees_with_the_scheduler_on_a_wall_clock_grid_across_dst(self):
        # Every 6h at 02:00, 08:00... Berlin time: on 2026-03-29 02:00 does not exist.
        self.add("sixhourly", "--every", "6h", "--phase", "2h", "--tz", "Europe/Berlin", "--", "true",
                 faketime="2026-03-28 20:00:00")
        planned = self.preview("sixhourly", "--count", "2", faketime="2026-03-28 20:00:00")
        self.assertEqual(planned, ["2026-03-29T06:00:00Z", "2026-03-29T12:00:00Z"])
        self.assertEqual(self.task("sixhourly")["next_run_at"], planned[0])
        self.run_once(faketime="2026-03-29 06:00:01")
        self.assertEqual([r["scheduled_at"] for r in self.history("sixhourly")], [planned[0]])
        self.assertEqual(self.task("sixhourly")["next_run_at"], planned[1])

    def test_rrule_count_ends_the_schedule_and_show_says_so(self):
        self.add("twice", "--rrule", "FREQ=DAILY;COUNT=2", "--tz", "UTC", "--dtstart", "2026-11-21T15:00:00",
                 "--", "true", faketime="2026-11-21 14:00:00")
        self.assertEqual(self.preview("twice", faketime="2026-11-21 14:00:00"),
                         ["2026-11-21T15:00:00Z", "2026-11-22T15:00:00Z"])
        for day in ("2026-11-21 15:00:01", "2026-11-22 15:00:01"):
            self.run_once(faketime=day)
        self.assertEqual([r["status"] for r in self.history("twice")], ["succeeded", "succeeded"])
        self.assertIsNone(self.task("twice")["next_run_at"])
        self.assertIn("the schedule has ended", self.ok("show", "twice"))

    def test_rrules_are_computed_by_taskd_itself_with_setpos_below_a_month(self):
        # An empty libical.so.3 where the dynamic loader looks first: taskd, which once loaded
        # libical for RRULEs, must not need it.
        libs = os.path.join(self.tmp, "lib")
        os.mkdir(libs)
        open(os.path.join(libs, "libical.so.3"), "w").close()
        env = dict(self.env, LD_LIBRARY_PATH=libs)
        self.add("evening", "--rrule", "FREQ=DAILY;BYHOUR=9,17;BYSETPOS=-1", "--tz", "UTC",
                 "--dtstart", "2026-11-21T00:00:00", "--", "true", env=env)
        self.assertEqual(self.task("evening", env=env)["schedule"]["spec"], "FREQ=DAILY;BYHOUR=9,17;BYSETPOS=-1")
        self.assertEqual(self.preview("--rrule", "FREQ=DAILY;BYHOUR=9,17;BYSETPOS=-1", "--tz", "UTC", "--dtstart",
                                      "2026-11-21T00:00:00", "--from", "2026-11-21T12:00:00Z", "--count", "2", env=env),
                         ["2026-11-21T17:00:00Z", "2026-11-22T17:00:00Z"])

    def test_preview_agrees_with_the_scheduler_when_jittered(self):
        marker = os.path.join(self.tmp, "ran")
        self.add("jittery", "--every", "1h", "--phase", "0", "--jitter", "30m", "--shell", "--",
                 "touch " + marker, faketime="2026-11-21 13:30:00")
        first = self.preview("jittery", "--count", "1", faketime="2026-11-21 13:30:00")[0]
        self.assertNotEqual(first, "2026-11-21T14:00:00Z", "this name's first jitter is not zero")
        just_before = first.replace("T", " ").replace("Z", "")
        minute, second = just_before[:-3], int(just_before[-2:])
        # At the slot the run is queued but does not start; at its jittered time it does.
        self.run_once(faketime="2026-11-21 14:00:00")
        self.assertFalse(os.path.exists(marker))
        self.run_once(faketime=first.replace("T", " ").replace("Z", ""))
        self.assertTrue(os.path.exists(marker), "nothing ran at %s (slot 14:00, %s:%02d)" % (first, minute, second))
        run = self.history("jittery")[0]
        self.assertEqual(run["scheduled_at"], "2026-11-21T14:00:00Z")
        # faketime starts taskd's clock at `first` and lets it run: a slow
        # (sanitized, loaded) build may take a moment to get to the start.
        late = parse_time(run["started_at"]) - parse_time(first)
        self.assertTrue(0 <= late.total_seconds() < 5, "started %s, planned %s" % (run["started_at"], first))

    def test_forecast_counts_starts_per_bucket(self):
        # Slots 15 s into their buckets, so a clock a few seconds late (a slow
        # sanitizer build under faketime) changes nothing.
        for name, phase in (("a", "15s"), ("b", "15s"), ("c", "45s")):
            self.add(name, "--every", "1m", "--phase", phase, "--", "true", faketime="2026-11-21 14:00:00")
        chart = self.json_of("forecast", "--window", "2m", "--bucket", "30s", faketime="2026-11-21 14:00:00")
        self.assertEqual([b["starts"] for b in chart["buckets"]], [2, 1, 2, 1])
        self.assertEqual(chart["peak"], 2)
        self.assertEqual(chart["peak_at"], chart["buckets"][0]["start"])
        self.assertAlmostEqual(chart["mean"], 1.5)
        text = self.ok("forecast", "--window", "2m", "--bucket", "30s", faketime="2026-11-21 14:00:00")
        self.assertIn("peak 2 starts per 30s at 2026-11-21T14:00:", text)
        self.assertIn("mean 1.50", text)

    def test_the_default_phase_spreads_tasks_within_the_second(self):
        self.add("fast", "--every", "1s", "--", "true", faketime="2026-11-21 14:00:00.000")
        task = self.task("fast")
        self.assertEqual(task["phase"], 0.497)  # the stable hash of "fast", to the millisecond
        self.assertEqual(task["tolerance"], 0.1)
        self.assertEqual(task["next_run_at"], "2026-11-21T14:00:00.497Z")
        self.assertEqual(self.preview("fast", "--count", "2", faketime="2026-11-21 14:00:00.000"),
                         ["2026-11-21T14:00:00.497Z", "2026-11-21T14:00:01.497Z"])
        self.assertNotIn("phase", self.ok("export"))  # a default phase is not written out
        tasks_file = os.path.join(self.tmp, "tasks.toml")
        with open(tasks_file, "w") as out:
            out.writelines(f'[[task]]\nname = "t{i}"\nevery = "1s"\ncommand = ["true"]\n\n' for i in range(50))
        self.ok("apply", tasks_file)
        starts = {task["next_run_at"] for task in self.tasks() if task["name"].startswith("t")}
        self.assertGreater(len(starts), 45)  # 50 tasks every second, (almost) all at other instants

    def test_a_one_second_task_started_a_little_late_is_not_dropped_next_time(self):
        self.add("fast", "--every", "1s", "--", "true", faketime="2026-11-21 14:00:00.000")
        self.run_once(faketime="2026-11-21 14:00:00.547")  # 50 ms late
        self.run_once(faketime="2026-11-21 14:00:01.502")  # 955 ms later: within the 100 ms tolerance
        self.run_once(faketime="2026-11-21 14:00:02.540")
        self.run_once(faketime="2026-11-21 14:00:03.390")  # the slot 03.497 is not due yet
        runs = sorted(self.history("fast"), key=lambda run: run["scheduled_at"])
        self.assertEqual([(r["scheduled_at"], r["status"]) for r in runs],
                         [(f"2026-11-21T14:00:0{i}.497Z", "succeeded") for i in range(3)])

    def test_bad_schedules_are_refused_naming_what_and_where(self):
        cases = [
            (["--cron", "0 0 32 * *"], "field 3 (day of month)"),
            (["--cron", "0 0 30 2 *"], "never"),
            (["--cron", "* * *"], "cron"),
            (["--cron", "* * * * *", "--tz", "Mars/Olympus"], "Mars/Olympus"),
            (["--rrule", "FREQ=SOMETIMES"], "FREQ"),
            (["--rrule", "FREQ=DAILY", "--dtstart", "yesterday"], "--dtstart"),
            (["--every", "1m", "--jitter", "1m"], "--jitter"),
            (["--every", "7h", "--tz", "Europe/Berlin"], "--every 7h --tz Europe/Berlin"),
        ]
        for schedule, fragment in cases:
            with self.subTest(schedule=schedule):
                code, out, err = self.run_taskd("add", "x", *schedule, "--", "true")
                self.assertEqual(code, 65, err)
                self.assertOneErrorLine(err, fragment)
                self.assertFalse(os.path.exists(self.db))

    def test_schedule_options_that_do_not_go_together_are_usage_errors(self):
        for schedule in (["--every", "1m", "--cron", "* * * * *"], ["--cron", "* * * * *", "--phase", "0"],
                         ["--every", "1m", "--after-finish", "--tz", "UTC"], ["--every", "1m", "--dtstart", "2026-01-01T00:00:00"]):
            with self.subTest(schedule=schedule):
                code, _, err = self.run_taskd("add", "x", *schedule, "--", "true")
                self.assertEqual(code, 2, err)


if __name__ == "__main__":
    unittest.main()
