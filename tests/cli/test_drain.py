"""taskd run --drain: on SIGTERM the loop starts nothing new and lets its runs
finish for the drain; a run still going then is ended, uses no retry,
notifies nobody, and its slot runs again at the next start."""

import os
import signal
import time
import unittest

from loop_helpers import LoopTestCase, wait_for
from taskd_test import STORE


class DrainTest(LoopTestCase):
    def setUp(self):
        super().setUp()
        self.go = os.path.join(self.tmp, "go")
        self.started = os.path.join(self.tmp, "started")
        self.slots = os.path.join(self.tmp, "slots")
        self.notified = os.path.join(self.tmp, "notified")

    def add_waiting_task(self, name="waits", *options):
        """A task that writes its slot, then waits for the file `go` and prints; told of failures by --notify."""
        script = ('echo "$TASKD_SCHEDULED_AT" >> %s; touch %s; while [ ! -e %s ]; do sleep 0.05; done; echo done'
                  % (self.slots, self.started, self.go))
        # Its next slot after the --start-now one half an hour away: one drawn from its name came due during a
        # test once (an extra row in its history).
        phase = "%ds" % ((int(time.time()) + 1800) % 3600)
        self.add(name, "--every", "1h", "--phase", phase, "--start-now", "--retry", "1m,5m", "--notify",
                 "touch %s" % self.notified, *options, "--shell", "--", script)

    def slots_written(self):
        with open(self.slots) as f:
            return f.read().split()

    def assertStopsWithin(self, proc, seconds):
        out, err = proc.communicate(timeout=seconds)
        self.assertEqual(proc.returncode, 0, err)

    def test_a_run_in_flight_finishes_within_the_drain_and_nothing_new_starts(self):
        self.add_waiting_task()
        other = os.path.join(self.tmp, "other-ran")
        self.add("other", "--every", "1h", "--", "touch", other)
        proc, log = self.start("run", "--concurrency", "2", "--drain", "1h")
        self.wait_for_file(self.started)
        proc.send_signal(signal.SIGTERM)
        wait_for(lambda: self.events(log, "loop.stopping"), 20, "loop.stopping")
        # A run queued during the drain is not claimed, though a slot is free.
        changes = lambda: [w for w in self.events(log, "loop.wake") if "db_change" in w["reason"]]
        seen = len(changes())
        self.ok("trigger", "other")
        wait_for(lambda: len(changes()) > seen, 20, "the loop to see the trigger")
        self.assertIsNone(proc.poll(), "taskd did not wait for its run")
        open(self.go, "w").close()
        self.assertStopsWithin(proc, 30)
        [run] = self.history("waits")
        self.assertEqual((run["status"], run["reason"]), ("succeeded", ""))
        self.assertEqual(self.logs("waits"), "done\n")
        self.assertEqual([r["status"] for r in self.history("other")], ["queued"])
        self.assertFalse(os.path.exists(other))
        self.assertEqual(self.events(log, "loop.ending_runs"), [])

    def assertRequeuedUnharmed(self, log):
        """The run ended by the shutdown is queued again for its slot, as if it had not started; its rerun succeeds
        with the same TASKD_SCHEDULED_AT."""
        [run] = self.history("waits")
        self.assertEqual(run["status"], "queued")
        self.assertIn("stopped as taskd shut down", run["reason"])
        self.assertIn("queued again for its slot", run["reason"])
        self.assertEqual(run["trigger"], "schedule")
        task = self.task("waits")
        self.assertEqual((task["attempt_no"], task["last_status"], task["attempt_uid"]), (0, None, None))
        [requeued] = self.events(log, "run.requeued")
        self.assertEqual((requeued["task"], requeued["run"], requeued["status"]), ("waits", str(run["id"]), "queued"))
        self.assertEqual(self.events(log, "run.finished"), [])
        self.assertFalse(os.path.exists(self.notified), "the shutdown was notified as a failure")
        open(self.go, "w").close()
        self.run_once()
        [rerun] = self.history("waits")
        self.assertEqual((rerun["id"], rerun["status"], rerun["attempt_no"]), (run["id"], "succeeded", 1))
        self.assertEqual(rerun["scheduled_at"], run["scheduled_at"])
        first, second = self.slots_written()
        self.assertEqual(first, second)
        self.assertFalse(os.path.exists(self.notified))
        self.assertEqual(self.task("waits")["attempt_no"], 0)

    def test_a_run_longer_than_the_drain_is_ended_and_its_slot_runs_again_at_the_next_start(self):
        self.add_waiting_task()
        proc, log = self.start("run", "--drain", "1s")
        self.wait_for_file(self.started)
        proc.send_signal(signal.SIGTERM)
        self.assertStopsWithin(proc, 30)
        [ending] = self.events(log, "loop.ending_runs")
        self.assertEqual(ending["why"], "the drain of 1s ended")
        self.assertRequeuedUnharmed(log)

    def assertSecondSignalEndsTheRunsAtOnce(self, second):
        self.add_waiting_task()
        proc, log = self.start("run", "--drain", "1h")
        self.wait_for_file(self.started)
        proc.send_signal(signal.SIGTERM)
        wait_for(lambda: self.events(log, "loop.stopping"), 20, "loop.stopping")
        proc.send_signal(second)
        self.assertStopsWithin(proc, 30)
        [ending] = self.events(log, "loop.ending_runs")
        self.assertEqual(ending["why"], "%s during the drain" % second.name)
        self.assertRequeuedUnharmed(log)

    def test_a_second_sigterm_during_the_drain_ends_the_runs_at_once(self):
        self.assertSecondSignalEndsTheRunsAtOnce(signal.SIGTERM)

    def test_a_sigint_during_the_drain_ends_the_runs_at_once(self):
        self.assertSecondSignalEndsTheRunsAtOnce(signal.SIGINT)

    def test_the_loop_keeps_its_heartbeat_while_it_drains(self):
        # Neither `status` nor another host may take a draining taskd for dead.
        self.add_waiting_task()
        proc, log = self.start("run", "--drain", "1h")
        self.wait_for_file(self.started)
        proc.send_signal(signal.SIGTERM)
        wait_for(lambda: self.events(log, "loop.stopping"), 20, "loop.stopping")
        [(beat,)] = self.sql("SELECT heartbeat_at FROM workers")
        wait_for(lambda: self.sql("SELECT heartbeat_at FROM workers")[0][0] > beat, 25, "a heartbeat during the drain")
        open(self.go, "w").close()
        self.assertStopsWithin(proc, 30)
        self.assertEqual(self.sql("SELECT count(*) FROM workers"), [(0,)])

    @unittest.skipUnless(STORE == "postgresql", "hosts share a database on a server")
    def test_on_a_server_another_host_runs_the_slot_at_once(self):
        self.add_waiting_task()
        first, _ = self.start("run", "--host-id", "first", "--drain", "1s", log_name="first.log")
        self.wait_for_file(self.started)
        second, _ = self.start("work", "--host-id", "second", log_name="second.log")
        os.remove(self.started)
        first.send_signal(signal.SIGTERM)
        self.assertStopsWithin(first, 30)
        self.wait_for_file(self.started)
        open(self.go, "w").close()
        wait_for(lambda: [r["status"] for r in self.history("waits")] == ["succeeded"], 20, "the second host's run")
        self.assertEqual(self.sql("SELECT worker_host FROM runs"), [("second",)])
        first_slot, second_slot = self.slots_written()
        self.assertEqual(first_slot, second_slot)
        self.assertFalse(os.path.exists(self.notified))
        self.assertEqual(self.stop(second)[0], 0)

    def test_work_drains_as_run_does(self):
        self.add_waiting_task()
        self.ok("trigger", "waits")
        proc, log = self.start("work", "--drain", "1h")
        self.wait_for_file(self.started)
        proc.send_signal(signal.SIGTERM)
        wait_for(lambda: self.events(log, "loop.stopping"), 20, "loop.stopping")
        self.assertIsNone(proc.poll(), "taskd work did not wait for its run")
        open(self.go, "w").close()
        self.assertStopsWithin(proc, 30)
        self.assertEqual([r["status"] for r in self.history("waits")], ["succeeded"])

    def test_a_drain_that_is_no_duration_is_refused_as_a_tick_is(self):
        for value, expected in (("", 2), ("soon", 65), ("-5s", 65)):
            code, out, err = self.run_taskd("run", "--drain", value)
            self.assertEqual((code, out), (expected, ""), (value, err))
            self.assertOneErrorLine(err, "--drain")


if __name__ == "__main__":
    unittest.main()
