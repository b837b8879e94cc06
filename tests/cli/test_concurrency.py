"""Many taskd processes on one database: two `run-once` ticking at the same
moment run every due task exactly once; four `taskd work` and one `taskd run`
under load for 30 s (issue #5) start no slot twice, never surface
SQLITE_BUSY, and record every run."""

import collections
import concurrent.futures
import os
import time
import unittest

from loop_helpers import LoopTestCase, wait_for
from taskd_test import TaskdTestCase

TASKS = 20

CONCURRENT_TASKS = 500
CONCURRENT_SECONDS = 30
WORKERS = 4


class ConcurrentRunOnceTest(TaskdTestCase):
    def test_adds_racing_to_create_the_database_all_succeed(self):
        # Each add of the first round may be the one that creates the file
        # and its schema while the others open it.
        for round_no in range(5):
            db = os.path.join(self.tmp, "fresh-%d.db" % round_no)
            def add(i):
                return self.run_taskd("add", "t%d" % i, "--every", "1h", "--", "true", db=db)
            with concurrent.futures.ThreadPoolExecutor(12) as pool:
                for code, _, err in pool.map(add, range(12)):
                    self.assertEqual(code, 0, err)
            self.assertEqual(len(self.json_of("list", db=db)), 12)

    def test_two_run_once_processes_run_each_task_exactly_once(self):
        out_file = os.path.join(self.tmp, "ran.txt")
        names = ["task-%02d" % i for i in range(TASKS)]
        for name in names:
            self.add(name, "--every", "1h", "--start-now", "--shell", "--", 'echo "$TASKD_TASK" >> "%s"' % out_file)

        first = self.popen_taskd("run-once", "--concurrency", "4")
        second = self.popen_taskd("run-once", "--concurrency", "4")
        results = [p.communicate(timeout=60) + (p.returncode,) for p in (first, second)]
        for out, err, code in results:
            self.assertEqual((code, out), (0, ""), err)

        with open(out_file) as f:
            ran = f.read().splitlines()
        self.assertEqual(sorted(ran), names)  # each name exactly once

        runs = self.history()
        self.assertEqual(len(runs), TASKS, runs)
        self.assertEqual({r["status"] for r in runs}, {"succeeded"})
        self.assertEqual(sorted(r["task"] for r in runs), names)
        self.assertEqual(len({r["attempt_uid"] for r in runs}), TASKS)
        for task in self.tasks():
            self.assertEqual((task["run_index"], task["last_status"]), (1, "succeeded"), task["name"])

        # Nothing is left due or queued: another tick runs nothing.
        self.run_once()
        self.assertEqual(len(self.history()), TASKS)
        with open(out_file) as f:
            self.assertEqual(len(f.read().splitlines()), TASKS)


class ConcurrentLoopsTest(LoopTestCase):
    def test_four_workers_and_a_scheduler_start_no_slot_twice_and_record_every_run(self):
        def add(i):
            return self.run_taskd("add", "load-%03d" % i, "--every", "1s", "--", "/bin/true")
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            for code, _, err in pool.map(add, range(CONCURRENT_TASKS)):
                self.assertEqual(code, 0, err)
        procs = [self.start("work", "--concurrency", "4", log_name="work-%d.log" % i)[0] for i in range(WORKERS)]
        procs.append(self.start("run", "--concurrency", "4", log_name="run.log")[0])
        deadline = time.monotonic() + CONCURRENT_SECONDS
        wait_for(lambda: time.monotonic() > deadline or any(p.poll() is not None for p in procs),
                 CONCURRENT_SECONDS + 5, "the load period")
        results = [self.stop(p, seconds=120) for p in procs]
        logs = [os.path.join(self.tmp, name) for name in ["work-%d.log" % i for i in range(WORKERS)] + ["run.log"]]
        for (code, out, err), log in zip(results, logs):
            self.assertEqual(code, 0, err)
            for text in [err, out] + self.log_lines(log):
                self.assertNotIn("level=error", text, log)
                for busy in ("SQLITE_BUSY", "database is locked", "locked"):
                    self.assertNotIn(busy, text, log)

        runs = self.json_of("history", "--limit", "1000000")
        started = [r for r in runs if r["started_at"]]
        self.assertGreater(len(started), CONCURRENT_TASKS, "the load never got going")
        self.assertNotIn("running", [r["status"] for r in runs], "a stopped process left a run unrecorded")
        slots = collections.Counter((r["task"], r["scheduled_at"]) for r in started if r["trigger"] == "schedule")
        self.assertEqual([s for s, n in slots.items() if n > 1], [], "a slot started twice")
        self.assertEqual(len({r["attempt_uid"] for r in started}), len(started))
        finished_events = sum(len(self.events(log, "run.finished")) for log in logs)
        self.assertEqual(finished_events, len(started), "every run started is recorded once")
        workers_that_ran = [log for log in logs if self.events(log, "run.started")]
        self.assertGreater(len(workers_that_ran), 1, "the processes did not share the work")

        # What was still queued when they stopped runs now: then every slot
        # that came due has exactly one row.
        code, _, err = self.run_taskd("run-once", timeout=120)
        self.assertEqual((code, err), (0, ""))
        runs = self.json_of("history", "--limit", "1000000")
        self.assertEqual([r["id"] for r in runs if r["status"] in ("queued", "running")], [])
        self.assertEverySlotHasOneRow(1, CONCURRENT_TASKS)

if __name__ == "__main__":
    unittest.main()
