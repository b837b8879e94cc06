"""--dst-gap and --dst-repeat: what a schedule on a wall clock does at DST
changes (taskd(1), Daylight saving time). Europe/Berlin skips 02:00 to 03:00
on 2026-03-29 (at 01:00Z) and shows 02:00 to 03:00 twice on 2026-10-25 (from
00:00Z to 02:00Z)."""

import os
import textwrap
import unittest

from taskd_test import TaskdTestCase

NIGHTLY = ("--cron", "30 2 * * *", "--tz", "Europe/Berlin")
SPRING = "2026-03-28T00:00:00Z"
AUTUMN = "2026-10-24T00:00:00Z"


class DstTest(TaskdTestCase):
    def preview(self, from_, *args):
        return self.ok("preview", *NIGHTLY, "--from", from_, "--count", "3", *args).splitlines()

    def test_preview_of_the_spring_gap_for_each_gap_rule(self):
        run_after = ["2026-03-28T01:30:00Z",
                     "2026-03-29T01:00:00Z  (02:30 Europe/Berlin does not exist that day: runs at the end of the gap, "
                     "--dst-gap run-after, the default for a fixed hour)",
                     "2026-03-30T00:30:00Z"]
        self.assertEqual(self.preview(SPRING), run_after)
        self.assertEqual(self.preview(SPRING, "--dst-gap", "run-after"),
                         [line.replace(", the default for a fixed hour", "") for line in run_after])
        self.assertEqual(self.preview(SPRING, "--dst-gap", "skip"),
                         ["2026-03-28T01:30:00Z",
                          "2026-03-30T00:30:00Z  (02:30 Europe/Berlin did not exist on 2026-03-29: skipped, "
                          "--dst-gap skip)",
                          "2026-03-31T00:30:00Z"])

    def test_preview_of_the_autumn_repeat_for_each_repeat_rule(self):
        once = ["2026-10-24T00:30:00Z",
                "2026-10-25T00:30:00Z  (02:30 Europe/Berlin happens twice that day: runs at the first only, "
                "--dst-repeat once, the default for a fixed hour)",
                "2026-10-26T01:30:00Z"]
        self.assertEqual(self.preview(AUTUMN), once)
        self.assertEqual(self.preview(AUTUMN, "--dst-repeat", "once"),
                         [line.replace(", the default for a fixed hour", "") for line in once])
        self.assertEqual(self.preview(AUTUMN, "--dst-repeat", "twice"),
                         ["2026-10-24T00:30:00Z",
                          "2026-10-25T00:30:00Z  (02:30 Europe/Berlin happens twice that day: the first of two runs, "
                          "--dst-repeat twice)",
                          "2026-10-25T01:30:00Z  (02:30 Europe/Berlin happens twice that day: the second of two runs, "
                          "--dst-repeat twice)"])

    def test_preview_json_stays_a_list_of_start_times(self):
        for args, expected in (
                ((SPRING,), ["2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"]),
                ((SPRING, "--dst-gap", "skip"), ["2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z",
                                                 "2026-03-31T00:30:00Z"]),
                ((AUTUMN, "--dst-repeat", "twice"), ["2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z",
                                                     "2026-10-25T01:30:00Z"])):
            with self.subTest(args=args):
                out = self.json_of("preview", *NIGHTLY, "--count", "3", "--from", *args, db=False)
                self.assertEqual(out, expected)

    def test_a_clock_following_schedule_with_run_after_runs_once_after_the_gap(self):
        out = self.ok("preview", "--every", "15m", "--phase", "0", "--tz", "Europe/Berlin", "--from",
                      "2026-03-29T00:40:00Z", "--count", "3", "--dst-gap", "run-after").splitlines()
        self.assertEqual([line.split()[0] for line in out],
                         ["2026-03-29T00:45:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:15:00Z"])
        self.assertIn("02:00 Europe/Berlin does not exist that day: runs at the end of the gap", out[1])
        self.assertEqual(out[2], "2026-03-29T01:15:00Z")

    def test_the_rules_are_shown_edited_and_reset(self):
        self.add("nightly", *NIGHTLY, "--dst-gap", "skip", "--", "true")
        task = self.task("nightly")
        self.assertEqual((task["dst_gap"], task["dst_repeat"]), ("skip", None))
        self.assertIn("gap skip, repeat once (the default)", self.ok("show", "nightly"))
        self.ok("edit", "nightly", "--dst-repeat", "twice")
        task = self.task("nightly")
        self.assertEqual((task["dst_gap"], task["dst_repeat"]), ("skip", "twice"))
        self.ok("edit", "nightly", "--dst-gap", "", "--dst-repeat", "")
        task = self.task("nightly")
        self.assertEqual((task["dst_gap"], task["dst_repeat"]), (None, None))
        self.assertNotIn("dst", self.ok("show", "nightly"))

    def test_edit_replans_the_next_run_by_the_new_rule(self):
        self.add("nightly", *NIGHTLY, "--", "true", faketime="2026-03-28 12:00:00")
        self.assertEqual(self.task("nightly")["next_run_at"], "2026-03-29T01:00:00Z")
        self.ok("edit", "nightly", "--dst-gap", "skip", faketime="2026-03-28 12:00:00")
        self.assertEqual(self.task("nightly")["next_run_at"], "2026-03-30T00:30:00Z")

    def test_bad_values_and_schedules_without_a_wall_clock_are_refused_and_nothing_is_written(self):
        for args in (["--cron", "0 3 * * *", "--dst-gap", "later"], ["--cron", "0 3 * * *", "--dst-repeat", "2"],
                     ["--every", "1h", "--dst-gap", "skip"], ["--manual", "--dst-repeat", "twice"],
                     ["--every", "1h", "--after-finish", "--dst-gap", "run-after"]):
            with self.subTest(args=args):
                code, _, err = self.run_taskd("add", "bad", *args, "--", "true")
                self.assertEqual(code, 65, err)
                self.assertIn("--dst-", err)
                self.assertFalse(os.path.exists(self.db))
        code, _, err = self.run_taskd("preview", "--every", "1h", "--dst-gap", "skip", db=False)
        self.assertEqual(code, 65, err)

    def test_a_rule_that_would_leave_no_slot_is_refused(self):
        # The last Sunday of March at 02:30 never exists in Berlin.
        code, _, err = self.run_taskd("add", "never", "--cron", "30 2 * 3 0L", "--tz", "Europe/Berlin",
                                      "--dst-gap", "skip", "--", "true")
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, "--dst-gap skip", "never run")
        self.assertFalse(os.path.exists(self.db))
        self.add("last-sunday", "--cron", "30 2 * 3 0L", "--tz", "Europe/Berlin", "--", "true")
        code, _, err = self.run_taskd("preview", "last-sunday", "--dst-gap", "skip")
        self.assertEqual(code, 2, err)
        self.assertOneErrorLine(err, "a task NAME has its own")

    def test_a_task_file_value_is_refused_naming_its_key_and_line(self):
        path = os.path.join(self.tmp, "tasks.toml")
        with open(path, "w") as f:
            f.write(textwrap.dedent("""\
                [[task]]
                name = "nightly"
                command = ["true"]
                cron = "30 2 * * *"
                tz = "Europe/Berlin"
                dst_repeat = "thrice"
                """))
        code, _, err = self.run_taskd("apply", path)
        self.assertEqual(code, 65, err)
        self.assertIn("%s:6:" % path, err)
        self.assertIn("--dst-repeat", err)
        self.assertFalse(os.path.exists(self.db))

    def test_a_skipped_gap_time_does_not_run_where_the_default_runs_it_after_the_gap(self):
        outputs = {}
        for name, rule in (("default", ()), ("skipping", ("--dst-gap", "skip"))):
            outputs[name] = os.path.join(self.tmp, name + ".out")
            self.add(name, *NIGHTLY, *rule, "--shell", "--", 'echo "$TASKD_SCHEDULED_AT" >> ' + outputs[name],
                     faketime="2026-03-28 12:00:00")
        self.run_once(faketime="2026-03-29 01:00:01")
        with open(outputs["default"]) as f:
            self.assertEqual(f.read().split(), ["2026-03-29T01:00:00Z"])
        self.assertFalse(os.path.exists(outputs["skipping"]))
        self.assertEqual(self.task("skipping")["next_run_at"], "2026-03-30T00:30:00Z")


if __name__ == "__main__":
    unittest.main()
