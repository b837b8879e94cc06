"""A taskd killed with SIGKILL in the middle of a run, its watchdog with it:
the next run-once records the run LOST, kills what it left running, and runs
the task again.
The row of a loop that died goes at the next tick too, even an idle one."""

import os
import signal
import socket
import unittest

from loop_helpers import wait_for
from taskd_test import TaskdTestCase, processes_matching, sleeps_of

T0 = "2026-11-21 14:00:00"
T1 = "2026-11-21 14:00:05"


class RecoveryTest(TaskdTestCase):
    def test_killed_worker_leaves_a_lost_run_and_no_orphan(self):
        marker = self.unique_sleep()
        started = os.path.join(self.tmp, "started")
        second = os.path.join(self.tmp, "second-run")
        # First attempt: note that it started, then hang. The retry succeeds.
        script = ('if [ -e %s ]; then echo again > %s; exit 0; fi; touch %s; sleep %s'
                  % (started, second, started, marker))
        # Slots on the hour, the clock at 14:00: the retry (0s, timebox 10m)
        # ends long before the 15:00 slot, so it is not replaced by the slot.
        self.add("hang", "--every", "1h", "--phase", "0", "--start-now", "--timeout", "10m", "--shell", "--", script,
                 faketime=T0)
        # --start-now made T0 the first slot; the workers' clocks stand at T1, after it.
        # By process group, not a cgroup: any taskd that starts meanwhile (a test beside
        # this one) ends the cgroups of a dead taskd's runs at once, before this recovery.
        worker = self.popen_taskd("run-once", "--containment", "subreaper", faketime=T1)
        self.addCleanup(worker.kill)
        # The shell, which touched the file, names the sleep too: wait for the sleep itself,
        # or taskd's death could take the shell before it starts it.
        wait_for(lambda: sleeps_of(marker), 20, "the child's sleep")
        # faketime runs taskd as its child: kill taskd itself, found by its --db.
        workers = [w for w in processes_matching("%s run-once" % self.db) if "faketime" not in w[1]]
        self.assertEqual(len(workers), 1, workers)
        worker_pid = workers[0][0]
        # Its watchdog first, which would end the orphan at once: this is about what is left to recovery.
        self.kill_watchdog_of(worker_pid)
        os.kill(worker_pid, signal.SIGKILL)
        worker.wait(timeout=10)
        worker.stdout.close()
        worker.stderr.close()
        # The orphan outlived its worker; the run is stuck RUNNING until recovered.
        self.assertTrue(sleeps_of(marker))
        self.assertEqual([r["status"] for r in self.history("hang")], ["running"])

        out = self.run_once("--containment", "subreaper", faketime=T1)
        self.assertIn("lost", out)
        self.assertEqual(processes_matching("sleep " + marker), [])
        runs = self.history("hang")
        self.assertEqual([r["status"] for r in runs], ["succeeded", "lost"])
        self.assertIn("worker pid %d" % worker_pid, runs[1]["reason"])
        self.assertEqual(runs[0]["trigger"], "retry")
        self.assertEqual(runs[0]["attempt_no"], 2)
        self.assertTrue(os.path.exists(second))
        task = self.task("hang")
        self.assertEqual(task["attempt_no"], 0)
        self.assertEqual(task["last_status"], "succeeded")

    def test_a_tick_with_nothing_due_removes_the_row_of_a_loop_that_died(self):
        self.add("later", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        # A loop of this host from before the last boot: gone, whatever its pid is now.
        self.sql("INSERT INTO workers (role, host, pid, boot_id, process_start, concurrency, started_at, "
                 "heartbeat_at) VALUES ('run', ?, 1, 'a-boot-before-this-one', 1, 1, 0, 0)", (socket.gethostname(),))
        self.assertEqual(self.run_once(faketime=T1), "")
        self.assertEqual(self.sql("SELECT count(*) FROM workers"), [(0,)])
        self.assertEqual(self.history(), [])


if __name__ == "__main__":
    unittest.main()
