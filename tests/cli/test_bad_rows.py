"""A malformed task row (taskd(1), FILES): one written by hand with
sqlite3 or psql (a list that does not parse, a schedule that does not, a
time out of range) is reported and set aside, never a reason to stop the
others. run-once and tick disable it and run every other task; check is
CRITICAL and status names it with what is wrong; show prints what it can;
edit repairs it by setting the bad field; rm removes it; list, history and
export never fail with exit 70. On both stores."""

import os

from taskd_test import STORE, TaskdTestCase, parse_json

# Each damage: the column, the value written into it, and the options of an
# edit that sets what is wrong.
DAMAGES = {
    "env": ("env", "{", ["--env", "A=1"]),
    "retry": ("retry", '[0,"x"]', ["--retry", "1m"]),
    "dtstart": ("dtstart", "garbage", ["--every", "1m"]),
    "schedule": ("schedule_spec", "5x", ["--every", "2m"]),
    "command": ("command", "{", ["--", "/bin/true"]),
    "tz": ("tz", "Mars/Olympus", ["--every", "1m"]),
    "huge time": ("next_run_at", 9223372036854775807, ["--priority", "1"]),
    "negative time": ("next_run_at", -5, ["--priority", "1"]),
    "huge duration": ("alert_after", 9223372036854775807, ["--alert-after", "1h"]),
}


class MalformedRowTestCase(TaskdTestCase):
    label = "first"  # the damage (subtest) the database and the markers are for

    def fresh_database(self, label):
        """A new, empty database for one damage (a subtest)."""
        self.label = label.replace(" ", "-")
        if STORE == "sqlite":
            self.db = os.path.join(self.tmp, self.label + ".db")
        else:
            import pg_server
            server = pg_server.server()
            self.db = server.uri(server.new_database())

    def marker(self, name):
        """The file the task `name` of this database appends to when it runs."""
        return os.path.join(self.tmp, "%s-%s.ran" % (self.label, name))

    def add_pair(self):
        """Two tasks due now, "good" and "bad", each leaving a marker file when it runs."""
        for name in ("good", "bad"):
            self.add(name, "--every", "1m", "--start-now", "--shell", "--", "echo x >> " + self.marker(name))

    def damage(self, column, value, name="bad"):
        self.sql("UPDATE tasks SET %s = ? WHERE name = ?" % column, (value, name))

    def damaged(self, label):
        """A fresh database holding the pair, with "bad" damaged as DAMAGES
        says; returns the damage's column and repair."""
        column, value, repair = DAMAGES[label]
        self.fresh_database(label)
        self.add_pair()
        self.damage(column, value)
        return column, repair

    def assertNotInternal(self, code, out, err, what):
        self.assertNotEqual(code, 70, "%s exited 70:\nstdout: %s\nstderr: %s" % (what, out, err))

    def task_json(self, name):
        return self.json_of("show", name)


