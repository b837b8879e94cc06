"""The policy through the real binary: trigger, edit, groups, overlap modes,
fencing of stale attempts, state across a timebox kill, and seed 003's
refresh example against a local HTTP server."""

import os
import subprocess
import unittest

from taskd_test import STORE, TaskdTestCase, processes_matching

T0 = "2026-11-21 14:00:00"
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")
PYTHON = "/usr/bin/python3"


class PolicyTest(TaskdTestCase):
    def statuses(self, name):
        return [r["status"] for r in self.history(name)]

    def worker_of(self, command):
        """The pid of the taskd process (not faketime) running `command` on self.db."""
        workers = [w for w in processes_matching("%s %s" % (self.db, command)) if "faketime" not in w[1]]
        self.assertEqual(len(workers), 1, workers)
        return workers[0][0]

    # -- trigger --------------------------------------------------------------

    def test_trigger_runs_once_now_and_leaves_the_plan_alone(self):
        self.add("report", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        planned = self.task("report")["next_run_at"]
        out = self.ok("trigger", "report", faketime="2026-11-21 14:10:00")
        self.assertIn("queued run", out)
        self.run_once(faketime="2026-11-21 14:10:01")
        runs = self.history("report")
        self.assertEqual([(r["status"], r["trigger"]) for r in runs], [("succeeded", "manual")])
        task = self.task("report")
        self.assertEqual(task["next_run_at"], planned)
        self.assertEqual(task["run_index"], 1)

    def test_trigger_twice_is_one_run_with_overlap_skip(self):
        self.add("once", "--every", "1h", "--", "true")
        first = self.json_of("trigger", "once")
        second = self.json_of("trigger", "once")
        self.assertTrue(first["triggered"])
        self.assertFalse(second["triggered"])
        self.assertEqual(second["run"], first["run"])
        self.run_once()
        self.assertEqual(self.statuses("once"), ["succeeded"])

    def test_trigger_of_a_disabled_task_needs_force(self):
        self.add("broken", "--every", "1h", "--start-now", "--shell", "--",
                 'echo "Provided URL is invalid: x" > "$TASKD_STATUS"; exit 78')
        self.run_once()
        self.assertTrue(self.task("broken")["disabled_until_update"])
        code, out, err = self.run_taskd("trigger", "broken")
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, "broken is disabled", "Provided URL is invalid", "--force")
        self.assertEqual(len(self.history("broken")), 1, "nothing was queued")
        self.ok("trigger", "--force", "broken")
        self.assertFalse(self.task("broken")["disabled_until_update"])
        self.run_once()
        self.assertEqual([r["trigger"] for r in self.history("broken")], ["manual", "schedule"])

    def test_a_manual_task_runs_only_when_triggered(self):
        out = self.add("deploy", "--manual", "--", "true")
        self.assertIn("next run none", out)
        self.run_once()
        self.assertEqual(self.history("deploy"), [])
        self.ok("trigger", "deploy")
        self.run_once()
        self.assertEqual([(r["status"], r["trigger"]) for r in self.history("deploy")], [("succeeded", "manual")])
        task = self.task("deploy")
        self.assertEqual(task["schedule"], {"kind": "manual", "spec": ""})
        self.assertIsNone(task["next_run_at"])
        code, out, err = self.run_taskd("add", "x", "--manual", "--every", "1h", "--", "true")
        self.assertEqual(code, 2)
        self.assertOneErrorLine(err, "exactly one schedule")

    # -- edit -----------------------------------------------------------------

    def test_edit_to_manual_and_back(self):
        self.add("job", "--every", "1h", "--jitter", "5m", "--", "true")
        self.ok("edit", "job", "--manual")
        task = self.task("job")
        self.assertEqual((task["schedule"]["kind"], task["next_run_at"], task["jitter"]), ("manual", None, 0))
        self.ok("edit", "job", "--every", "30m", "--phase", "0", faketime=T0)
        self.assertEqual(self.task("job")["next_run_at"], "2026-11-21T14:30:00Z")

    def test_edit_changes_only_what_is_given_and_keeps_history(self):
        self.add("job", "--every", "1h", "--start-now", "--timeout", "5m", "--env", "A=1", "--", "true")
        self.run_once()
        self.ok("edit", "job", "--timeout", "10m", "--priority", "3")
        task = self.task("job")
        self.assertEqual(task["timeout"], 600)
        self.assertEqual(task["priority"], 3)
        self.assertEqual(task["env"], {"A": "1"})
        self.assertEqual(task["schedule"], {"kind": "every", "spec": "1h"})
        self.assertEqual(self.statuses("job"), ["succeeded"])

    def test_edit_enables_a_task_the_ladder_disabled(self):
        self.add("flaky", "--every", "1h", "--phase", "0", "--start-now", "--retry", "none",
                 "--disable-when-exhausted", "--shell", "--", "exit 1", faketime=T0)
        self.run_once(faketime="2026-11-21 14:00:01")
        self.assertTrue(self.task("flaky")["disabled_until_update"])
        self.ok("edit", "flaky", "--shell", "--", "exit 0", faketime="2026-11-21 14:30:00")
        task = self.task("flaky")
        self.assertFalse(task["disabled_until_update"])
        self.assertEqual(task["attempt_no"], 0)
        self.assertEqual(task["next_run_at"], "2026-11-21T15:00:00Z")
        self.run_once(faketime="2026-11-21 15:00:01")
        self.assertEqual(self.statuses("flaky")[0], "succeeded")

    def test_edit_with_a_new_schedule_plans_from_now(self):
        self.add("tz", "--every", "1h", "--", "true", faketime=T0)
        self.ok("edit", "tz", "--cron", "30 9 * * *", "--tz", "Europe/Berlin", faketime=T0)
        task = self.task("tz")
        self.assertEqual(task["schedule"], {"kind": "cron", "spec": "30 9 * * *"})
        self.assertEqual(task["next_run_at"], "2026-11-22T08:30:00Z")

    def test_bad_edits_write_nothing(self):
        self.add("job", "--every", "1h", "--", "true")
        before = self.task("job")
        for args, fragment in ((["--overlap", "sometimes"], "--overlap"),
                               (["--timeout", "0s"], "--timeout"),
                               (["--retry", "5m,1m"], "--retry"),
                               (["--tolerance", "2h"], "--tolerance"),
                               (["--every", "fortnightly"], "--every")):
            code, out, err = self.run_taskd("edit", "job", *args)
            self.assertEqual(code, 65, err)
            self.assertOneErrorLine(err, fragment)
        self.assertEqual(self.task("job"), before)
        code, out, err = self.run_taskd("edit", "nope", "--timeout", "1m")
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, 'no task named "nope"')

    # -- groups and overlap ---------------------------------------------------

    def test_group_cap_keeps_runs_of_a_group_one_at_a_time(self):
        log = os.path.join(self.tmp, "log")
        for name in ("a", "b", "c"):
            self.add(name, "--every", "1h", "--start-now", "--group", "crawl", "--shell", "--",
                     "echo start >> %s; sleep 0.2; echo end >> %s" % (log, log))
        self.ok("group", "set", "crawl", "--concurrency", "1")
        self.run_once("--concurrency", "4")
        with open(log) as f:
            self.assertEqual(f.read().split(), ["start", "end"] * 3)
        groups = self.json_of("group", "list")
        self.assertEqual([(g["name"], g["concurrency"], g["tasks"]) for g in groups], [("crawl", 1, 3)])

    def test_bad_group_cap_is_refused(self):
        code, out, err = self.run_taskd("group", "set", "crawl", "--concurrency", "0")
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, "--concurrency", "0")
        self.assertFalse(os.path.exists(self.db))

    @unittest.skipIf(STORE == "postgresql", "on a server the run's own worker ends it (test_failover)")
    def test_replace_stops_the_running_attempt_and_its_late_report_is_ignored(self):
        marker = self.unique_sleep()
        started = os.path.join(self.tmp, "started")
        script = 'if [ "$TASKD_RUN_INDEX" = 1 ]; then touch %s; exec sleep %s; fi' % (started, marker)
        self.add("live", "--every", "1m", "--phase", "0", "--timeout", "10m", "--overlap", "replace", "--shell", "--",
                 script, faketime=T0)
        first = self.popen_taskd("run-once", faketime="2026-11-21 14:01:00")
        self.addCleanup(first.kill)
        self.wait_for_file(started)
        self.run_once(faketime="2026-11-21 14:02:01")
        _, err = first.communicate(timeout=30)
        first.stdout.close()
        self.assertEqual(first.returncode, 0, err)
        self.assertIn("outcome ignored", err)
        self.assertEqual(processes_matching("sleep " + marker), [])
        runs = self.history("live")
        self.assertEqual([r["status"] for r in runs], ["succeeded", "failed"])
        self.assertIn("replaced by the run of slot 2026-11-21T14:02:00Z", runs[1]["reason"])
        task = self.task("live")
        self.assertEqual((task["last_status"], task["attempt_no"]), ("succeeded", 0))

    # -- fencing and state ----------------------------------------------------

    def test_a_stale_finisher_is_ignored(self):
        gate = os.path.join(self.tmp, "gate")
        started = os.path.join(self.tmp, "started")
        # The first attempt waits for the gate; the retry ends at once.
        script = ('if [ "$TASKD_ATTEMPT_NO" = 1 ]; then touch %s; while [ ! -e %s ]; do sleep 0.05; done; fi'
                  % (started, gate))
        self.add("slow", "--every", "1h", "--phase", "0", "--start-now", "--timeout", "10m", "--shell", "--",
                 script, faketime=T0)
        first = self.popen_taskd("run-once", faketime="2026-11-21 14:00:05")
        self.addCleanup(first.kill)
        self.wait_for_file(started)
        # Make the attempt look like another host's whose lease expired long
        # ago: the next run-once records it LOST without touching the process.
        self.sql("UPDATE runs SET worker_host = 'elsewhere', lease_expires_at = 0 WHERE status = 'running'")
        out = self.run_once(faketime="2026-11-21 14:00:30")
        self.assertIn("lost", out)
        self.assertEqual(self.statuses("slow"), ["succeeded", "lost"])
        open(gate, "w").close()
        _, err = first.communicate(timeout=30)
        first.stdout.close()
        self.assertIn("outcome ignored", err)
        runs = self.history("slow")
        self.assertEqual([(r["status"], r["attempt_no"]) for r in runs], [("succeeded", 2), ("lost", 1)])
        task = self.task("slow")
        self.assertEqual((task["last_status"], task["attempt_no"], task["attempt_uid"]), ("succeeded", 0, None))

    def test_state_survives_a_timebox_kill(self):
        # Each run reads the cursor, advances it, saves it, and then works
        # past its 1-second timebox; the next attempt goes on from the cursor.
        script = ('n=$(cat "$TASKD_STATE"); n=${n:-0}; echo "resumed at $n"; echo $((n + 10)) > "$TASKD_STATE";'
                  ' exec sleep %s' % self.unique_sleep())
        self.add("chunks", "--every", "1h", "--phase", "0", "--start-now", "--timeout", "1s", "--kill-grace", "1s",
                 "--retry", "0s,0s", "--shell", "--", script, faketime=T0)
        self.run_once(faketime="2026-11-21 14:00:01")
        self.assertEqual(self.history("chunks")[0]["status"], "timed_out")
        self.assertEqual(self.logs("chunks"), "resumed at 0\n")
        self.run_once(faketime="2026-11-21 14:00:05")
        self.assertEqual(self.logs("chunks"), "resumed at 10\n")
        self.assertEqual(self.statuses("chunks"), ["timed_out", "timed_out"])


