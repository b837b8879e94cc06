"""Runs that go wrong: exit codes, programs that cannot start, permanent
failures, timeouts with stubborn process trees, and bounded output."""

import os
import random
import signal
import unittest

from taskd_test import TaskdTestCase, parse_time, processes_matching

T0 = "2026-11-21 14:00:00"


class FailureTest(TaskdTestCase):
    def only_run(self, name):
        runs = self.history(name)
        self.assertEqual(len(runs), 1, runs)
        return runs[0]

    def test_failing_command_is_failed_with_exit_code_and_stderr_in_reason(self):
        self.add("fails", "--every", "1h", "--start-now", "--shell", "--", "echo oops >&2; exit 3")
        code, out, err = self.run_taskd("run-once")
        self.assertEqual(code, 0, err)
        self.assertIn("fails", out)
        run = self.only_run("fails")
        self.assertEqual(run["status"], "failed")
        self.assertEqual(run["exit_code"], 3)
        self.assertIn("exit code 3", run["reason"])
        self.assertIn("oops", run["reason"])
        task = self.task("fails")
        self.assertEqual(task["last_status"], "failed")
        self.assertEqual(task["attempt_no"], 1)
        self.assertIs(task["disabled_until_update"], False)

    def test_program_that_does_not_exist_is_a_failed_run_not_a_crash(self):
        self.add("missing", "--every", "1h", "--start-now", "--", "/nonexistent/prog")
        self.add("fine", "--every", "1h", "--start-now", "--", "true")
        code, out, err = self.run_taskd("run-once")
        self.assertEqual(code, 0, "stdout: %s\nstderr: %s" % (out, err))
        self.assertIn("missing", out)
        run = self.only_run("missing")
        self.assertEqual(run["status"], "failed")
        self.assertIn("cannot execute", run["reason"])
        self.assertIn("/nonexistent/prog", run["reason"])
        self.assertEqual(self.only_run("fine")["status"], "succeeded")

    def test_program_not_in_path_is_a_failed_run(self):
        self.add("nopath", "--every", "1h", "--start-now", "--", "no-such-program-4711")
        self.assertEqual(self.run_taskd("run-once")[0], 0)
        run = self.only_run("nopath")
        self.assertEqual(run["status"], "failed")
        self.assertIn("cannot execute", run["reason"])
        self.assertIn("no-such-program-4711", run["reason"])

    def test_permanent_exit_disables_with_the_last_status_line(self):
        self.add("perm", "--every", "1h", "--start-now", "--shell", "--",
                 'echo "starting" > "$TASKD_STATUS"; echo "API key revoked, update the task" >> "$TASKD_STATUS";'
                 ' echo noise >&2; exit 78')
        self.run_taskd("run-once")
        run = self.only_run("perm")
        self.assertEqual(run["status"], "failed")
        self.assertEqual(run["exit_code"], 78)
        task = self.task("perm")
        self.assertIs(task["disabled_until_update"], True)
        self.assertEqual(task["disabled_reason"], "API key revoked, update the task")
        self.assertIsNone(task["next_run_at"])
        code, text, _ = self.run_taskd("show", "perm")
        self.assertIn("disabled", text)
        # A disabled task is not run again.
        self.run_once()
        self.assertEqual(len(self.history("perm")), 1)

    def test_permanent_exit_without_status_file_uses_last_stderr_line(self):
        self.add("perm2", "--every", "1h", "--start-now", "--permanent-exit", "9,78", "--shell", "--",
                 "echo first >&2; echo 'config file missing' >&2; exit 9")
        self.run_taskd("run-once")
        task = self.task("perm2")
        self.assertIs(task["disabled_until_update"], True)
        self.assertEqual(task["disabled_reason"], "config file missing")

    def test_retry_ladder_then_disabled_until_update(self):
        # Under faketime with slots on the hour, a retry 0s after the failure
        # (timebox 1m) ends long before the next slot, so it is kept.
        self.add("flaky", "--every", "1h", "--phase", "0", "--start-now", "--timeout", "1m", "--retry", "0s",
                 "--disable-when-exhausted", "--shell", "--", "echo broken >&2; exit 1", faketime=T0)
        self.run_once(faketime="2026-11-21 14:00:01")
        task = self.task("flaky")
        self.assertEqual(task["attempt_no"], 1)
        self.assertLess(parse_time(task["next_run_at"]), parse_time("2026-11-21T14:01:00Z"))

        self.run_once(faketime="2026-11-21 14:00:05")
        runs = self.history("flaky")
        self.assertEqual([(r["status"], r["trigger"], r["attempt_no"]) for r in runs],
                         [("failed", "retry", 2), ("failed", "schedule", 1)])
        task = self.task("flaky")
        self.assertIs(task["disabled_until_update"], True)
        self.assertEqual(task["disabled_reason"], "Cannot run flaky after 2 attempt(s): exit code 1: broken")
        self.assertIn("Cannot run flaky", self.ok("show", "flaky"))
        self.run_once(faketime="2026-11-21 15:00:01")
        self.assertEqual(len(self.history("flaky")), 2, "a disabled task does not run")

        # `enable` clears it: the count starts over and the plan resumes.
        self.ok("enable", "flaky", faketime="2026-11-21 15:30:00")
        task = self.task("flaky")
        self.assertIs(task["disabled_until_update"], False)
        self.assertEqual(task["disabled_reason"], "")
        self.assertEqual(task["attempt_no"], 0)
        self.assertEqual(task["next_run_at"], "2026-11-21T16:00:00Z")
        self.run_once(faketime="2026-11-21 16:00:01")
        runs = self.history("flaky")
        self.assertEqual([(r["status"], r["attempt_no"]) for r in runs[:2]], [("failed", 1), ("skipped", 0)])
        self.assertIn("disabled", runs[1]["reason"])

    def test_an_exhausted_ladder_keeps_the_plan_and_the_task_says_since_when_it_fails(self):
        # A poller every 30s with a ladder of 0s and 1s: once both retries
        # failed, the next planned slot runs all the same and walks the
        # ladder again; the task was never disabled.
        ok_file = os.path.join(self.tmp, "ok")
        self.add("poller", "--every", "30s", "--phase", "0", "--timeout", "10s", "--retry", "0s,1s", "--shell", "--",
                 'test -e "%s" || { echo unreachable >&2; exit 1; }' % ok_file, faketime=T0)
        for second in ("14:00:30", "14:00:31", "14:00:32"):
            self.run_once(faketime="2026-11-21 " + second)
        task = self.task("poller")
        self.assertIs(task["disabled_until_update"], False)
        self.assertEqual(task["disabled_reason"], "")
        self.assertEqual(task["attempt_no"], 0)
        self.assertEqual(task["next_run_at"], "2026-11-21T14:01:00Z")
        self.assertEqual(task["failing_since"], "2026-11-21T14:00:30.000Z")
        self.assertEqual(task["ladder_exhausted_at"], "2026-11-21T14:00:32.000Z")
        show = self.ok("show", "poller", faketime="2026-11-21 14:00:50")
        self.assertIn("failing since 2026-11-21T14:00:30Z (20s ago); its retries ran out at 2026-11-21T14:00:32Z, "
                      "the plan goes on", show)
        listed = self.ok("list", "--state", "failing", faketime="2026-11-21 14:00:50")
        self.assertIn("failing since 20s ago", listed)
        self.assertIn("poller", listed)
        self.assertIn("failing since 2026-11-21T14:00:30Z",
                      self.ok("list", "--state", "failing", "--absolute", faketime="2026-11-21 14:00:50"))
        code, out, _ = self.run_taskd("check", faketime="2026-11-21 14:00:50")
        self.assertEqual(code, 1, out)
        self.assertIn("WARNING poller: its latest run ended failed 18s ago (2026-11-21T14:00:32Z), with no retry to "
                      "come; failing since 2026-11-21T14:00:30Z; its retries ran out at 2026-11-21T14:00:32Z", out)

        self.run_once(faketime="2026-11-21 14:01:01")  # the next planned slot runs, the ladder's first attempt again
        runs = self.history("poller")
        self.assertEqual([(r["status"], r["trigger"], r["attempt_no"]) for r in runs],
                         [("failed", "schedule", 1), ("failed", "retry", 3), ("failed", "retry", 2),
                          ("failed", "schedule", 1)])
        self.assertEqual(runs[0]["scheduled_at"], "2026-11-21T14:01:00Z")
        task = self.task("poller")
        self.assertEqual((task["attempt_no"], task["next_run_at"]), (1, "2026-11-21T14:01:01Z"))
        self.assertEqual(task["failing_since"], "2026-11-21T14:00:30.000Z")  # the same streak
        code, out, _ = self.run_taskd("check", faketime="2026-11-21 14:01:02")
        self.assertEqual(code, 1, out)
        self.assertIn("WARNING poller: its latest run ended failed 1s ago (2026-11-21T14:01:01Z), a retry to come; "
                      "failing since 2026-11-21T14:00:30Z; its retries ran out at 2026-11-21T14:00:32Z", out)

        open(ok_file, "w").close()
        self.run_once(faketime="2026-11-21 14:01:02")
        task = self.task("poller")
        self.assertEqual(task["last_status"], "succeeded")
        self.assertIsNone(task["failing_since"])
        self.assertIsNone(task["ladder_exhausted_at"])
        self.assertNotIn("poller", self.ok("list", "--state", "failing"))
        self.assertEqual(self.run_taskd("check", faketime="2026-11-21 14:01:05")[0], 0)

    def test_timeout_kills_the_whole_process_tree(self):
        marker = self.unique_sleep()
        # Manual, so that no slot of a schedule can come due during the run (its
        # hourly slot once did, and left a SKIPPED row beside it).
        self.add("stuck", "--manual", "--timeout", "1s", "--kill-grace", "1s", "--shell", "--",
                 'trap "" TERM; sleep %s & sleep %s' % (marker, marker))
        self.ok("trigger", "stuck")
        code, out, err = self.run_taskd("run-once", timeout=30)
        self.assertEqual(code, 0, err)
        self.assertIn("stuck", out)
        self.assertEqual(processes_matching("sleep " + marker), [])
        run = self.only_run("stuck")
        self.assertEqual(run["status"], "timed_out")
        self.assertEqual(run["signal"], signal.SIGKILL)  # it ignored SIGTERM
        self.assertIn("timed out", run["reason"])
        took = (parse_time(run["finished_at"]) - parse_time(run["started_at"])).total_seconds()
        self.assertGreaterEqual(took, 1.9)  # timeout + kill grace
        self.assertLess(took, 10)

    def test_timeout_sends_sigterm_first(self):
        marker = self.unique_sleep()
        self.add("slow", "--every", "1h", "--start-now", "--timeout", "1s", "--kill-grace", "5s", "--",
                 "sleep", marker)
        self.run_taskd("run-once", timeout=30)
        run = self.only_run("slow")
        self.assertEqual(run["status"], "timed_out")
        self.assertEqual(run["signal"], signal.SIGTERM)
        took = (parse_time(run["finished_at"]) - parse_time(run["started_at"])).total_seconds()
        self.assertLess(took, 4)  # ended by SIGTERM, without waiting for the grace
        self.assertEqual(processes_matching("sleep " + marker), [])

    def test_timeout_none_lets_a_run_outlast_half_its_interval(self):
        self.add("long", "--every", "2s", "--start-now", "--timeout", "none", "--", "sleep", "1.5")
        self.assertIsNone(self.task("long")["timeout"])
        self.assertIn("timeout none", " ".join(self.ok("show", "long").split()))
        self.run_taskd("run-once", timeout=30)
        # A slot that came while it ran is skipped, as --overlap skip says.
        started = [run["status"] for run in self.history("long") if run["status"] != "skipped"]
        self.assertEqual(started, ["succeeded"])

    def test_background_process_left_by_a_successful_run_is_stopped(self):
        marker = self.unique_sleep()
        self.add("leaves", "--every", "1h", "--start-now", "--kill-grace", "1s", "--shell", "--",
                 "sleep %s > /dev/null 2>&1 & echo started" % marker)
        self.run_taskd("run-once", timeout=30)
        self.assertEqual(self.only_run("leaves")["status"], "succeeded")
        self.assertEqual(processes_matching("sleep " + marker), [])

    def chatty_script(self):
        """A program writing 6000 numbered lines (over 300 KiB), then THE-END; and what it writes."""
        script = ("import sys\n"
                  "for i in range(6000): sys.stdout.write('line %06d %s\\n' % (i, 'x' * 40))\n"
                  "sys.stdout.write('THE-END\\n')\n")
        expected = "".join("line %06d %s\n" % (i, "x" * 40) for i in range(6000)) + "THE-END\n"
        self.assertGreater(len(expected), 300 * 1024)
        return script, expected

    def test_output_keeps_its_head_and_tail_with_a_line_saying_how_much_was_cut(self):
        script, expected = self.chatty_script()
        self.add("chatty", "--every", "1h", "--start-now", "--keep-output", "64K", "--",
                 "/usr/bin/python3", "-c", script)
        self.assertEqual(self.task("chatty")["keep_output"], 64 * 1024)
        self.assertRegex(self.ok("show", "chatty"), r"keep output +64K\n")
        self.run_once()
        run = self.only_run("chatty")
        self.assertEqual(run["status"], "succeeded")
        self.assertIs(run["output_truncated"], True)
        # A quarter for the head (16 KiB ends inside line 309), the rest for the tail.
        head, tail = expected[:16 * 1024], expected[-48 * 1024:]
        cut = len(expected) - 64 * 1024
        line = "[taskd: %.1f KiB (%d bytes) of output cut here]\n" % (cut / 1024, cut)
        kept = head + "\n" + line + tail
        self.assertEqual(run["output_bytes"], len(kept))
        text = self.logs("chatty")
        self.assertEqual(text, kept)
        self.assertTrue(text.startswith("line 000000 "), text[:100])
        self.assertIn("\n" + line + "x" * 10, text)
        self.assertTrue(text.endswith("line 005999 " + "x" * 40 + "\nTHE-END\n"), text[-200:])
        self.assertEqual(self.json_of("logs", "chatty")["output"], kept)

    def test_a_run_keeps_a_mebibyte_of_output_by_default(self):
        script, expected = self.chatty_script()
        self.add("chatty", "--every", "1h", "--start-now", "--", "/usr/bin/python3", "-c", script)
        self.assertEqual(self.task("chatty")["keep_output"], 1024 * 1024)
        self.assertNotIn("keep output", self.ok("show", "chatty"))
        self.run_once()
        run = self.only_run("chatty")
        self.assertIs(run["output_truncated"], False)
        self.assertEqual(self.logs("chatty"), expected)


if __name__ == "__main__":
    unittest.main()
