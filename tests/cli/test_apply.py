"""taskd apply and taskd export: declarative task files (taskd.toml(5))."""

import os
import textwrap
import unittest

from taskd_test import TaskdTestCase

T0 = "2026-11-21 14:00:00"

# The fields of a task's definition in --json (the rest is its state).
DEFINITION_FIELDS = (
    "name", "command", "shell", "schedule", "tz", "dtstart", "after_finish", "phase", "jitter", "timeout",
    "kill_grace", "tolerance", "retry", "permanent_exit", "overlap", "owner", "group", "priority", "cwd", "env",
    "notify", "after", "dst_gap", "dst_repeat",
)

TWO_TASKS = """\
[defaults]
timeout = "2m"
group = "net"

[group.net]
concurrency = 2

[[task]]
name = "fetch"
command = ["curl", "-s", "https://example.org"]
every = "5m"
env = { LANG = "C" }

[[task]]
name = "report"
command = "make report | mail -s report me"
cron = "0 7 * * MON"
tz = "Europe/Berlin"
retry = ["1m", "5m"]
"""


class ApplyTest(TaskdTestCase):
    def write(self, text, name="tasks.toml"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def apply(self, *args, **kwargs):
        return self.ok("apply", *args, **kwargs)

    def apply_fails(self, path, *fragments):
        code, out, err = self.run_taskd("apply", path)
        self.assertEqual(code, 65, "stdout: %s\nstderr: %s" % (out, err))
        return self.assertOneErrorLine(err, *fragments)

    def names(self):
        return sorted(task["name"] for task in self.tasks())

    def test_apply_adds_the_tasks_with_defaults_and_group_caps(self):
        path = self.write(TWO_TASKS)
        out = self.apply(path)
        self.assertEqual(out.splitlines(), [
            "+ fetch",
            "+ report",
            "+ group net: concurrency 2 (was none)",
            "%s: 2 added, 0 changed, 0 removed, 0 unchanged" % path,
        ])
        fetch = self.task("fetch")
        self.assertEqual(fetch["command"], ["curl", "-s", "https://example.org"])
        self.assertEqual(fetch["timeout"], 120)
        self.assertEqual(fetch["group"], "net")
        self.assertEqual(fetch["env"], {"LANG": "C"})
        self.assertEqual(fetch["owner"], path)
        report = self.task("report")
        self.assertIs(report["shell"], True)
        self.assertEqual(report["command"], "make report | mail -s report me")
        self.assertEqual(report["schedule"], {"kind": "cron", "spec": "0 7 * * MON"})
        self.assertEqual(report["retry"], [60, 300])
        groups = self.json_of("group", "list")
        self.assertEqual([(g["name"], g["concurrency"]) for g in groups], [("net", 2)])

    def test_applying_the_same_file_twice_changes_nothing(self):
        path = self.write(TWO_TASKS + textwrap.dedent("""\
            [[task]]
            name = "weekly"
            command = ["backup"]
            rrule = "FREQ=WEEKLY;BYDAY=MO"
            tz = "UTC"
            """))
        self.apply(path, faketime=T0)
        before = self.tasks()
        out = self.apply(path, faketime="2026-11-24 09:00:00")  # another day: DTSTART must not move
        self.assertEqual(out.splitlines(), ["%s: 0 added, 0 changed, 0 removed, 3 unchanged" % path])
        self.assertEqual(self.tasks(), before)

    def test_a_changed_task_keeps_its_history_and_is_enabled_again(self):
        path = self.write("""\
            [[task]]
            name = "flaky"
            command = "exit 78"
            every = "1h"
            start_now = true
            """)
        self.apply(path)
        self.run_once()
        self.assertIs(self.task("flaky")["disabled_until_update"], True)
        history = self.history("flaky")
        self.assertEqual(len(history), 1)

        self.apply(path)  # unchanged: stays disabled
        self.assertIs(self.task("flaky")["disabled_until_update"], True)

        self.write("""\
            [[task]]
            name = "flaky"
            command = "exit 78"
            every = "1h"
            timeout = "10m"
            start_now = true
            """)
        out = self.apply(path)
        self.assertIn("~ flaky: timeout\n", out)
        task = self.task("flaky")
        self.assertIs(task["disabled_until_update"], False)
        self.assertEqual(task["timeout"], 600)
        self.assertEqual(task["last_status"], "failed")
        self.assertEqual(self.history("flaky"), history)

    def test_changed_fields_are_listed(self):
        path = self.write(TWO_TASKS)
        self.apply(path)
        self.write(TWO_TASKS.replace('every = "5m"', 'every = "10m"\npriority = 4').replace("LANG", "LC_ALL"))
        out = self.apply(path)
        self.assertIn("~ fetch: schedule, phase, priority, env\n", out)
        self.assertIn(": 0 added, 1 changed, 0 removed, 1 unchanged", out)

    def test_prune_removes_only_the_files_own_tasks_that_it_no_longer_lists(self):
        path = self.write(TWO_TASKS)
        self.apply(path)
        self.add("by-hand", "--every", "1h", "--", "true")
        self.add("other-file", "--every", "1h", "--owner", "/elsewhere/tasks.toml", "--", "true")
        self.write(TWO_TASKS.split("[[task]]\nname = \"report\"")[0])

        out = self.apply(path)
        self.assertNotIn("- report", out)
        self.assertEqual(self.names(), ["by-hand", "fetch", "other-file", "report"])

        out = self.apply(path, "--prune")
        self.assertIn("- report\n", out)
        self.assertIn(": 0 added, 0 changed, 1 removed, 1 unchanged", out)
        self.assertEqual(self.names(), ["by-hand", "fetch", "other-file"])

    def test_prune_escapes_the_name_another_client_wrote(self):
        path = self.write(TWO_TASKS)
        self.apply(path)
        self.sql("UPDATE tasks SET name = ? WHERE name = 'report'", ("report\x1b[2J",))
        out = self.apply(path, "--prune", "--dry-run")
        self.assertNotIn("\x1b", out)
        self.assertIn("- report", out)

    def test_prune_refuses_an_empty_owner_that_would_select_every_task(self):
        self.add("by-hand", "--every", "1h", "--", "true")
        path = self.write('[defaults]\nowner = ""\n')
        code, out, err = self.run_taskd("apply", path, "--prune")
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, "--prune needs an owner")
        self.assertEqual(self.names(), ["by-hand"])

    def test_a_file_that_names_its_owner_is_the_same_file_from_another_directory(self):
        os.makedirs(os.path.join(self.tmp, "one"))
        os.makedirs(os.path.join(self.tmp, "two"))
        first = self.write('owner = "deploy"\n' + TWO_TASKS, name="one/tasks.toml")
        self.apply(first)
        self.assertEqual({t["owner"] for t in self.tasks()}, {"deploy"})
        without_report = TWO_TASKS.split("[[task]]\nname = \"report\"")[0]
        second = self.write('owner = "deploy"\n' + without_report, name="two/tasks.toml")
        out = self.apply(second, "--prune")
        self.assertIn(": 0 added, 0 changed, 1 removed, 1 unchanged", out)
        self.assertEqual(self.names(), ["fetch"])
        self.assertEqual(self.task("fetch")["owner"], "deploy")

    def test_apply_owner_names_the_owner_of_a_file_that_names_none(self):
        self.add("old", "--every", "1h", "--owner", "ci", "--", "true")
        path = self.write(TWO_TASKS)
        out = self.apply(path, "--owner", "ci", "--prune")
        self.assertIn(": 2 added, 0 changed, 1 removed, 0 unchanged", out)
        self.assertEqual({t["owner"] for t in self.tasks()}, {"ci"})

    def test_apply_owner_that_is_not_the_files_is_bad_input(self):
        path = self.write('owner = "deploy"\n' + TWO_TASKS)
        code, out, err = self.run_taskd("apply", path, "--owner", "ci")
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, path + ":1:", 'the file\'s owner is "deploy", not "ci"')
        self.assertFalse(os.path.exists(self.db), "bad input created the database")
        both = self.write('owner = "deploy"\n' + TWO_TASKS.replace("[defaults]\n", '[defaults]\nowner = "ci"\n'),
                          name="both.toml")
        self.apply_fails(both, '[defaults] owner "ci" is not the file\'s owner "deploy"')

    def test_dry_run_prints_the_plan_and_writes_nothing(self):
        path = self.write(TWO_TASKS)
        out = self.apply(path, "--dry-run")
        self.assertIn("+ fetch\n+ report\n", out)
        self.assertIn("(dry run: nothing written)", out)
        self.assertFalse(os.path.exists(self.db), "a dry run created the database")

        self.apply(path)
        self.add("by-hand", "--every", "1h", "--owner", path, "--", "true")
        before = self.tasks()
        self.write(TWO_TASKS.replace('"2m"', '"3m"'))
        plan = self.json_of("apply", path, "--dry-run", "--prune")
        self.assertEqual(plan["tasks"], [
            {"action": "change", "name": "fetch", "fields": ["timeout"]},
            {"action": "change", "name": "report", "fields": ["timeout"]},
            {"action": "remove", "name": "by-hand", "fields": []},
        ])
        self.assertIs(plan["dry_run"], True)
        self.assertEqual(self.tasks(), before)

    def test_unknown_key_is_an_error_with_its_line_and_column(self):
        path = self.write("""\
            [[task]]
            name = "fetch"
            command = ["true"]
              intervl = "5m"
            """)
        self.apply_fails(path, '%s:4:3: unknown key "intervl" in task "fetch"' % path)
        self.assertFalse(os.path.exists(self.db))

    def test_a_toml_syntax_error_names_line_and_column(self):
        path = self.write('[[task]]\nname = "x\n')
        self.apply_fails(path, "%s:2:" % path)

    def test_one_bad_task_means_nothing_is_applied(self):
        path = self.write(TWO_TASKS)
        self.apply(path)
        before = self.tasks()
        self.write(TWO_TASKS.replace('"2m"', '"3m"') + textwrap.dedent("""\

            [[task]]
            name = "broken"
            command = ["true"]
            every = "5m"
            jitter = "10 minutes"
            """))
        line = self.apply_fails(path, 'task "broken"', "--jitter")
        self.assertTrue(line.startswith("taskd: error: %s:25:10: " % path), line)
        self.assertEqual(self.tasks(), before)

    def test_a_bad_file_creates_no_database(self):
        path = self.write('[[task]]\nname = "x"\ncommand = ["true"]\nevery = "5m"\ncron = "* * * * *"\n')
        self.apply_fails(path, 'task "x"', "give exactly one schedule")
        self.apply_fails(os.path.join(self.tmp, "missing.toml"), "cannot read")
        self.assertFalse(os.path.exists(self.db))

    def test_group_cap_changes_are_applied_and_planned(self):
        path = self.write(TWO_TASKS)
        self.apply(path)
        self.write(TWO_TASKS.replace("concurrency = 2", "concurrency = 3"))
        out = self.apply(path)
        self.assertIn("~ group net: concurrency 3 (was 2)\n", out)
        self.assertEqual(self.json_of("group", "list")[0]["concurrency"], 3)
        self.assertNotIn("group", self.apply(path))

    def test_relative_cwd_is_relative_to_the_file(self):
        os.makedirs(os.path.join(self.tmp, "conf", "work"))
        path = self.write('[[task]]\nname = "x"\ncommand = ["true"]\nevery = "5m"\ncwd = "work"\n',
                          name="conf/tasks.toml")
        self.apply(path)
        self.assertEqual(self.task("x")["cwd"], os.path.join(self.tmp, "conf", "work"))


