"""What a run starts outside its own process group ends with the run: a
child that calls setsid, a double fork, `nohup ... &`, and a child that
ignores SIGTERM and keeps forking, after the timebox and after taskd was
killed with SIGKILL and the next run-once recovered the run. taskd finds
them by the $TASKD_ATTEMPT_UID they inherited (taskd(1), CONTAINMENT)."""

import os
import signal
import unittest

from loop_helpers import wait_for
from taskd_test import TaskdTestCase, processes_matching

T0 = "2026-11-21 14:00:00"
T1 = "2026-11-21 14:00:05"

# Each leaves `sleep MARKER` running outside the run's process group, then
# waits in the foreground (the timebox or a SIGKILL of taskd ends that).
ESCAPES = {
    "setsid": 'setsid sh -c "sleep {m}" & sleep 30',
    "double fork": '(sh -c "setsid sleep {m} &" &) ; sleep 30',
    "nohup": 'setsid nohup sleep {m} >/dev/null 2>&1 & sleep 30',
    "ignores TERM and forks": ("trap '' TERM; setsid sh -c 'trap \"\" TERM; sleep {m}' & "
                               "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 1; done; "
                               "setsid sh -c 'trap \"\" TERM; sleep {m}' & sleep 30"),
}


class ContainmentTest(TaskdTestCase):
    def add_escaping(self, name, script, marker, timeout):
        self.add(name, "--every", "1h", "--phase", "0", "--start-now", "--timeout", timeout, "--kill-grace", "1s",
                 "--retry", "none", "--shell", "--", script.format(m=marker), faketime=T0)

    def test_the_timebox_ends_what_left_the_process_group(self):
        for name, script in ESCAPES.items():
            with self.subTest(name):
                marker = self.unique_sleep()
                task = name.replace(" ", "-")
                self.add_escaping(task, script, marker, "2s")
                self.run_once(faketime=T1)
                self.assertEqual([r["status"] for r in self.history(task)], ["timed_out"])
                self.assertEqual(processes_matching("sleep " + marker), [], "%s: left running" % name)

    def test_recovery_after_sigkill_ends_what_left_the_process_group(self):
        for name in ("setsid", "double fork"):
            with self.subTest(name):
                marker = self.unique_sleep()
                task = name.replace(" ", "-")
                self.add_escaping(task, ESCAPES[name], marker, "10m")
                worker = self.popen_taskd("run-once", faketime=T1)
                self.addCleanup(worker.kill)
                wait_for(lambda: processes_matching("sleep " + marker), 20, "the escaped sleep")
                [taskd] = [w for w in processes_matching("%s run-once" % self.db) if "faketime" not in w[1]]
                os.kill(taskd[0], signal.SIGKILL)
                worker.wait(timeout=10)
                worker.stdout.close()
                worker.stderr.close()
                self.assertTrue(processes_matching("sleep " + marker), "the escapee outlived taskd")
                self.assertIn("lost", self.run_once(faketime=T1))
                self.assertEqual(processes_matching("sleep " + marker), [], "%s: left running" % name)
                self.ok("rm", task)


if __name__ == "__main__":
    unittest.main()
