"""`taskd logs` during a run shows what the run has written so far; `logs`
is another process than the scheduler's, as it would be on another host of
a server."""

import os
import unittest

from loop_helpers import LoopTestCase, wait_for


class FollowTest(LoopTestCase):
    def setUp(self):
        super().setUp()
        self.go = os.path.join(self.tmp, "go")

    def add_talking_task(self, name="talks", *options):
        """Prints a line, waits for the file `go`, then prints another."""
        script = "echo first line; while [ ! -e %s ]; do sleep 0.05; done; echo second line" % self.go
        self.add(name, "--every", "1h", "--start-now", *options, "--shell", "--", script)

    def start_run(self):
        proc, _ = self.start("run")
        wait_for(lambda: self.run_taskd("logs", "talks")[1] == "first line\n", 20,
                 "logs to show the first line during the run")
        return proc

    def test_logs_during_a_run_shows_what_it_wrote_so_far(self):
        self.add_talking_task()
        self.start_run()
        [run] = self.history("talks")
        self.assertEqual(run["status"], "running")
        open(self.go, "w").close()
        wait_for(lambda: self.history("talks")[0]["status"] == "succeeded", 20, "the run to end")
        self.assertEqual(self.logs("talks"), "first line\nsecond line\n")


if __name__ == "__main__":
    unittest.main()
