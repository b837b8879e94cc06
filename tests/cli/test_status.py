"""taskd status and taskd metrics: what runs, on which worker, what waits,
what is disabled and why; Prometheus text for node_exporter."""

import datetime
import os
import re
import signal
import socket
import unittest

from loop_helpers import LoopTestCase, wait_for
from taskd_test import STORE, parse_time, processes_matching, prometheus_samples



class StatusTest(LoopTestCase):
    def test_status_shows_the_worker_its_run_the_queue_and_disabled_tasks(self):
        marker = self.unique_sleep()
        self.add("broken", "--every", "1h", "--start-now", "--shell", "--", "echo 'URL is invalid'; exit 78")
        self.add("long", "--every", "1h", "--start-now", "--priority", "9", "--retry", "1h", "--", "sleep", marker)
        self.add("waiting", "--every", "1h", "--start-now", "--group", "batch", "--", "true")
        proc, log = self.start("run", "--concurrency", "1")
        wait_for(lambda: processes_matching("sleep " + marker), 10, "the long run to start")
        status = self.json_of("status")
        self.assertEqual([(w["role"], w["pid"], w["runs"], w["state"]) for w in status["workers"]],
                         [("run", proc.pid, 1, "alive")])
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

        # The stop queued the long run's slot again; without the task, run-once runs the rest.
        self.ok("rm", "long")
        self.run_once()
        status = self.json_of("status")
        self.assertEqual((status["workers"], status["running"], status["queue"]), ([], [], []))
        self.assertEqual(status["disabled"], [{"name": "broken", "reason": "URL is invalid"}])


class WorkersTest(LoopTestCase):
    def workers(self):
        return self.json_of("status")["workers"]

    def test_an_idle_loop_is_listed_until_it_stops(self):
        proc, _ = self.start("run", "--concurrency", "3")
        [worker] = wait_for(self.workers, 10, "the loop's row")
        self.assertEqual((worker["role"], worker["pid"], worker["host"], worker["concurrency"], worker["runs"],
                          worker["state"]), ("run", proc.pid, socket.gethostname(), 3, 0, "alive"))
        self.assertLessEqual(parse_time(worker["since"]), parse_time(worker["heartbeat_at"]))
        text = self.ok("status")
        self.assertRegex(text, r"(?m)^run +%d +%s .* 3 +0 +[+-]\d+\.\ds +(cgroup|subreaper) +alive$"
                         % (proc.pid, re.escape(socket.gethostname())))
        # one machine: a file has one clock; a server on it agrees within a round trip
        self.assertLessEqual(abs(worker["clock_offset_ms"]), 0 if STORE == "sqlite" else 100)
        code, _, err = self.stop(proc)
        self.assertEqual(code, 0, err)
        self.assertEqual(self.workers(), [])

    def test_a_loop_refreshes_its_heartbeat_every_ten_seconds(self):
        # Ten times as fast: libfaketime also shortens the loop's poll() timeouts.
        proc, _ = self.start("run", faketime="@2026-11-21 14:00:00 x10")

        def heartbeats():
            return self.sql("SELECT pid, started_at, heartbeat_at FROM workers")

        [(pid, started_at, first)] = wait_for(heartbeats, 10, "the loop's row")
        beats = [first]
        while len(beats) < 3:
            [(_, _, latest)] = wait_for(lambda: [row for row in heartbeats() if row[2] > beats[-1]], 20,
                                        "a newer heartbeat")
            beats.append(latest)
        gaps = [later - earlier for earlier, later in zip(beats, beats[1:])]
        self.assertEqual(first, started_at)
        for gap in gaps:
            self.assertGreaterEqual(gap, 10_000)
            self.assertLess(gap, 25_000)  # inside the 30 s in which a loop counts as alive (slack for load)
        os.kill(pid, signal.SIGTERM)
        proc.communicate(timeout=30)
        self.assertEqual(heartbeats(), [])

    def test_a_killed_loop_is_dead_in_status_and_gone_after_the_next_recovery(self):
        proc, _ = self.start("work", "--concurrency", "2")
        wait_for(self.workers, 10, "the worker's row")
        proc.kill()
        proc.communicate(timeout=30)
        [worker] = self.workers()
        self.assertEqual((worker["role"], worker["pid"], worker["state"]), ("work", proc.pid, "dead"))
        self.assertIn("dead (the next recovery removes it)", self.ok("status"))
        self.ok("tick")
        self.assertEqual(self.workers(), [])

    def test_another_hosts_silent_worker_is_shown_stale(self):
        self.ok("tick")  # creates the database
        now_ms = int(datetime.datetime.now(datetime.timezone.utc).timestamp() * 1000)
        self.sql("INSERT INTO workers (role, host, pid, boot_id, process_start, concurrency, started_at, "
                 "heartbeat_at) VALUES ('work', 'elsewhere.example', 77, 'b', 1, 8, ?, ?)",
                 (now_ms - 3600_000 + 10_000, now_ms - 300_000))
        [worker] = self.workers()
        self.assertEqual((worker["host"], worker["pid"], worker["state"]), ("elsewhere.example", 77, "stale"))
        self.assertIn("stale (last heartbeat 5m ago)", self.ok("status"))
        self.ok("tick")  # silent for less than an hour: kept
        self.assertEqual(len(self.workers()), 1)
        # Silent for over an hour, but the host's last: listed for a week.
        self.sql("UPDATE workers SET heartbeat_at = ?", (now_ms - 3600_000 - 1000,))
        self.ok("tick")
        self.assertEqual(len(self.workers()), 1)
        self.assertIn("stale (last heartbeat 1h", self.ok("status"))
        self.sql("UPDATE workers SET heartbeat_at = ?", (now_ms - 7 * 86400_000 - 1000,))
        self.ok("tick")
        self.assertEqual(self.workers(), [])


