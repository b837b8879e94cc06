"""The everyday commands: add, list, show, run-once, history, logs, rm, pause, resume, rename."""

import os
import re
import unittest

from loop_helpers import wait_for
from taskd_test import TaskdTestCase, parse_time

# The binary's clock under faketime; --every 1h --phase 0 then gives slots on
# the hour, so "due" and "not due" do not depend on the real time.
T0 = "2026-11-21 14:00:00"


def at(hhmmss):
    return "2026-11-21 " + hhmmss


class AddListShowTest(TaskdTestCase):
    def test_add_prints_the_next_run_and_list_shows_the_task(self):
        out = self.add("backup", "--every", "1h", "--phase", "0", "--", "echo", "hello world", faketime=T0)
        self.assertIn("backup", out)
        self.assertIn("2026-11-21T15:00:00Z", out)

        code, table, err = self.run_taskd("list", faketime=at("14:10:00"))
        self.assertEqual(code, 0, err)
        lines = table.splitlines()
        self.assertEqual(len(lines), 2, table)
        for column in ("NAME", "SCHEDULE", "NEXT", "COMMAND"):
            self.assertIn(column, lines[0])
        self.assertTrue(lines[1].startswith("backup "), table)
        self.assertIn("every 1h", lines[1])
        self.assertRegex(lines[1], r"  in (50m|49m)  ")  # the faked clock has moved on a little
        self.assertIn("echo 'hello world'", lines[1])

    def test_list_json_uses_the_field_names_of_the_spec(self):
        self.add("backup", "--every", "1h", "--phase", "0", "--", "echo", "hello world", faketime=T0)
        tasks = self.tasks()
        self.assertEqual(len(tasks), 1)
        task = tasks[0]
        self.assertEqual(task["name"], "backup")
        self.assertEqual(task["command"], ["echo", "hello world"])
        self.assertEqual(task["schedule"], {"kind": "every", "spec": "1h"})
        self.assertEqual(task["next_run_at"], "2026-11-21T15:00:00Z")
        self.assertEqual(task["attempt_no"], 0)
        self.assertEqual(task["run_index"], 0)
        self.assertIs(task["paused"], False)
        self.assertIs(task["disabled_until_update"], False)
        self.assertIsNone(task["last_run_at"])
        self.assertIsNone(task["last_status"])
        self.assertEqual(task["permanent_exit"], [78])
        self.assertEqual(task["retry"], [0, 60, 300, 900, 1800, 3600])
        self.assertEqual(task["timeout"], 1800)  # half the interval
        self.assertEqual(task["overlap"], "skip")
        for field in ("tz", "after_finish", "phase", "jitter", "kill_grace", "tolerance", "owner", "group",
                      "priority", "cwd", "env", "last_finished_at", "attempt_uid", "attempt_started_at",
                      "attempt_timeout_at", "disabled_reason"):
            self.assertIn(field, task)

    def test_show_text_and_json(self):
        self.add("report", "--every", "30m", "--owner", "alice", "--group", "nightly", "--", "echo", "hi",
                 faketime=T0)
        code, text, err = self.run_taskd("show", "report", faketime=T0)
        self.assertEqual(code, 0, err)
        fields = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in text.splitlines() if line.strip())
        self.assertEqual(fields["name"], "report")
        self.assertEqual(fields["command"], "echo hi")
        self.assertEqual(fields["schedule"], "every 30m")
        self.assertEqual(fields["state"], "active")
        self.assertEqual(fields["owner"], "alice")
        self.assertEqual(fields["group"], "nightly")
        self.assertEqual(fields["timeout"], "15m")

        task = self.task("report")
        self.assertEqual(task["name"], "report")
        self.assertEqual(task["command"], ["echo", "hi"])
        self.assertEqual(task["schedule"], {"kind": "every", "spec": "30m"})
        self.assertEqual(task["owner"], "alice")
        self.assertEqual(task["group"], "nightly")
        self.assertIsNone(task.pop("last_run"))  # show's alone: it has not run
        self.assertEqual(task, self.tasks()[0])

    def test_shell_command_is_kept_as_one_string(self):
        self.add("sh", "--every", "1h", "--shell", "--", "echo a | tr a b")
        task = self.task("sh")
        self.assertEqual(task["command"], "echo a | tr a b")
        self.assertIs(task["shell"], True)