class TestTheOthersRun(MalformedRowTestCase):
    def test_run_once_runs_the_healthy_task_and_disables_the_malformed_one(self):
        for label in DAMAGES:
            with self.subTest(damage=label):
                column, _ = self.damaged(label)
                code, out, err = self.run_taskd("run-once")
                self.assertEqual(code, 0, "run-once: %s %s" % (out, err))
                self.assertTrue(os.path.exists(self.marker("good")), "the healthy task did not run")
                self.assertFalse(os.path.exists(self.marker("bad")), "the malformed task ran")
                bad = self.task_json("bad")
                self.assertIn(column, [problem["column"] for problem in bad["malformed"]])
                if label != "huge time":  # never due: the tick never meets it
                    self.assertIn('"bad" is malformed', err)
                    self.assertIn(column, err)
                    self.assertTrue(bad["disabled_until_update"])
                    self.assertIn("malformed", bad["disabled_reason"])

    def test_run_once_escapes_the_name_of_a_malformed_task_another_client_wrote(self):
        self.fresh_database("escape")
        self.add_pair()
        self.damage("env", "{")
        self.sql("UPDATE tasks SET name = ? WHERE name = 'bad'", ("bad\x1b]0;owned\x07",))
        code, out, err = self.run_taskd("run-once")
        self.assertEqual(code, 0, err)
        self.assertNotIn("\x1b", err)
        self.assertIn("is malformed in the database", err)

    def test_tick_queues_the_healthy_task_and_logs_the_malformed_one(self):
        for label in DAMAGES:
            with self.subTest(damage=label):
                column, _ = self.damaged(label)
                code, out, err = self.run_taskd("tick")
                self.assertEqual(code, 0, "tick: %s %s" % (out, err))
                queued = [run["task"] for run in self.history() if run["status"] == "queued"]
                self.assertEqual(queued, ["good"])
                if label != "huge time":
                    self.assertIn("event=task.malformed", err)
                    self.assertIn("task=bad", err)
                    self.assertIn(column, err)

    def test_a_queued_run_of_a_task_damaged_since_is_dropped_and_the_others_run(self):
        self.add_pair()
        self.ok("pause", "good")
        self.run_once()  # bad ran; good is paused
        os.remove(self.marker("bad"))
        self.ok("trigger", "bad")
        self.ok("resume", "good")
        self.ok("trigger", "good")
        self.damage("env", "{")
        code, out, err = self.run_taskd("run-once")
        self.assertEqual(code, 0, "run-once: %s %s" % (out, err))
        self.assertTrue(os.path.exists(self.marker("good")))
        self.assertFalse(os.path.exists(self.marker("bad")))
        dropped = [run for run in self.history("bad") if run["status"] == "dropped"]
        self.assertEqual(len(dropped), 1, self.history("bad"))
        self.assertIn("malformed", dropped[0]["reason"])
        self.assertIn("env", dropped[0]["reason"])

    def test_a_malformed_follower_is_skipped_with_its_reason(self):
        self.add("up", "--every", "1m", "--start-now", "--", "/bin/true")
        self.add("down", "--after", "up", "--shell", "--", "echo x >> " + self.marker("down"))
        self.damage("retry", "nope", name="down")
        code, out, err = self.run_taskd("run-once")
        self.assertEqual(code, 0, "run-once: %s %s" % (out, err))
        self.assertFalse(os.path.exists(self.marker("down")))
        skipped = [run for run in self.history("down") if run["status"] == "skipped"]
        self.assertEqual(len(skipped), 1, self.history("down"))
        self.assertIn("malformed", skipped[0]["reason"])
        self.assertIn("retry", skipped[0]["reason"])


class TestReported(MalformedRowTestCase):
    def test_check_is_critical_and_names_the_task_and_the_column(self):
        for label in DAMAGES:
            with self.subTest(damage=label):
                column, _ = self.damaged(label)
                code, out, err = self.run_taskd("check")
                self.assertEqual(code, 2, "check: %s %s" % (out, err))
                lines = out.splitlines()
                self.assertIn("1 task critical: bad", lines[0])
                detail = [line for line in lines[1:] if line.startswith("CRITICAL bad: ")]
                self.assertEqual(len(detail), 1, out)
                self.assertIn("malformed", detail[0])
                self.assertIn(column, detail[0])
                code, out, _ = self.run_taskd("--json", "check")
                self.assertEqual(code, 2)
                problems = parse_json(self, out)["problems"]
                self.assertEqual([(p["task"], p["kind"]) for p in problems if p["task"]], [("bad", "malformed")])

    def test_a_paused_malformed_task_is_still_critical(self):
        self.add_pair()
        self.ok("pause", "bad")
        self.damage("env", "[1]")
        code, out, _ = self.run_taskd("check")
        self.assertEqual(code, 2, out)
        self.assertIn("critical=1 paused=0", out.splitlines()[0])

    def test_a_malformed_created_at_is_critical_and_never_computed_with(self):
        self.add_pair()
        self.damage("created_at", 9223372036854775807)
        code, out, _ = self.run_taskd("check")
        self.assertEqual(code, 2, out)
        self.assertIn("CRITICAL bad: malformed in the database: created_at: 9223372036854775807 is not a time", out)
        code, out, err = self.run_taskd("explain", "bad")
        self.assertEqual(code, 65, out + err)
        self.assertOneErrorLine(err, 'task "bad"', "created_at")

    def test_status_names_the_task_and_what_is_wrong(self):
        for label in DAMAGES:
            with self.subTest(damage=label):
                column, _ = self.damaged(label)
                code, out, err = self.run_taskd("status")
                self.assertEqual(code, 0, "status: %s %s" % (out, err))
                section = out[out.index("Malformed tasks"):]
                self.assertIn("bad", section)
                self.assertIn(column, section)
                status = self.json_of("status")
                self.assertEqual(status["malformed_count"], 1)
                self.assertEqual(status["malformed"][0]["name"], "bad")
                self.assertIn(column, status["malformed"][0]["problem"])


