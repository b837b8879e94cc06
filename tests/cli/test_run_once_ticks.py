"""run-once, called from cron, is a scheduler like taskd run (taskd(1),
run-once): status shows its ticks and their cadence, metrics' heartbeat is
its last tick, check does not say "no scheduler" while it ticks on its
cadence, explain does not tell to call it from cron while it does, the
slots a tick finds missed between two ticks say so, and add warns of a
task due more often than the only scheduler ticks. Every time is explicit
(faketime); nothing sleeps."""

import datetime
import unittest

from taskd_test import TaskdTestCase

T0 = "2026-11-21 10:00:00"
HOST = "cron1"


def at(text, seconds):
    """The faketime spec `seconds` after `text`."""
    moment = datetime.datetime.fromisoformat(text) + datetime.timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def unix(text):
    return datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.timezone.utc).timestamp()


class RunOnceTicksTest(TaskdTestCase):
    def tick(self, seconds):
        """run-once from cron on HOST, `seconds` after T0."""
        self.run_once("--host-id", HOST, faketime=at(T0, seconds))

    def test_status_shows_the_ticks_and_their_cadence(self):
        self.tick(0)
        self.tick(60)
        status = self.json_of("status", faketime=at(T0, 80))
        self.assertEqual(status["ticks"], [{"host": HOST, "ticked_at": "2026-11-21T10:01:00Z", "every": 60}])
        self.assertEqual(status["workers"], [])
        self.assertIn(f"Ticked by run-once on {HOST} 20s ago, every ~1m\n", self.ok("status", faketime=at(T0, 80)))

    def test_metrics_heartbeat_is_the_last_tick(self):
        self.tick(0)
        self.tick(60)
        out = self.ok("metrics", faketime=at(T0, 80))
        self.assertIn(f"taskd_scheduler_heartbeat_timestamp_seconds {unix(T0) + 60:.3f}\n", out)

    def test_check_sees_no_missing_scheduler_while_run_once_ticks_on_its_cadence(self):
        # cron every 5 minutes; a task every minute is due between the ticks
        self.add("poll", "--every", "1m", "--phase", "0", "--", "true", faketime=T0)
        self.tick(0)
        self.tick(300)
        code, out, err = self.run_taskd("check", faketime=at(T0, 300 + 240))  # due for 3m, last tick 4m ago
        self.assertEqual(code, 0, out + err)
        code, out, err = self.run_taskd("check", faketime=at(T0, 300 + 660))  # two ticks missed
        self.assertEqual(code, 2, out + err)
        self.assertIn(f"CRITICAL scheduler: no scheduler has ticked for 11m (taskd run-once on {HOST}, every ~5m, "
                      "last 2026-11-21T10:05:00Z) while 1 task is due", out)

    def test_explain_does_not_tell_to_call_run_once_while_it_ticks(self):
        self.add("poll", "--every", "1m", "--phase", "0", "--", "true", faketime=T0)
        self.tick(0)
        self.tick(300)
        facts = self.json_of("explain", "poll", faketime=at(T0, 300 + 90))["facts"]
        [scheduler] = [fact for fact in facts if fact["kind"] == "scheduler"]
        self.assertTrue(scheduler["scheduler_running"])
        self.assertEqual(scheduler["text"],
                         f"taskd run-once on {HOST} last ticked at 2026-11-21T10:05:00Z (every ~5m).")
        facts = self.json_of("explain", "poll", faketime=at(T0, 3600))["facts"]
        [scheduler] = [fact for fact in facts if fact["kind"] == "scheduler"]
        self.assertFalse(scheduler["scheduler_running"])
        self.assertNotIn("call taskd run-once from cron", scheduler["text"])
        self.assertIn("has not since", scheduler["text"])

    def test_slots_between_two_ticks_say_so_and_those_missed_while_none_ticked_too(self):
        self.add("poll", "--every", "30s", "--phase", "0", "--", "true", faketime=T0)
        self.tick(10)
        self.tick(70)   # 10:00:30 skipped, 10:01:00 runs
        self.tick(3600)  # nothing ticked for an hour
        skipped = [run for run in self.history("poll") if run["status"] == "skipped"]
        reasons = sorted((run["scheduled_at"], run["reason"]) for run in skipped)
        self.assertEqual(len(reasons), 2, reasons)
        self.assertEqual(reasons[0][0], "2026-11-21T10:00:30Z")
        self.assertIn("missed between two ticks", reasons[0][1])
        self.assertIn("missed while no scheduler ran", reasons[1][1])

    def test_add_warns_of_a_task_due_more_often_than_the_only_scheduler_ticks(self):
        self.tick(0)
        self.tick(60)
        code, _, err = self.run_taskd("add", "fast", "--every", "30s", "--", "true", faketime=at(T0, 70))
        self.assertEqual(code, 0, err)
        self.assertIn(f"taskd: warning: fast: the only scheduler seen, taskd run-once on {HOST}, ticks every ~1m: "
                      "a task due every 30s runs at most once a tick", err)
        code, _, err = self.run_taskd("add", "slow", "--every", "5m", "--", "true", faketime=at(T0, 70))
        self.assertEqual((code, err), (0, ""))


if __name__ == "__main__":
    unittest.main()
