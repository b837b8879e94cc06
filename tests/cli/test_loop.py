"""taskd tick, work and run: the loop wakes for what another process adds,
obeys signals, logs logfmt lines, and its children die with it."""

import os
import signal
import unittest

from loop_helpers import LOGFMT, LoopTestCase, wait_for
from taskd_test import processes_matching


class TickTest(LoopTestCase):
    def test_tick_queues_what_is_due_and_runs_nothing(self):
        out_file = os.path.join(self.tmp, "ran")
        self.add("due", "--every", "1h", "--start-now", "--", "touch", out_file)
        code, out, err = self.run_taskd("tick")
        self.assertEqual((code, out), (0, ""), err)
        self.assertEqual([r["status"] for r in self.history()], ["queued"])
        self.assertIn("event=run.queued task=due run=1", err)
        self.assertFalse(os.path.exists(out_file))


class LogFileTest(LoopTestCase):
    """The log file is appended to only when it is the user's own file."""

    def setUp(self):
        super().setUp()
        self.target = os.path.join(self.tmp, "precious")
        with open(self.target, "w") as f:
            f.write("someone else's file\n")

    def assertRefusedAndTargetUntouched(self, log, *fragments):
        code, out, err = self.run_taskd("tick", "--log-file", log)
        self.assertEqual((code, out), (69, ""), err)
        self.assertOneErrorLine(err, log, *fragments)
        with open(self.target) as f:
            self.assertEqual(f.read(), "someone else's file\n")

    def test_symbolic_link_is_refused(self):
        log = os.path.join(self.tmp, "taskd.log")
        os.symlink(self.target, log)
        self.assertRefusedAndTargetUntouched(log, "symbolic link")

    @unittest.skipUnless(os.geteuid() == 0, "giving a file to another user needs root")
    def test_file_owned_by_another_user_is_refused(self):
        os.chown(self.target, 65534, 65534)
        self.assertRefusedAndTargetUntouched(self.target, "uid 65534")

    def test_empty_path_is_a_usage_error(self):
        code, out, err = self.run_taskd("tick", "--log-file", "")
        self.assertEqual((code, out), (2, ""), err)
        self.assertOneErrorLine(err, "--log-file", "empty")