class RefreshUrlExampleTest(TaskdTestCase):
    """examples/refresh-url.sh against python3's http.server on 127.0.0.1."""

    def setUp(self):
        super().setUp()
        site = os.path.join(self.tmp, "site")
        os.makedirs(site)
        with open(os.path.join(site, "prices.json"), "w") as f:
            f.write('{"eur": 1}\n')
        self.server = subprocess.Popen([PYTHON, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
                                        "--directory", site], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                       encoding="utf-8")
        self.addCleanup(self.stop_server)
        # "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        self.base = self.server.stdout.readline().split("(")[1].split(")")[0].rstrip("/")
        self.script = os.path.join(EXAMPLES, "refresh-url.sh")

    def stop_server(self):
        self.server.kill()
        self.server.wait()
        self.server.stdout.close()

    def add_refresh(self, name, url):
        self.add(name, "--every", "30m", "--start-now", "--disable-when-exhausted", "--", self.script, url,
                 os.path.join(self.tmp, name + ".out"))

    def test_a_good_url_is_fetched(self):
        self.add_refresh("prices", self.base + "/prices.json")
        self.run_once()
        self.assertEqual(self.statuses_of("prices"), ["succeeded"])
        with open(os.path.join(self.tmp, "prices.out")) as f:
            self.assertEqual(f.read(), '{"eur": 1}\n')

    def test_a_404_disables_the_task_with_a_reason_for_people(self):
        url = self.base + "/gone.json"
        self.add_refresh("gone", url)
        self.run_once()
        task = self.task("gone")
        self.assertTrue(task["disabled_until_update"])
        self.assertEqual(task["disabled_reason"], "Provided URL is invalid: " + url)
        self.assertIn("Provided URL is invalid", self.ok("show", "gone"))
        self.assertIn("disabled", self.ok("list"))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "gone.out")))

    def test_a_server_that_is_down_is_retried(self):
        self.stop_server()
        self.add_refresh("down", self.base + "/prices.json")
        self.run_once()
        task = self.task("down")
        self.assertFalse(task["disabled_until_update"])
        self.assertEqual((task["last_status"], task["attempt_no"]), ("failed", 1))
        self.assertIn("curl exit code 7", self.history("down")[0]["reason"])

    def statuses_of(self, name):
        return [r["status"] for r in self.history(name)]


if __name__ == "__main__":
    unittest.main()