class ExportTest(TaskdTestCase):
    def definitions(self, db):
        return [{k: task[k] for k in DEFINITION_FIELDS} for task in self.tasks(db=db)]

    def test_export_then_apply_gives_the_same_tasks(self):
        self.add("fetch", "--every", "5m", "--phase", "1m", "--jitter", "30s", "--timeout", "2m",
                 "--kill-grace", "3s", "--tolerance", "20s", "--retry", "10s,1m", "--permanent-exit", "64,78",
                 "--overlap", "queue", "--env", "LANG=C", "--env", "A_B=x y 'z'", "--cwd", "/tmp",
                 "--group", "net", "--priority", "5", "--owner", "me",
                 "--notify", "curl -fsS \"https://hc-ping.com/$HC/$TASKD_NOTIFY\" # it's", "--",
                 "curl", "-s", "it's \"here\"")
        self.add("delay", "--every", "1h", "--after-finish", "--retry", "none", "--permanent-exit", "none",
                 "--overlap", "replace", "--", "true")
        self.add("nightly", "--cron", "30 2 * * *", "--tz", "Europe/Berlin", "--catch-up", "all:3",
                 "--catch-up-window", "2d", "--dst-gap", "skip", "--shell", "--",
                 "backup && echo '''done''' \\")
        self.add("monthly", "--rrule", "FREQ=MONTHLY;BYMONTHDAY=1", "--tz", "Asia/Tokyo",
                 "--dtstart", "2026-01-01T06:00:00", "--dst-repeat", "twice", "--after", "fetch", "--", "report")
        # After a task that the exported file lists later.
        self.add("deploy", "--manual", "--timeout", "20m", "--after", "nightly:finished", "--", "deploy.sh")
        self.add("tokyo-hourly", "--every", "1h", "--phase", "0", "--tz", "Asia/Kolkata", "--", "true")
        self.ok("group", "set", "net", "--concurrency", "4")
        exported = self.ok("export")
        self.assertEqual((exported.count('dst_gap = "skip"'), exported.count("dst_gap"), exported.count("dst_repeat")),
                         (1, 1, 1))
        path = os.path.join(self.tmp, "exported.toml")
        with open(path, "w") as f:
            f.write(exported)

        fresh = os.path.join(self.tmp, "fresh.db")
        self.ok("apply", path, db=fresh)
        self.assertEqual(self.definitions(fresh), self.definitions(self.db))
        self.assertEqual(self.json_of("group", "list", db=fresh)[0]["concurrency"], 4)
        self.assertIn(": 0 added, 0 changed, 0 removed, 6 unchanged", self.ok("apply", path))

    def test_disable_when_exhausted_is_an_option_a_file_key_and_exported(self):
        self.add("refresh", "--every", "30m", "--disable-when-exhausted", "--", "true")
        self.add("poller", "--every", "30s", "--", "true")
        self.assertIs(self.task("refresh")["disable_when_exhausted"], True)
        self.assertIs(self.task("poller")["disable_when_exhausted"], False)
        self.assertRegex(self.ok("show", "refresh"), r"retries run out +disable the task until the next update\n")
        self.assertNotIn("retries run out", self.ok("show", "poller"))
        exported = self.ok("export")
        self.assertEqual(exported.count("disable_when_exhausted = true"), 1)
        self.assertEqual(exported.count("disable_when_exhausted"), 1)
        path = os.path.join(self.tmp, "exported.toml")
        with open(path, "w") as f:
            f.write(exported)
        fresh = os.path.join(self.tmp, "fresh.db")
        self.ok("apply", path, db=fresh)
        self.assertEqual([t["disable_when_exhausted"] for t in self.tasks(db=fresh)], [False, True])

        self.ok("edit", "refresh", "--no-disable-when-exhausted")
        self.assertIs(self.task("refresh")["disable_when_exhausted"], False)
        self.assertIn(": 0 added, 1 changed, 0 removed, 1 unchanged", self.ok("apply", path))
        self.assertIs(self.task("refresh")["disable_when_exhausted"], True)

        with open(path, "a") as f:
            f.write('\n[[task]]\nname = "bad"\ncommand = "true"\nevery = "1h"\ndisable_when_exhausted = "yes"\n')
        code, out, err = self.run_taskd("apply", path)
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, "disable_when_exhausted", "expected true or false")

    def test_an_exported_file_edited_and_applied_with_prune_removes_exactly_the_deleted_task(self):
        for name in ("keep", "drop", "also-keep"):
            self.add(name, "--every", "1h", "--owner", "team", "--", "true")
        self.add("theirs", "--every", "1h", "--owner", "them", "--", "true")
        exported = self.ok("export", "--owner", "team")
        self.assertTrue(exported.startswith('# taskd tasks'), exported)
        self.assertIn('\nowner = "team"\n', exported)
        self.assertEqual(exported.count("owner ="), 1, exported)
        tables = exported.split("\n[[task]]\n")
        edited = "\n[[task]]\n".join(t for t in tables if 'name = "drop"' not in t)
        os.makedirs(os.path.join(self.tmp, "checkout"))
        path = os.path.join(self.tmp, "checkout", "team.toml")
        with open(path, "w") as f:
            f.write(edited)
        out = self.ok("apply", path, "--prune")
        self.assertIn("- drop\n", out)
        self.assertIn(": 0 added, 0 changed, 1 removed, 2 unchanged", out)
        self.assertEqual(sorted(t["name"] for t in self.tasks()), ["also-keep", "keep", "theirs"])

    def test_export_of_one_owners_tasks_names_it_once_and_of_several_warns(self):
        self.add("mine", "--every", "1h", "--owner", "me", "--", "true")
        self.add("also-mine", "--every", "1h", "--owner", "me", "--", "true")
        one = self.ok("export")
        self.assertEqual(one.count("owner ="), 1, one)
        self.assertIn('\nowner = "me"\n', one)
        self.add("theirs", "--every", "1h", "--owner", "them", "--", "true")
        code, several, err = self.run_taskd("export")
        self.assertEqual(code, 0, err)
        self.assertEqual(several.count("owner ="), 3, several)
        self.assertIn("the tasks have 2 owners, so each task names its own", err)

    def test_no_timebox_goes_through_export_and_apply(self):
        self.add("long", "--cron", "0 3 * * *", "--timeout", "none", "--", "true")
        exported = self.ok("export")
        self.assertIn('timeout = "none"', exported)
        path = os.path.join(self.tmp, "exported.toml")
        with open(path, "w") as f:
            f.write(exported)
        fresh = os.path.join(self.tmp, "fresh.db")
        self.ok("apply", path, db=fresh)
        self.assertIsNone(self.task("long", db=fresh)["timeout"])

    def test_keep_output_is_an_option_a_file_key_and_exported(self):
        self.add("chatty", "--every", "1h", "--keep-output", "64k", "--", "true")
        self.add("quiet", "--every", "1h", "--", "true")
        self.assertEqual([t["keep_output"] for t in self.tasks()], [64 * 1024, 1024 * 1024])
        exported = self.ok("export")
        self.assertEqual(exported.replace("'", '"').count('keep_output = "64K"'), 1)
        self.assertEqual(exported.count("keep_output"), 1)
        path = os.path.join(self.tmp, "exported.toml")
        with open(path, "w") as f:
            f.write(exported)
        fresh = os.path.join(self.tmp, "fresh.db")
        self.ok("apply", path, db=fresh)
        self.assertEqual([t["keep_output"] for t in self.tasks(db=fresh)], [64 * 1024, 1024 * 1024])

        self.ok("edit", "chatty", "--keep-output", "2M")
        self.assertEqual(self.task("chatty")["keep_output"], 2 * 1024 * 1024)
        self.assertIn(": 0 added, 1 changed, 0 removed, 1 unchanged", self.ok("apply", path))
        self.assertEqual(self.task("chatty")["keep_output"], 64 * 1024)
        self.ok("edit", "chatty", "--keep-output", "0")
        self.assertEqual(self.task("chatty")["keep_output"], 0)

        for bad, message in (("1G", "at most 512M"), ("lots", "expected bytes"), ("12Q", "expected bytes")):
            code, out, err = self.run_taskd("edit", "chatty", "--keep-output", bad)
            self.assertEqual(code, 65, err)
            self.assertOneErrorLine(err, "--keep-output", message)
        self.assertEqual(self.task("chatty")["keep_output"], 0)
        with open(path, "a") as f:
            f.write('\n[[task]]\nname = "bad"\ncommand = "true"\nevery = "1h"\nkeep_output = 1073741824\n')
        code, out, err = self.run_taskd("apply", path)
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, "at most 512M")

    def test_export_owner_writes_only_that_owners_tasks(self):
        self.add("mine", "--every", "1h", "--owner", "me", "--", "true")
        self.add("theirs", "--every", "1h", "--owner", "them", "--", "true")
        exported = self.ok("export", "--owner", "me")
        self.assertIn('name = "mine"', exported.replace("'", '"'))
        self.assertNotIn("theirs", exported)


if __name__ == "__main__":
    unittest.main()
