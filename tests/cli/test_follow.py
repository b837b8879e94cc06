"""`taskd logs` during a run shows what the run has written so far, and
`logs --follow` prints the output as it is written, then exits 0 when the
run ends; `logs` is another process than the scheduler's, as it would be on
another host of a server."""

import os
import subprocess
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

    def test_follow_prints_as_written_and_exits_when_the_run_ends(self):
        self.add_talking_task()
        self.start_run()
        follower = self.popen_taskd("logs", "talks", "--follow")
        self.addCleanup(self.reap, follower)
        first = follower.stdout.readline()
        self.assertEqual(first, "first line\n")
        self.assertIsNone(follower.poll(), "--follow exited while the run went on")
        open(self.go, "w").close()
        rest, err = follower.communicate(timeout=30)
        self.assertEqual((follower.returncode, first + rest, err), (0, "first line\nsecond line\n", ""))

    def test_follow_of_a_finished_run_prints_it_and_exits(self):
        self.add("done", "--every", "1h", "--start-now", "--", "echo", "over")
        self.run_once()
        self.assertEqual(self.ok("logs", "done", "--follow", timeout=30), "over\n")

    def test_follow_with_run_follows_that_run(self):
        self.add_talking_task()
        self.start_run()
        [run] = self.history("talks")
        follower = self.popen_taskd("logs", "talks", "--follow", "--run", str(run["id"]))
        self.addCleanup(self.reap, follower)
        self.assertEqual(follower.stdout.readline(), "first line\n")
        open(self.go, "w").close()
        rest, _ = follower.communicate(timeout=30)
        self.assertEqual((follower.returncode, rest), (0, "second line\n"))

    def test_follow_says_where_output_was_cut_and_prints_nothing_twice(self):
        # 1K kept: a head of 256 bytes, a tail of 768. The first 100 lines
        # (292 bytes) fill the head; the next 300 are cut between the two.
        script = "seq 1 100; while [ ! -e %s ]; do sleep 0.05; done; seq 101 400" % self.go
        self.add("talks", "--every", "1h", "--start-now", "--keep-output", "1K", "--shell", "--", script)
        self.start("run")
        first_lines = "".join("%d\n" % i for i in range(1, 101))
        wait_for(lambda: self.run_taskd("logs", "talks")[1] == first_lines, 20, "the first lines during the run")
        follower = self.popen_taskd("logs", "talks", "--follow")
        self.addCleanup(self.reap, follower)
        printed = "".join(follower.stdout.readline() for _ in range(100))
        self.assertEqual(printed, first_lines)
        open(self.go, "w").close()
        rest, _ = follower.communicate(timeout=30)
        self.assertEqual(follower.returncode, 0)
        final = self.logs("talks")
        self.assertRegex(final, r"\n\[taskd: 468 bytes of output cut here\]\n")
        self.assertEqual(printed + rest, first_lines + final[final.index("[taskd: "):])

    def test_follow_with_json_is_a_usage_error(self):
        self.add("done", "--every", "1h", "--", "true")
        code, out, err = self.run_taskd("--json", "logs", "done", "--follow")
        self.assertEqual((code, out), (2, ""))
        self.assertIn("--follow", err)


if __name__ == "__main__":
    unittest.main()
