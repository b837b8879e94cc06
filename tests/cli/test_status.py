"""taskd status and taskd metrics: what runs, on which worker, what waits,
what is disabled and why; Prometheus text for node_exporter."""

import os
import re
import unittest

from loop_helpers import LoopTestCase, wait_for
from taskd_test import processes_matching

SAMPLE = re.compile(r'^[a-z_]+(\{[a-z]+="([^"\\]|\\.)*"\})? [0-9.e+-]+$')


class StatusTest(LoopTestCase):
    def test_status_shows_the_worker_its_run_the_queue_and_disabled_tasks(self):
        marker = self.unique_sleep()
        self.add("broken", "--every", "1h", "--start-now", "--shell", "--", "echo 'URL is invalid'; exit 78")
        self.add("long", "--every", "1h", "--start-now", "--priority", "9", "--retry", "1h", "--", "sleep", marker)
        self.add("waiting", "--every", "1h", "--start-now", "--group", "batch", "--", "true")
        proc, log = self.start("run", "--concurrency", "1")
        wait_for(lambda: processes_matching("sleep " + marker), 10, "the long run to start")
        status = self.json_of("status")
        self.assertEqual([(w["pid"], w["runs"], w["alive"]) for w in status["workers"]], [(proc.pid, 1, True)])
        [running] = status["running"]
        self.assertEqual((running["task"], running["worker_pid"]), ("long", proc.pid))
        self.assertGreaterEqual(running["age"], 0)
        self.assertIsNotNone(running["deadline_at"])
        self.assertEqual(status["queue"], [{"group": "", "queued": 1}, {"group": "batch", "queued": 1}])
        self.assertEqual(status["disabled"], [])
        text = self.ok("status")
        self.assertIn("long", text)
        self.assertIn("batch", text)
        code, _, err = self.stop(proc)
        self.assertEqual(code, 0, err)

        self.run_once()
        status = self.json_of("status")
        self.assertEqual((status["workers"], status["running"], status["queue"]), ([], [], []))
        self.assertEqual(status["disabled"], [{"name": "broken", "reason": "URL is invalid"}])


class MetricsTest(LoopTestCase):
    def test_metrics_are_prometheus_text_with_runs_lateness_and_queue(self):
        self.add("ok", "--every", "1h", "--start-now", "--", "true")
        self.add("bad", "--every", "1h", "--start-now", "--retry", "30m", "--", "false")
        self.run_once()
        self.add("later", "--every", "1h", "--start-now", "--group", "g", "--", "true")
        self.ok("tick")
        text = self.ok("metrics")
        samples = {}
        for line in text.splitlines():
            if line.startswith("#"):
                self.assertRegex(line, r"^# (HELP|TYPE) taskd_[a-z_]+ ")
                continue
            self.assertRegex(line, SAMPLE)
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
        self.assertEqual(samples['taskd_runs{status="succeeded"}'], 1)
        self.assertEqual(samples['taskd_runs{status="failed"}'], 1)
        self.assertEqual(samples['taskd_runs{status="queued"}'], 1)
        self.assertEqual(samples['taskd_start_lateness_seconds_count'], 2)
        self.assertEqual(samples['taskd_start_lateness_seconds_bucket{le="+Inf"}'], 2)
        self.assertLessEqual(samples['taskd_start_lateness_seconds_bucket{le="0.005"}'],
                             samples['taskd_start_lateness_seconds_bucket{le="300"}'])
        self.assertEqual(samples['taskd_queue_depth{group="g"}'], 1)
        self.assertNotIn('taskd_queue_depth{group=""}', samples)


if __name__ == "__main__":
    unittest.main()