class MetricsTest(LoopTestCase):
    def test_metrics_are_prometheus_text_with_runs_lateness_and_queue(self):
        self.add("ok", "--every", "1h", "--start-now", "--", "true")
        self.add("bad", "--every", "1h", "--start-now", "--retry", "30m", "--", "false")
        self.run_once()
        self.add("later", "--every", "1h", "--start-now", "--group", "g", "--", "true")
        self.ok("tick")
        text = self.ok("metrics")
        samples = prometheus_samples(self, text)
        self.assertEqual(samples['taskd_runs_total{status="succeeded"}'], 1)
        self.assertEqual(samples['taskd_runs_total{status="failed"}'], 1)
        self.assertEqual(samples['taskd_runs_in_flight{status="queued"}'], 1)
        self.assertEqual(samples['taskd_runs_in_flight{status="running"}'], 0)
        self.assertEqual(samples['taskd_tasks{state="failing"}'], 1)
        self.assertEqual(samples['taskd_tasks{state="active"}'], 2)
        self.assertEqual(samples['taskd_history_runs'], 2)  # the queued run is not history yet
        self.assertIn("# TYPE taskd_runs_total counter", text)
        self.assertEqual(samples['taskd_start_lateness_seconds_count'], 2)
        self.assertEqual(samples['taskd_start_lateness_seconds_bucket{le="+Inf"}'], 2)
        self.assertLessEqual(samples['taskd_start_lateness_seconds_bucket{le="0.005"}'],
                             samples['taskd_start_lateness_seconds_bucket{le="300"}'])
        self.assertEqual(samples['taskd_queue_depth{group="g"}'], 1)
        self.assertNotIn('taskd_queue_depth{group=""}', samples)

    def metric_samples(self):
        return prometheus_samples(self, self.ok("metrics"))

    def test_each_task_has_its_runs_by_status_and_a_histogram_of_its_lateness(self):
        self.add("bad", "--cron", "0 * * * *", "--retry", "none", "--", "false", faketime="2026-11-21 13:30:00")
        self.add("idle", "--manual", "--", "true")
        self.add("hourly", "--cron", "0 * * * *", "--keep-runs", "1", "--", "true", faketime="2026-11-21 13:30:00")
        self.run_once(faketime="2026-11-21 14:00:02")
        self.run_once(faketime="2026-11-21 15:00:00.050")
        self.assertEqual(len(self.history("hourly")), 1)  # pruned: the counters keep both
        samples = self.metric_samples()
        runs = 'taskd_task_runs_total{task="%s",status="%s"}'
        self.assertEqual(samples[runs % ("hourly", "succeeded")], 2)
        self.assertEqual(samples[runs % ("hourly", "failed")], 0)  # there before the first failure
        self.assertNotIn(runs % ("hourly", "lost"), samples)
        self.assertEqual(samples[runs % ("bad", "failed")], 2)
        self.assertEqual(samples[runs % ("bad", "succeeded")], 0)
        self.assertFalse([name for name in samples if 'task="idle"' in name and "runs_total" in name])
        # Started 2 s and then 50 ms after their slots, as the frozen clocks say.
        bucket = 'taskd_task_start_lateness_seconds_bucket{task="hourly",le="%s"}'
        self.assertEqual([samples[bucket % le] for le in ("0.1", "0.5", "1", "5", "30", "60", "300", "+Inf")],
                         [1, 1, 1, 2, 2, 2, 2, 2])
        self.assertAlmostEqual(samples['taskd_task_start_lateness_seconds_sum{task="hourly"}'], 2.05)
        self.assertEqual(samples['taskd_task_start_lateness_seconds_count{task="hourly"}'], 2)
        self.assertNotIn('taskd_task_start_lateness_seconds_count{task="idle"}', samples)
        # A task removed takes its counters along; one of the same name (and on SQLite, of the same
        # id: the last) starts from none.
        self.ok("rm", "hourly")
        self.assertEqual(self.sql("SELECT count(*) FROM task_run_stats WHERE task_id NOT IN (SELECT id FROM tasks)"),
                         [(0,)])
        self.add("hourly", "--every", "1h", "--", "true")
        self.assertFalse([name for name in self.metric_samples()
                          if 'task="hourly"' in name and ("runs_total" in name or "lateness" in name)])

    def test_a_task_s_counters_stay_in_one_row_however_many_commands_end_its_runs(self):
        self.add("by-hand", "--manual", "--", "true")
        for _ in range(4):
            self.ok("trigger", "by-hand")
            self.run_once()
        self.assertEqual(self.metric_samples()['taskd_task_runs_total{task="by-hand",status="succeeded"}'], 4)
        # A server's shard is sought from the host, not from each command's connection.
        self.assertEqual(self.sql("SELECT count(*) FROM task_run_stats"), [(1,)])

    def test_a_task_s_counters_add_up_its_skipped_runs(self):
        self.add("daily", "--cron", "0 9 * * *", "--catch-up", "none", "--", "true", faketime="2026-11-20 08:00:00")
        self.run_once(faketime="2026-11-23 12:00:00")
        skipped = len([run for run in self.history("daily") if run["status"] == "skipped"])
        self.assertGreater(skipped, 0)
        self.assertEqual(self.metric_samples()['taskd_task_runs_total{task="daily",status="skipped"}'], skipped)


if __name__ == "__main__":
    unittest.main()