class RunTest(LoopTestCase):
    def test_daemon_is_woken_by_the_commit_of_an_added_task(self):
        out_file = os.path.join(self.tmp, "ran")
        proc, log = self.start("run", "--tick", "1h")
        wait_for(lambda: self.events(log, "loop.sleep"), 20, "the first pass to end")
        self.add("new", "--every", "1h", "--start-now", "--", "touch", out_file)
        wait_for(lambda: self.events(log, "run.finished"), 20, "run.finished")
        self.assertTrue(os.path.exists(out_file))
        # Not the tick bound (an hour) nor a heartbeat: the add's commit woke it.
        wakes = self.events_before(log, "loop.wake", "run.queued")
        self.assertTrue(wakes, "the run was queued before the loop slept")
        self.assertIn("db_change", wakes[-1]["reason"])
        code, _, err = self.stop(proc)
        self.assertEqual(code, 0, err)
        self.assertEqual([r["status"] for r in self.history()], ["succeeded"])

    def test_every_log_line_is_logfmt_and_a_finished_run_says_how_it_went(self):
        self.add("hello", "--every", "1h", "--start-now", "--shell", "--", "echo 'a b'; exit 3")
        proc, log = self.start("run")
        finished = wait_for(lambda: self.events(log, "run.finished"), 10, "run.finished")[0]
        code, _, err = self.stop(proc)
        self.assertEqual(code, 0, err)
        self.assertEqual((finished["task"], finished["run"], finished["status"], finished["level"]),
                         ("hello", "1", "failed", "warn"))
        self.assertRegex(finished["duration"], r"^\d+\.\d{3}$")
        self.assertEqual(finished["reason"], "exit code 3: a b")
        lines = self.log_lines(log)
        for line in lines:
            self.assertRegex(line, LOGFMT)
        events = [l.split(" event=")[1].split(" ")[0] for l in lines]
        for event in ("loop.started", "run.queued", "run.started", "run.finished", "loop.wake", "loop.stopping",
                      "loop.stopped"):
            self.assertIn(event, events)

    def test_log_level_info_hides_debug_lines(self):
        log = os.path.join(self.tmp, "info.log")
        proc = self.popen_taskd("run", "--log-file", log)
        self.addCleanup(self.reap, proc)
        wait_for(lambda: self.events(log, "loop.started"), 20, "loop.started")
        code, _, err = self.stop(proc)
        self.assertEqual(code, 0, err)
        self.assertFalse([l for l in self.log_lines(log) if "level=debug" in l])

    def test_sigterm_without_a_drain_stops_the_running_child_queues_its_slot_again_and_exits_0(self):
        marker = self.unique_sleep()
        self.add("long", "--every", "1h", "--start-now", "--", "sleep", marker)
        proc, log = self.start("run")
        wait_for(lambda: processes_matching("sleep " + marker), 10, "the child to start")
        code, _, err = self.stop(proc)
        self.assertEqual(code, 0, err)
        self.assertEqual(processes_matching("sleep " + marker), [])
        [run] = self.history()
        self.assertEqual(run["status"], "queued")  # no failure: its slot runs at the next start
        self.assertIn("stopped as taskd shut down", run["reason"])
        self.assertIn("SIGTERM", run["reason"])
        self.assertTrue(self.events(log, "loop.stopping"))

    def test_a_second_sigint_kills_at_once_and_the_run_is_recovered_as_lost(self):
        marker = self.unique_sleep()
        started = os.path.join(self.tmp, "started")
        # The child ignores SIGTERM, and its grace is long: only a second SIGINT ends it soon.
        self.add("stubborn", "--every", "1h", "--start-now", "--kill-grace", "1h", "--shell", "--",
                 "trap '' TERM; touch %s; sleep %s" % (started, marker))
        proc, log = self.start("run")
        wait_for(lambda: os.path.exists(started), 10, "the child to start")
        proc.send_signal(signal.SIGINT)
        wait_for(lambda: self.events(log, "loop.stopping"), 10, "loop.stopping")
        code, _, err = self.stop(proc, signal.SIGINT, seconds=10)
        self.assertEqual(code, 130, err)
        wait_for(lambda: not processes_matching("sleep " + marker), 5, "the child to be killed")
        self.assertEqual([r["status"] for r in self.history()], ["running"])
        code, _, err = self.run_taskd("tick")
        self.assertEqual(code, 0, err)
        self.assertIn("event=run.lost", err)
        self.assertEqual(self.history()[-1]["status"], "lost")

    def test_sighup_reopens_the_log_file(self):
        proc, log = self.start("run")
        os.rename(log, log + ".1")
        proc.send_signal(signal.SIGHUP)
        wait_for(lambda: self.events(log, "log.reopened"), 10, "log.reopened in the new file")
        code, _, err = self.stop(proc)
        self.assertEqual(code, 0, err)

    def test_a_child_dies_with_its_killed_worker(self):
        marker = self.unique_sleep()
        self.add("orphan", "--every", "1h", "--start-now", "--", "sleep", marker)
        proc, _ = self.start("run")
        wait_for(lambda: processes_matching("sleep " + marker), 10, "the child to start")
        proc.kill()
        proc.wait(timeout=10)
        wait_for(lambda: not processes_matching("sleep " + marker), 5, "the child to die with taskd")

    def test_changes_to_other_files_beside_the_database_wake_no_logged_pass(self):
        # The log file is in the database's directory, as in every test here:
        # each line the loop writes is a change there. A wake without a cause
        # that logged itself would wake the loop again, without end.
        proc, log = self.start("run", "--tick", "1h")
        wait_for(lambda: self.events(log, "loop.sleep"), 20, "the first pass to end")
        with open(os.path.join(self.tmp, "unrelated"), "w") as f:
            f.write("not the database\n")
        proc.send_signal(signal.SIGHUP)
        wait_for(lambda: self.events(log, "log.reopened"), 20, "log.reopened")
        code, _, err = self.stop(proc)
        self.assertEqual(code, 0, err)
        reasons = [wake["reason"] for wake in self.events(log, "loop.wake")]
        causes = {"child_exit", "db_change", "timer", "signal"}
        self.assertEqual([r for r in reasons if not causes & set(r.split(","))], [])
        self.assertIn("signal", reasons)

    def test_bad_options_are_usage_errors(self):
        for args in (["run", "--tick", "0s"], ["work", "--concurrency", "0"], ["run", "--log-level", "loud"]):
            code, _, err = self.run_taskd(*args)
            self.assertEqual(code, 2, (args, err))
            self.assertOneErrorLine(err, args[1])


class WorkTest(LoopTestCase):
    def test_work_runs_what_a_tick_queued_and_wakes_for_later_ticks(self):
        out_file = os.path.join(self.tmp, "ran")
        proc, log = self.start("work", "--tick", "1h")
        self.add("first", "--every", "1h", "--start-now", "--shell", "--", "echo first >> %s" % out_file)
        self.ok("tick")
        wait_for(lambda: self.events(log, "run.finished"), 5, "the queued run to finish")
        self.add("second", "--every", "1h", "--start-now", "--shell", "--", "echo second >> %s" % out_file)
        self.assertEqual(len(self.events(log, "run.queued")), 0)  # a worker does not enqueue
        self.ok("tick")
        wait_for(lambda: len(self.events(log, "run.finished")) == 2, 5, "the second run to finish")
        code, _, err = self.stop(proc)
        self.assertEqual(code, 0, err)
        with open(out_file) as f:
            self.assertEqual(f.read().split(), ["first", "second"])


if __name__ == "__main__":
    unittest.main()