class MissingProgramWarningTest(TaskdTestCase):
    """add warns of a program it cannot find where the run will start, and only then."""

    def add_warning(self, *args, name="job"):
        code, _, err = self.run_taskd("add", name, "--every", "1h", *args)
        self.assertEqual(code, 0, err)
        return err

    def test_a_relative_program_is_found_in_the_tasks_cwd(self):
        billing = os.path.join(self.tmp, "billing")
        os.mkdir(billing)
        script = os.path.join(billing, "send-invoices")
        with open(script, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(script, 0o755)
        self.assertEqual(self.add_warning("--cwd", billing, "--", "./send-invoices"), "")

    def test_a_relative_program_without_cwd_is_named_with_the_advice(self):
        self.assertOneErrorLine(self.add_warning("--", "./send-invoices"), "taskd: warning: job: program",
                                "./send-invoices", "no --cwd", "your home under cron")

    def test_a_missing_absolute_program_is_not_said_to_be_missing_from_path(self):
        err = self.add_warning("--", "/nonexistent/backup.sh")
        self.assertOneErrorLine(err, "taskd: warning: job: program \"/nonexistent/backup.sh\" is not an executable")
        self.assertNotIn("PATH", err)

    def test_a_bare_name_is_looked_up_in_path(self):
        self.assertOneErrorLine(self.add_warning("--", "no-such-program-xyz"), "taskd: warning: job:",
                                "\"no-such-program-xyz\" is not found in PATH now")
        self.assertEqual(self.add_warning("--", "true", name="found"), "")


class RunOnceTest(TaskdTestCase):
    def test_run_once_runs_a_start_now_task_and_records_it(self):
        self.add("hello", "--every", "1h", "--start-now", "--", "echo", "hello from the task")
        code, out, err = self.run_taskd("run-once")
        self.assertEqual((code, out, err), (0, "", ""))  # silent when all went well

        runs = self.history()
        self.assertEqual(len(runs), 1, runs)
        run = runs[0]
        self.assertEqual(run["task"], "hello")
        self.assertEqual(run["status"], "succeeded")
        self.assertEqual(run["exit_code"], 0)
        self.assertIsNone(run["signal"])
        self.assertEqual(run["trigger"], "schedule")
        self.assertEqual(run["attempt_no"], 1)
        self.assertLessEqual(parse_time(run["started_at"]), parse_time(run["finished_at"]))
        self.assertFalse(run["output_truncated"])

        self.assertEqual(self.logs("hello"), "hello from the task\n")

        task = self.task("hello")
        self.assertEqual(task["last_status"], "succeeded")
        self.assertEqual(task["attempt_no"], 0)  # reset on success
        self.assertEqual(task["run_index"], 1)
        self.assertEqual(task["last_run_at"], run["started_at"])
        self.assertGreater(parse_time(task["next_run_at"]), parse_time(task["last_run_at"]))

        # Done for this slot: a second tick runs nothing.
        self.run_once()
        self.assertEqual(len(self.history()), 1)

    def test_logs_of_a_run_that_wrote_nothing_says_so_on_stderr(self):
        self.add("quiet", "--every", "1h", "--start-now", "--", "true")
        self.run_taskd("run-once")
        self.add("broken", "--every", "1h", "--start-now", "--", "/nonexistent/program")
        self.run_taskd("run-once")
        self.assertEqual(self.run_taskd("logs", "quiet"), (0, "", "taskd: run 1 of quiet wrote no output (succeeded)\n"))
        code, out, err = self.run_taskd("logs", "broken")
        self.assertEqual((code, out), (0, ""))
        self.assertOneErrorLine(err, "taskd: run 2 of broken wrote no output (failed: cannot execute",
                                "/nonexistent/program")
        self.assertEqual(self.json_of("logs", "quiet")["output"], "")

    def test_start_now_runs_at_the_first_tick_and_a_task_not_due_does_not(self):
        self.add("now", "--every", "1h", "--phase", "0", "--start-now", "--", "true", faketime=T0)
        self.add("later", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        self.assertEqual(self.run_once(faketime=at("14:00:01")), "")
        runs = self.history()
        self.assertEqual([r["task"] for r in runs], ["now"])
        self.assertEqual(runs[0]["status"], "succeeded")
        later = self.task("later")
        self.assertEqual(later["next_run_at"], "2026-11-21T15:00:00Z")
        self.assertIsNone(later["last_run_at"])

        # Still before 15:00: nothing is due.
        self.run_once(faketime=at("14:59:00"))
        self.assertEqual(len(self.history()), 1)

        # At its slot it runs, and serves that slot.
        self.run_once(faketime=at("15:00:02"))
        later_runs = self.history("later")
        self.assertEqual(len(later_runs), 1)
        self.assertEqual(later_runs[0]["status"], "succeeded")
        self.assertEqual(later_runs[0]["scheduled_at"], "2026-11-21T15:00:00Z")
        self.assertEqual(self.task("later")["next_run_at"], "2026-11-21T16:00:00Z")

    def assertIdleTicksTakeNoWriteLock(self):
        """run-once and tick end at once, and do nothing, while another
        connection holds the write lock for longer than the busy timeout."""
        release = self.hold_write_lock()
        self.addCleanup(release)
        for command in ("run-once", "tick"):
            with self.subTest(command=command):
                self.assertEqual(self.run_taskd(command, faketime=at("14:30:00")), (0, "", ""))
        release()
        self.assertEqual(self.history(), [])

    def test_a_tick_with_nothing_to_do_takes_no_write_lock(self):
        self.add("later", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        self.assertIdleTicksTakeNoWriteLock()

    def test_a_tick_beside_a_live_worker_takes_no_write_lock(self):
        # Another host's work loop, its heartbeat ten seconds old: alive, so
        # recovery leaves its row, and has nothing to write.
        self.add("later", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        beat_ms = round(parse_time("2026-11-21T14:29:50Z").timestamp() * 1000)
        self.sql("INSERT INTO workers (role, host, pid, boot_id, process_start, concurrency, started_at, "
                 "heartbeat_at) VALUES ('work', 'elsewhere.example', 77, 'b', 1, 8, ?, ?)", (beat_ms, beat_ms))
        self.assertIdleTicksTakeNoWriteLock()
        self.assertEqual([w["pid"] for w in self.json_of("status", faketime=at("14:30:00"))["workers"]], [77])

    def test_run_once_prints_one_line_per_failed_run(self):
        self.add("good-task", "--every", "1h", "--start-now", "--", "true")
        self.add("bad-one", "--every", "1h", "--start-now", "--", "false")
        self.add("bad-two", "--every", "1h", "--start-now", "--shell", "--", "exit 4")
        code, out, err = self.run_taskd("run-once")
        self.assertEqual(code, 0, err)
        lines = out.splitlines()
        self.assertEqual(len(lines), 2, out)
        named = sorted(name for line in lines for name in ("good-task", "bad-one", "bad-two")
                       if re.search(r"(^|\W)%s(\W|$)" % re.escape(name), line))
        self.assertEqual(named, ["bad-one", "bad-two"], out)
        statuses = {r["task"]: r["status"] for r in self.history()}
        self.assertEqual(statuses, {"good-task": "succeeded", "bad-one": "failed", "bad-two": "failed"})


class RemoveTest(TaskdTestCase):
    def test_rm_removes_the_task_and_its_history(self):
        self.add("keep", "--every", "1h", "--start-now", "--", "true")
        self.add("gone", "--every", "1h", "--start-now", "--", "true")
        self.run_once()
        self.assertEqual(len(self.history()), 2)
        self.assertEqual(self.ok("rm", "gone"), "")
        self.assertEqual([t["name"] for t in self.tasks()], ["keep"])
        self.assertEqual([r["task"] for r in self.history()], ["keep"])
        code, _, err = self.run_taskd("show", "gone")
        self.assertEqual(code, 65, err)

    def test_rm_owner_removes_only_that_owners_tasks(self):
        self.add("a1", "--every", "1h", "--owner", "alice", "--", "true")
        self.add("a2", "--every", "1h", "--owner", "alice", "--", "true")
        self.add("b1", "--every", "1h", "--owner", "bob", "--", "true")
        self.add("n1", "--every", "1h", "--", "true")
        self.assertEqual(sorted(t["name"] for t in self.tasks("--owner", "alice")), ["a1", "a2"])
        self.ok("rm", "--owner", "alice")
        self.assertEqual(sorted(t["name"] for t in self.tasks()), ["b1", "n1"])


class PauseResumeTest(TaskdTestCase):
    def test_paused_task_is_not_run_and_resumed_it_is_scheduled_again(self):
        self.add("job", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        self.ok("pause", "job", faketime=at("14:10:00"))
        self.assertIs(self.task("job")["paused"], True)
        code, table, _ = self.run_taskd("list")
        self.assertIn("paused", table.splitlines()[1])

        # 15:00 came and went while paused: not run.
        self.assertEqual(self.run_once(faketime=at("15:30:00")), "")
        self.assertEqual([r for r in self.history() if r["status"] != "skipped"], [])

        self.ok("resume", "job", faketime=at("15:31:00"))
        task = self.task("job")
        self.assertIs(task["paused"], False)
        self.assertEqual(task["next_run_at"], "2026-11-21T16:00:00Z")
        # The slot missed while paused does not vanish silently.
        skipped = [r for r in self.history() if r["status"] == "skipped"]
        self.assertEqual([r["scheduled_at"] for r in skipped], ["2026-11-21T15:00:00Z"])

        self.run_once(faketime=at("16:00:03"))
        ran = [r for r in self.history() if r["status"] != "skipped"]
        self.assertEqual([(r["status"], r["scheduled_at"]) for r in ran], [("succeeded", "2026-11-21T16:00:00Z")])

    def test_pause_group_stops_only_that_group(self):
        self.add("g1-a", "--every", "1h", "--start-now", "--group", "g1", "--", "true")
        self.add("g1-b", "--every", "1h", "--start-now", "--group", "g1", "--", "true")
        self.add("g2-a", "--every", "1h", "--start-now", "--group", "g2", "--", "true")
        self.add("solo", "--every", "1h", "--start-now", "--", "true")
        self.ok("pause", "--group", "g1")
        paused = {t["name"]: t["paused"] for t in self.tasks()}
        self.assertEqual(paused, {"g1-a": True, "g1-b": True, "g2-a": False, "solo": False})
        self.run_once()
        self.assertEqual(sorted(r["task"] for r in self.history()), ["g2-a", "solo"])

        self.ok("resume", "--group", "g1")
        self.assertFalse(any(t["paused"] for t in self.tasks()))

    def test_pause_resume_and_enable_say_what_they_did(self):
        self.add("backup", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        self.add("broken", "--every", "1h", "--phase", "0", "--retry", "none", "--disable-when-exhausted", "--",
                 "false", faketime=T0)
        self.run_once(faketime=at("15:00:01"))
        reason = self.task("broken")["disabled_reason"]
        self.assertTrue(reason)

        self.assertEqual(self.ok("pause", "backup"), "paused backup\n")
        self.assertEqual(self.ok("pause", "backup", "broken"), "backup was already paused\npaused broken\n")
        self.assertEqual(self.json_of("resume", "--group", "nogroup"), [])
        self.assertEqual(self.json_of("resume", "backup"), [{"task": "backup", "resumed": True}])
        self.assertEqual(self.ok("resume", "backup"), "backup was not paused\n")
        self.assertEqual(self.json_of("pause", "backup"), [{"task": "backup", "paused": True}])
        self.assertEqual(self.ok("enable", "broken", faketime=at("15:30:00")),
                         "enabled broken (it was disabled: %s)\n" % reason)
        self.assertEqual(self.ok("enable", "broken"), "broken was not disabled\n")
        self.assertEqual(self.json_of("enable", "broken"),
                         [{"task": "broken", "enabled": False, "disabled_reason": None}])
        # All or nothing: one unknown name changes none and says nothing on stdout.
        code, out, err = self.run_taskd("resume", "backup", "nosuch")
        self.assertEqual((code, out), (65, ""))
        self.assertIn("nosuch", err)
        self.assertIs(self.task("backup")["paused"], True)

    def test_enable_json_has_the_reason_it_undid(self):
        self.add("broken", "--every", "1h", "--phase", "0", "--retry", "none", "--disable-when-exhausted", "--",
                 "false", faketime=T0)
        self.run_once(faketime=at("15:00:01"))
        reason = self.task("broken")["disabled_reason"]
        self.assertEqual(self.json_of("enable", "broken", faketime=at("15:30:00")),
                         [{"task": "broken", "enabled": True, "disabled_reason": reason}])


class RenameTest(TaskdTestCase):
    def test_state_history_owner_and_followers_move_with_the_name(self):
        self.add("old", "--every", "1h", "--phase", "0", "--owner", "ops", "--", "true", faketime=T0)
        self.add("after-old", "--after", "old:finished", "--", "true", faketime=T0)
        self.add("other", "--every", "1h", "--", "true", faketime=T0)
        self.add("after-other", "--after", "other", "--", "true", faketime=T0)
        self.run_once(faketime=at("15:00:01"))
        before, runs = self.task("old"), self.history("old")
        self.assertEqual(len(runs), 1)

        self.assertEqual(self.ok("rename", "old", "new"), "renamed old to new (1 task --after it now after new)\n")
        after = self.task("new")
        self.assertEqual(after, dict(before, name="new", last_run=dict(before["last_run"], task="new")))
        self.assertEqual(after["owner"], "ops")
        self.assertEqual(self.history("new"), [dict(run, task="new") for run in runs])
        self.assertEqual({t["name"]: t["after"] for t in self.tasks()},
                         {"new": None, "after-old": "new:finished", "other": None, "after-other": "other"})
        code, _, err = self.run_taskd("show", "old")
        self.assertEqual(code, 65, err)
        # The chain follows the new name: its next run starts the follower.
        self.run_once(faketime=at("16:00:01"))
        self.assertEqual([r["status"] for r in self.history("after-old")], ["succeeded", "succeeded"])
        self.assertEqual(self.json_of("rename", "after-old", "after-new"),
                         {"task": "after-new", "renamed_from": "after-old", "followers": 0})

    def test_the_new_name_must_be_valid_and_unused_and_a_refusal_writes_nothing(self):
        self.add("a", "--every", "1h", "--", "true")
        self.add("b", "--every", "1h", "--", "true")
        tasks = self.tasks()
        for args, fragments in [(["a", "b"], ['"b" already exists']), (["a", "a"], ['"a" already exists']),
                                (["a", "no spaces"], ["no spaces"]), (["a", ""], ["task name"]),
                                (["nosuch", "c"], ['"nosuch"'])]:
            with self.subTest(args=args):
                code, out, err = self.run_taskd("rename", *args)
                self.assertEqual((code, out), (65, ""), err)
                self.assertOneErrorLine(err, *fragments)
        self.assertEqual(self.tasks(), tasks)
        code, _, err = self.run_taskd("rename", "a")
        self.assertEqual(code, 2, err)

    def test_a_run_in_flight_goes_on_and_is_recorded_under_the_new_name(self):
        go = os.path.join(self.tmp, "go")
        self.add("slow", "--every", "1h", "--start-now", "--retry", "none", "--shell", "--",
                 "while [ ! -e %s ]; do sleep 0.02; done; echo \"ran as $TASKD_TASK\"" % go)
        run_once = self.popen_taskd("run-once")
        self.addCleanup(run_once.kill)
        running = lambda: [r for r in self.history("--status", "running") if r["task"] == "slow"]
        wait_for(running, 20, "the run of slow to start")
        self.assertEqual(self.ok("rename", "slow", "quick"), "renamed slow to quick\n")
        with open(go, "w"):
            pass
        run_once.communicate(timeout=30)
        self.assertEqual(run_once.returncode, 0)
        [run] = self.history("quick")
        self.assertEqual((run["task"], run["status"]), ("quick", "succeeded"))
        self.assertEqual(self.logs("quick"), "ran as slow\n")  # its environment was set as it started
        task = self.task("quick")
        self.assertEqual((task["last_status"], task["attempt_no"]), ("succeeded", 0))


if __name__ == "__main__":
    unittest.main()
