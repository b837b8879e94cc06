"""Several hosts on one database: --host-id, tasks pinned with --on-host,
and ticks of several hosts at once. On a SQLite file the hosts are processes
of this machine sharing the file; on a server (cli-postgresql.*) they share
the server, as hosts do."""

import os
import time
import unittest

from taskd_test import STORE, TaskdTestCase


def far_phase(period):
    """A --phase that puts the slot after a --start-now one half a period
    away: left to itself, the phase comes from the task's name, and a slot
    that falls within a test would queue a second run."""
    return f"{(int(time.time()) + period // 2) % period}s"


def write_tasks(path, count):
    phase = far_phase(7 * 86400)
    with open(path, "w") as f:
        for i in range(count):
            f.write(f'[[task]]\nname = "t{i}"\nevery = "1w"\nphase = "{phase}"\nstart_now = true\n'
                    f'command = ["true"]\n\n')


class HostsTest(TaskdTestCase):
    def test_a_pinned_task_runs_only_on_its_host_and_waits_while_it_is_away(self):
        seen = os.path.join(self.tmp, "seen")
        self.add("pinned", "--every", "1h", "--phase", far_phase(3600), "--start-now", "--on-host", "web1", "--shell", "--",
                 f'echo "${{TASKD_HOST-none}}" > {seen}')
        self.add("free", "--every", "1h", "--phase", far_phase(3600), "--start-now", "--", "true")
        self.assertEqual(self.task("pinned")["on_host"], "web1")
        self.assertIn("on host", self.ok("show", "pinned"))

        self.ok("run-once", "--host-id", "web2")
        self.assertEqual(sorted((r["task"], r["status"]) for r in self.history()),
                         [("free", "succeeded"), ("pinned", "queued")])
        [pinned] = self.json_of("status")["pinned"]
        self.assertEqual((pinned["host"], pinned["queued"], pinned["waiting"]), ("web1", 1, True))
        self.assertIn("waiting for web1 (never seen)", self.ok("status"))

        # web1's loop last beat two hours ago: the host is listed and named
        # as last seen then (a tick keeps its row, the last of the host).
        beat_ms = int(time.time() * 1000) - 2 * 3600_000
        self.sql("INSERT INTO workers (role, host, pid, boot_id, process_start, concurrency, started_at, "
                 "heartbeat_at) VALUES ('run', 'web1', 4242, 'another-boot', 1, 1, ?, ?)", (beat_ms, beat_ms))
        self.ok("tick")
        self.assertIn("waiting for web1 (last seen 2h ago)", self.ok("status"))
        self.assertEqual([w["host"] for w in self.json_of("status")["workers"]], ["web1"])
        self.sql("DELETE FROM workers")

        self.ok("run-once", "--host-id", "web1")
        self.assertEqual(sorted((r["task"], r["status"]) for r in self.history()),
                         [("free", "succeeded"), ("pinned", "succeeded")])
        with open(seen) as f:  # the host's name, where several hosts may share the store
            self.assertEqual(f.read().strip(), "web1" if STORE == "postgresql" else "none")
        self.assertEqual(self.json_of("status")["pinned"], [])

    def test_on_host_goes_through_task_files_export_and_edit(self):
        tasks = os.path.join(self.tmp, "tasks.toml")
        with open(tasks, "w") as f:
            f.write('[[task]]\nname = "backup"\nevery = "1d"\non_host = "db-1"\ncommand = ["true"]\n')
        self.ok("apply", tasks)
        self.assertEqual(self.task("backup")["on_host"], "db-1")
        self.assertIn('on_host = "db-1"', self.ok("export"))
        self.ok("edit", "backup", "--on-host", "")
        self.assertEqual(self.task("backup")["on_host"], "")
        self.assertNotIn("on_host", self.ok("export"))

    def test_a_malformed_host_id_is_refused_and_nothing_is_written(self):
        code, out, err = self.run_taskd("add", "a", "--every", "1h", "--on-host", "web 1", "--", "true")
        self.assertEqual((code, out), (65, ""))
        self.assertOneErrorLine(err, "--on-host", "host id", "web 1")
        self.assertEqual(self.tasks(), [])
        for command in ("run-once", "tick", "run", "work"):
            with self.subTest(command=command):
                code, out, err = self.run_taskd(command, "--host-id", "-x")
                self.assertEqual((code, out), (65, ""))
                self.assertOneErrorLine(err, "--host-id", "must not start with '-'")

    def test_a_host_id_that_a_live_taskd_of_another_machine_has_is_refused(self):
        self.add("a", "--every", "1h", "--", "true")  # makes the database
        now_ms = int(time.time() * 1000)
        self.sql("INSERT INTO workers (role, host, pid, boot_id, process_start, concurrency, started_at, "
                 "heartbeat_at, machine_id) VALUES ('run', 'web1', 4242, 'another-boot', 1, 1, ?, ?, 'another-machine')",
                 (now_ms, now_ms))
        # On a server also the commands that recover and claim runs without
        # registering; a file is one machine's.
        unregistered = ("run-once", "tick") if STORE == "postgresql" else ()
        for command in ("run", "work") + unregistered:
            with self.subTest(command=command):
                code, out, err = self.run_taskd(command, "--host-id", "web1")
                self.assertEqual((code, out), (65, ""))
                self.assertIn('host id "web1" is in use by a taskd on another machine', err)
                self.assertIn("give each host its own --host-id", err)
        self.assertEqual(self.sql("SELECT host FROM workers"), [("web1",)])

    def test_a_group_cap_holds_across_three_hosts(self):
        intervals = os.path.join(self.tmp, "intervals")
        self.ok("group", "set", "g", "--concurrency", "2")
        for i in range(18):
            self.add(f"t{i}", "--every", "1h", "--phase", far_phase(3600), "--start-now", "--group", "g", "--shell", "--",
                     f'a=$(date +%s.%N); sleep 0.2; echo "$a $(date +%s.%N)" >> {intervals}')
        hosts = [self.popen_taskd("run-once", "--host-id", f"h{i}", "--concurrency", "6") for i in range(3)]
        for host in hosts:
            out, err = host.communicate(timeout=120)
            self.assertEqual(host.returncode, 0, err)
        self.ok("run-once", "--host-id", "h0")  # what the others left queued when the cap held them back
        self.assertEqual(sorted(r["status"] for r in self.history()), ["succeeded"] * 18)
        with open(intervals) as f:
            spans = [tuple(map(float, line.split())) for line in f]
        self.assertEqual(len(spans), 18)
        events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
        running = most = 0
        for _, step in events:
            running += step
            most = max(most, running)
        self.assertLessEqual(most, 2)

    def test_three_hosts_ticking_at_once_queue_each_slot_once(self):
        tasks = os.path.join(self.tmp, "tasks.toml")
        write_tasks(tasks, 10000)
        self.ok("apply", tasks)
        ticks = [self.popen_taskd("tick", "--host-id", f"h{i}", "--log-level", "warn") for i in range(3)]
        for tick in ticks:
            out, err = tick.communicate(timeout=120)
            self.assertEqual(tick.returncode, 0, err)
        self.assertEqual(self.sql("SELECT count(*), count(DISTINCT task_id) FROM runs"), [(10000, 10000)])
        self.assertEqual(self.sql("SELECT count(*) FROM (SELECT task_id, scheduled_at FROM runs "
                                  "GROUP BY task_id, scheduled_at HAVING count(*) > 1) d"), [(0,)])


if __name__ == "__main__":
    unittest.main()