class TestListings(MalformedRowTestCase):
    def test_list_history_and_json_list_show_every_task(self):
        for label in DAMAGES:
            with self.subTest(damage=label):
                column, _ = self.damaged(label)
                for args in (["list"], ["list", "--absolute"], ["history"], ["history", "bad"], ["--json", "history"]):
                    code, out, err = self.run_taskd(*args)
                    self.assertNotInternal(code, out, err, args)
                self.assertIn("bad", self.ok("list"))
                tasks = {task["name"]: task for task in self.tasks()}
                self.assertEqual(sorted(tasks), ["bad", "good"])
                self.assertNotIn("malformed", tasks["good"])
                self.assertEqual([problem["column"] for problem in tasks["bad"]["malformed"]], [column])

    def test_export_writes_the_others_names_the_malformed_one_and_fails(self):
        for label in DAMAGES:
            with self.subTest(damage=label):
                column, _ = self.damaged(label)
                code, out, err = self.run_taskd("export")
                self.assertEqual(code, 65, "export: %s %s" % (out, err))
                self.assertIn('name = "good"', out)
                self.assertNotIn('name = "bad"', out)
                self.assertIn('left out task "bad" is malformed', err)
                self.assertIn(column, err)
                self.assertIn("the file is not complete", err)
                self.ok("rm", "bad")
                self.assertIn('name = "good"', self.ok("export"))

    def test_export_counts_a_malformed_rows_owner_among_the_owners(self):
        self.fresh_database("owners")
        self.add_pair()
        self.sql("UPDATE tasks SET owner = ? WHERE name = ?", ("them", "bad"))
        self.damage("retry", "{")
        code, out, err = self.run_taskd("export")
        self.assertEqual(code, 65, "export: %s %s" % (out, err))
        self.assertIn("the tasks have 2 owners, so each task names its own", err)
        self.assertNotIn("\nowner =", out.split("[[task]]")[0])


class TestShowRmEdit(MalformedRowTestCase):
    def test_show_prints_what_it_can_and_what_is_malformed(self):
        for label in DAMAGES:
            with self.subTest(damage=label):
                column, _ = self.damaged(label)
                out = self.ok("show", "bad")
                self.assertIn("name              bad", out)
                self.assertIn("malformed", out)
                self.assertIn(column, out)
                shown = self.task_json("bad")
                self.assertEqual(shown["name"], "bad")
                self.assertEqual([problem["column"] for problem in shown["malformed"]], [column])

    def test_rm_removes_it(self):
        for label in DAMAGES:
            with self.subTest(damage=label):
                self.damaged(label)
                self.ok("rm", "bad")
                self.assertEqual([task["name"] for task in self.tasks()], ["good"])

    def test_rm_by_owner_removes_it(self):
        self.add("mine", "--every", "1m", "--owner", "me", "--", "/bin/true")
        self.damage("env", "{", name="mine")
        self.ok("rm", "--owner", "me")
        self.assertEqual(self.tasks(), [])

    def test_edit_that_sets_the_bad_field_repairs_it(self):
        for label in DAMAGES:
            with self.subTest(damage=label):
                _, repair = self.damaged(label)
                self.run_taskd("run-once")  # disables it when it is due
                self.ok("edit", "bad", *repair)
                repaired = self.task_json("bad")
                self.assertNotIn("malformed", repaired)
                self.assertFalse(repaired["disabled_until_update"])
                self.assertIsNotNone(repaired["next_run_at"])
                self.assertEqual(self.json_of("check")["status"], "OK")

    def test_edit_that_leaves_the_bad_field_is_refused_and_writes_nothing(self):
        self.add_pair()
        self.damage("env", "{")
        code, out, err = self.run_taskd("edit", "bad", "--priority", "3")
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, 'task "bad" is malformed', "env", "--env", "taskd rm")
        self.assertEqual(self.sql("SELECT env, priority FROM tasks WHERE name = 'bad'"), [("{", 0)])

    def test_commands_that_need_a_readable_task_refuse_it_with_exit_65(self):
        self.add_pair()
        self.damage("env", "{")
        for args in (["trigger", "bad"], ["pause", "bad"], ["enable", "bad"], ["explain", "bad"],
                     ["preview", "bad"], ["backfill", "bad", "--from", "1h", "--until", "0s"]):
            code, out, err = self.run_taskd(*args)
            self.assertEqual(code, 65, "%s: %s %s" % (args, out, err))
            self.assertIn('task "bad" is malformed in the database', err)
            self.assertIn("env", err)
