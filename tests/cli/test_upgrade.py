"""kill -USR2 to taskd run or work: it claims nothing new, lets its runs in
flight finish and records each once, then executes its binary again in place
(the same pid), which logs its version; a binary it cannot execute leaves it
running as it was."""

import os
import shutil
import signal
import subprocess
import unittest
from unittest import mock

import taskd_test
from loop_helpers import LoopTestCase, parse_logfmt, wait_for


class UpgradeTest(LoopTestCase):
    def setUp(self):
        super().setUp()
        self.go = os.path.join(self.tmp, "go")
        self.started = os.path.join(self.tmp, "started")

    def add_waiting_task(self):
        """A task that prints, waits for the file `go`, and prints again."""
        script = "echo begun; touch %s; while [ ! -e %s ]; do sleep 0.05; done; echo done" % (self.started, self.go)
        self.add("waits", "--every", "1h", "--start-now", "--shell", "--", script)

    def event_names(self, log):
        return [parse_logfmt(line).get("event") for line in self.log_lines(log)]

    def starts(self, log):
        return self.events(log, "loop.started")

    def assertRunRecordedOnce(self):
        [run] = self.history("waits")
        self.assertEqual((run["status"], run["reason"], run["attempt_no"]), ("succeeded", "", 1))
        self.assertEqual(self.logs("waits"), "begun\ndone\n")

    def assertServesOn(self, proc):
        """The same process claims and runs what is queued, and stops cleanly."""
        ran = os.path.join(self.tmp, "other-ran")
        self.add("other", "--every", "1h", "--start-now", "--", "touch", ran)
        self.wait_for_file(ran)
        self.assertIsNone(proc.poll())
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0, err)

    def test_usr2_executes_the_binary_again_once_the_run_in_flight_is_recorded(self):
        self.add_waiting_task()
        proc, log = self.start("run")
        self.wait_for_file(self.started)
        proc.send_signal(signal.SIGUSR2)
        [upgrading] = wait_for(lambda: self.events(log, "loop.upgrading"), 20, "loop.upgrading")
        self.assertEqual(upgrading["running"], "1")
        self.assertEqual(len(self.starts(log)), 1, "the binary was executed again before its run ended")
        open(self.go, "w").close()
        wait_for(lambda: len(self.starts(log)) == 2, 30, "the second loop.started")
        self.assertRunRecordedOnce()
        names = self.event_names(log)
        second_start = len(names) - 1 - names[::-1].index("loop.started")
        self.assertLess(names.index("run.finished"), second_start, "the run was recorded after the binary's start")
        [executing] = self.events(log, "loop.executing")
        self.assertEqual(executing["path"], os.path.realpath(taskd_test.TASKD_BIN))
        version = subprocess.run([taskd_test.TASKD_BIN, "--version"], capture_output=True, text=True).stdout.strip()
        self.assertEqual("taskd " + self.starts(log)[1]["version"], version)
        self.assertServesOn(proc)
        self.assertEqual(self.events(log, "loop.upgrade_failed"), [])

    def test_a_binary_it_cannot_execute_leaves_it_running_as_it_was(self):
        binary = os.path.join(self.tmp, "bin", "taskd")
        os.makedirs(os.path.dirname(binary))
        shutil.copy2(taskd_test.TASKD_BIN, binary)
        self.add_waiting_task()
        with mock.patch.object(taskd_test, "TASKD_BIN", binary):
            proc, log = self.start("run")
        self.wait_for_file(self.started)
        os.chmod(binary, 0o644)
        proc.send_signal(signal.SIGUSR2)
        wait_for(lambda: self.events(log, "loop.upgrading"), 20, "loop.upgrading")
        open(self.go, "w").close()
        [failed] = wait_for(lambda: self.events(log, "loop.upgrade_failed"), 30, "loop.upgrade_failed")
        self.assertEqual(failed["error"], "cannot execute %s: Permission denied" % binary)
        wait_for(lambda: len(self.starts(log)) == 2, 30, "the loop's start again in this binary")
        self.assertRunRecordedOnce()
        self.assertServesOn(proc)

    def test_work_executes_its_binary_again_too(self):
        proc, log = self.start("work")
        proc.send_signal(signal.SIGUSR2)
        wait_for(lambda: len(self.starts(log)) == 2, 30, "the second loop.started")
        self.assertEqual(self.starts(log)[1]["command"], "work")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0, err)


if __name__ == "__main__":
    unittest.main()
