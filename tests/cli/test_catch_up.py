"""--catch-up and --catch-up-window: what a tick does with the planned slots
that came due while no scheduler ran (taskd(1), --catch-up)."""

import os
import signal
import unittest

from loop_helpers import LoopTestCase, wait_for
from taskd_test import processes_matching

ADDED = "2026-11-21 07:30:00"  # an hourly task's 08:00, 09:00 and 10:00 are missed by 10:30


class CatchUpTest(LoopTestCase):
    def add_hourly(self, name, *policy):
        out = os.path.join(self.tmp, name + ".out")
        self.add(name, "--every", "1h", "--phase", "0", *policy, "--shell", "--",
                 'echo "$TASKD_SCHEDULED_AT" >> ' + out, faketime=ADDED)
        return out

    def runs(self, name):
        return [(r["status"], r["scheduled_at"]) for r in reversed(self.history(name))]

    def test_latest_runs_the_last_missed_slot_once(self):
        out = self.add_hourly("latest")
        self.run_once(faketime="2026-11-21 10:30:00")
        with open(out) as f:
            self.assertEqual(f.read().split(), ["2026-11-21T10:00:00Z"])
        self.assertEqual([status for status, _ in self.runs("latest")], ["skipped", "succeeded"])

    def test_none_runs_no_missed_slot_and_keeps_the_plan(self):
        out = self.add_hourly("none", "--catch-up", "none")
        self.run_once(faketime="2026-11-21 10:30:00")
        self.assertFalse(os.path.exists(out))
        [(status, _)] = self.runs("none")
        self.assertEqual(status, "skipped")
        self.assertEqual(self.task("none")["next_run_at"], "2026-11-21T11:00:00Z")
        # The next slot, reached on time, runs.
        self.run_once(faketime="2026-11-21 11:00:01")
        with open(out) as f:
            self.assertEqual(f.read().split(), ["2026-11-21T11:00:00Z"])

    def test_all_runs_every_missed_slot_oldest_first_each_with_its_own_slot(self):
        out = self.add_hourly("all", "--catch-up", "all")
        for minute in ("30", "31", "32"):
            self.run_once(faketime="2026-11-21 10:%s:00" % minute)
        with open(out) as f:
            self.assertEqual(f.read().split(),
                             ["2026-11-21T08:00:00Z", "2026-11-21T09:00:00Z", "2026-11-21T10:00:00Z"])
        self.assertEqual([status for status, _ in self.runs("all")], ["succeeded"] * 3)
        self.assertEqual(self.task("all")["next_run_at"], "2026-11-21T11:00:00Z")

    def test_the_loop_runs_the_missed_slots_back_to_back(self):
        out = self.add_hourly("looped", "--catch-up", "all")
        proc, _ = self.start("run", faketime="@2026-11-21 10:30:00")

        def three_lines():
            return os.path.exists(out) and len(open(out).read().split()) == 3 and open(out).read().split()
        self.assertEqual(wait_for(three_lines, 30, "three catch-up runs"),
                         ["2026-11-21T08:00:00Z", "2026-11-21T09:00:00Z", "2026-11-21T10:00:00Z"])
        # SIGTERM to taskd itself: the faketime wrapper would not pass it on.
        [taskd] = [p for p in processes_matching("%s run " % self.db) if "faketime" not in p[1]]
        os.kill(taskd[0], signal.SIGTERM)
        proc.communicate(timeout=30)

    def test_all_n_and_a_window_skip_the_oldest(self):
        out = self.add_hourly("capped", "--catch-up", "all:1")
        windowed = self.add_hourly("windowed", "--catch-up", "all", "--catch-up-window", "90m")
        for minute in ("30", "31", "32"):
            self.run_once(faketime="2026-11-21 10:%s:00" % minute)
        with open(out) as f:
            self.assertEqual(f.read().split(), ["2026-11-21T10:00:00Z"])
        with open(windowed) as f:
            self.assertEqual(f.read().split(), ["2026-11-21T09:00:00Z", "2026-11-21T10:00:00Z"])
        self.assertEqual(self.runs("windowed")[0][0], "skipped")

    def test_the_policy_is_shown_and_edited(self):
        self.add_hourly("shown", "--catch-up", "all:5", "--catch-up-window", "1d")
        task = self.task("shown")
        self.assertEqual((task["catch_up"], task["catch_up_window"]), ("all:5", 86400))
        self.assertIn("all:5, window 1d", self.ok("show", "shown"))
        self.ok("edit", "shown", "--catch-up", "latest", "--catch-up-window", "")
        task = self.task("shown")
        self.assertEqual((task["catch_up"], task["catch_up_window"]), ("latest", None))

    def test_bad_policies_are_refused_and_nothing_is_written(self):
        for args in (["--every", "1h", "--catch-up", "sometimes"], ["--every", "1h", "--catch-up", "all:0"],
                     ["--every", "1h", "--catch-up-window", "soon"], ["--manual", "--catch-up", "all"],
                     ["--every", "1h", "--after-finish", "--catch-up-window", "1h"]):
            with self.subTest(args=args):
                code, _, err = self.run_taskd("add", "bad", *args, "--", "true")
                self.assertEqual(code, 65, err)
                self.assertIn("--catch-up", err)
                self.assertFalse(os.path.exists(self.db))


if __name__ == "__main__":
    unittest.main()
