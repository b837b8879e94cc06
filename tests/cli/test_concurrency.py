"""Two schedulers ticking the same database at the same moment run every due
task exactly once."""

import os
import unittest

from taskd_test import TaskdTestCase

TASKS = 20


class ConcurrentRunOnceTest(TaskdTestCase):
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


if __name__ == "__main__":
    unittest.main()
