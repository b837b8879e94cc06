"""Crash test of the scheduler loop (issue #5): `taskd run` killed with
SIGKILL at exact code points (TASKD_CRASH_AT), 20 times over; then a
restarted taskd recovers everything, no slot has two history rows or none,
no slot ran twice at the same time, and no orphan child survives."""

import collections
import os
import signal
import unittest

from loop_helpers import LoopTestCase, wait_for
from taskd_test import processes_matching

KILLS = 20
TASKS = 12
POINTS = ["enqueue", "after-claim", "after-spawn", "after-exit"]
INTERVAL = 1  # the tasks' interval, in seconds
WORK_SECONDS = 2  # how long each run works
ORPHAN_GRACE = 1  # how long killed processes may take to go


def crash_plan(kill):
    """The point and pass of the kill-th crash: every point in turn, on its first, second or third pass."""
    return "%s:%d" % (POINTS[kill % len(POINTS)], 1 + (kill // len(POINTS)) % 3)


class CrashTest(LoopTestCase):
    def test_kill_9_at_each_crash_point_loses_nothing_and_runs_no_slot_twice(self):
        locks = os.path.join(self.tmp, "locks")
        os.mkdir(locks)
        ran = os.path.join(self.tmp, "ran")
        overlaps = os.path.join(self.tmp, "overlaps")
        # The lock is held while the run's work lasts: a second run of the
        # same task at the same time (a slot run twice, or a new attempt while
        # a dead worker's child still works) cannot take it and says so. The
        # work lasts longer than recovery may take to kill it, so that a
        # child recovery missed is still there to be seen.
        script = ('flock -n %s/"$TASKD_TASK" -c \'echo "$TASKD_TASK $TASKD_SCHEDULED_AT $TASKD_RUN_ID" >> %s; '
                  'sleep %d\' || echo "$TASKD_TASK $TASKD_RUN_ID" >> %s' % (locks, ran, WORK_SECONDS, overlaps))
        for i in range(TASKS):
            # A retry for every kill: losses must not exhaust the ladder and disable the task.
            self.add("crash-%02d" % i, "--every", "1s", "--timeout", "5s", "--retry", ",".join(["0s"] * KILLS),
                     "--shell", "--", script)
        for kill in range(KILLS):
            plan = crash_plan(kill)
            proc = self.popen_taskd("run", "--concurrency", "4", env=dict(self.env, TASKD_CRASH_AT=plan))
            _, err = proc.communicate(timeout=30)
            self.assertEqual(proc.returncode, -signal.SIGKILL, "TASKD_CRASH_AT=%s: %s" % (plan, err))
            # No taskd runs now: once a recovery has run, whatever still works
            # is an orphan of the killed worker (SIGKILLed processes take a
            # moment to go; the work would take WORK_SECONDS).
            self.ok("tick")
            wait_for(lambda: not processes_matching(locks), ORPHAN_GRACE,
                     "the children left by TASKD_CRASH_AT=%s to be killed" % plan)

        code, _, err = self.run_taskd("run-once")
        self.assertEqual(code, 0, err)
        self.assertEqual(processes_matching(locks), [], "a child of a killed worker survived recovery")
        self.assertFalse(os.path.exists(overlaps) and open(overlaps).read(), "a task ran twice at once")
        self.assertEqual(self.sql("SELECT count(*) FROM runs WHERE status IN ('queued', 'running')"), [(0,)],
                         "a run is stuck")
        self.assertEqual(self.sql("SELECT count(*) FROM workers"), [(0,)], "a dead worker is listed")
        ledgers = [name for name in os.listdir(self.local_files_dir()) if "-spawns." in name]
        self.assertEqual(ledgers, [], "a dead worker's spawn ledger was left behind")
        runs = self.json_of("history", "--limit", "100000")
        self.assertEverySlotHasOneRow(INTERVAL, TASKS)
        with open(ran) as f:
            executed = collections.Counter(line.split()[2] for line in f.read().splitlines())
        self.assertEqual([run for run, n in executed.items() if n > 1], [], "a run executed twice")
        statuses = {r["id"]: r["status"] for r in runs}
        for run_id in executed:
            self.assertIn(statuses.get(int(run_id)), ("succeeded", "failed", "lost"), run_id)
        self.assertIn("lost", statuses.values(), "no kill hit a running child: the test saw nothing")


if __name__ == "__main__":
    unittest.main()
