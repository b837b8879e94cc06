"""taskd defaults (taskd(1), DEFAULTS): values a task takes where it sets
nothing itself. A change reaches every task that takes the field, at once
and in the same transaction; a task that sets the field keeps its own; `edit
--default` gives a field back to the defaults; show and --json say which
fields come from them; export leaves them out so that apply keeps them
following the defaults; a database from before the defaults existed has its
tasks take the fields they left at taskd's own values."""

import os

import test_migrate
from taskd_test import TaskdTestCase, parse_json


ALERTS = ["mail_to", "notify_url", "notify_format", "notify"]
ALL_BUT_ZONE = ALERTS + ["retry", "timeout", "keep_runs"]


def from_defaults(task):
    return task["from_defaults"]


class DefaultsTest(TaskdTestCase):
    def test_a_task_takes_what_it_does_not_set_and_follows_a_change(self):
        self.add("plain", "--every", "1h", "--", "/bin/true")
        self.add("own", "--every", "1h", "--timeout", "5m", "--retry", "none", "--", "/bin/true")
        self.assertEqual(from_defaults(self.task("plain")), ALL_BUT_ZONE)
        self.assertEqual(from_defaults(self.task("own")), ALERTS + ["keep_runs"])

        out = self.ok("defaults", "--timeout", "2m", "--retry", "1m,10m", "--keep-runs", "50")
        self.assertIn("default --timeout set to 2m\n", out)
        self.assertIn("2 tasks changed\n", out)
        plain, own = self.task("plain"), self.task("own")
        self.assertEqual((plain["timeout"], plain["retry"], plain["keep_runs"]), (120, [60, 600], 50))
        self.assertEqual((own["timeout"], own["retry"], own["keep_runs"]), (300, [], 50))

        # A task added now takes them too; clearing one gives taskd's own value back.
        self.add("later", "--every", "1h", "--", "/bin/true")
        self.assertEqual(self.task("later")["timeout"], 120)
        self.ok("defaults", "--clear", "timeout")
        self.assertEqual(self.task("plain")["timeout"], 1800)  # half the interval
        self.assertEqual(self.task("own")["timeout"], 300)

    def test_the_listing_says_each_default_and_how_many_tasks_take_it(self):
        self.add("a", "--every", "1h", "--", "/bin/true")
        self.add("b", "--every", "1h", "--notify", "echo b", "--", "/bin/true")
        self.ok("defaults", "--notify", "echo failed")
        out = self.ok("defaults")
        self.assertRegex(out, r"--notify +echo failed +1\n")
        self.assertRegex(out, r"--timeout +not set \(half the interval\) +2\n")
        shown = self.json_of("defaults")["defaults"]
        self.assertEqual(shown["notify"], {"value": "echo failed", "built_in": "", "tasks": 1})
        self.assertEqual(shown["retry"]["value"], None)
        self.assertEqual(shown["retry"]["built_in"], "0s,1m,5m,15m,30m,1h")
        self.assertEqual(self.task("b")["notify"], "echo b")
        self.assertEqual(self.task("a")["notify"], "echo failed")
        show = self.ok("show", "a")
        self.assertRegex(show, r"from defaults +mail_to, notify_url, notify_format, notify, retry, timeout, keep_runs "
                                     r"\(taskd defaults\)\n")

    def test_a_zone_default_moves_the_wall_clock_schedules_that_take_it(self):
        self.add("nightly", "--cron", "0 3 * * *", "--tz", "UTC", "--", "/bin/true")
        self.add("cron", "--cron", "0 3 * * *", "--", "/bin/true", env={"TZ": "UTC"})
        self.add("hourly", "--every", "1h", "--", "/bin/true")
        self.assertNotIn("tz", from_defaults(self.task("nightly")))
        self.assertIn("tz", from_defaults(self.task("cron")))
        self.assertNotIn("tz", from_defaults(self.task("hourly")))  # --every without --tz counts in UTC
        self.ok("defaults", "--tz", "Asia/Tokyo", faketime="2026-06-01 12:00:00")
        cron = self.task("cron")
        self.assertEqual(cron["tz"], "Asia/Tokyo")
        self.assertEqual(cron["next_run_at"], "2026-06-01T18:00:00Z")  # 03:00 in Tokyo
        self.assertEqual(self.task("nightly")["tz"], "UTC")
        self.assertEqual(self.task("hourly")["tz"], "")
        # Cleared, the zone stays where it is: there is no zone to go back to.
        self.ok("defaults", "--clear", "tz")
        self.assertEqual(self.task("cron")["tz"], "Asia/Tokyo")

    def test_edit_sets_a_field_itself_and_default_gives_it_back(self):
        self.ok("defaults", "--timeout", "2m")
        self.add("a", "--every", "1h", "--", "/bin/true")
        self.ok("edit", "a", "--timeout", "7m")
        self.assertNotIn("timeout", from_defaults(self.task("a")))
        self.ok("defaults", "--timeout", "3m")
        self.assertEqual(self.task("a")["timeout"], 420)
        self.ok("edit", "a", "--default", "timeout")
        self.assertEqual(self.task("a")["timeout"], 180)
        self.assertIn("timeout", from_defaults(self.task("a")))
        code, _, err = self.run_taskd("edit", "a", "--default", "timeout", "--timeout", "1m")
        self.assertEqual(code, 2)
        self.assertOneErrorLine(err, "--timeout and --default timeout")
        code, _, err = self.run_taskd("edit", "a", "--default", "kill_grace")
        self.assertEqual(code, 2)
        self.assertOneErrorLine(err, "kill_grace", "has no default")

    def test_bad_defaults_are_refused_and_write_nothing(self):
        self.add("a", "--every", "1h", "--", "/bin/true")
        before = self.task("a")
        for args, code, fragment in [(["--timeout", "soon"], 65, "--timeout"),
                                     (["--retry", "5m,1m"], 65, "--retry"),
                                     (["--keep-runs", "0"], 65, "--keep-runs"),
                                     (["--tz", "Mars/Olympus"], 65, "--tz"),
                                     (["--clear", "kill_grace"], 2, "kill_grace"),
                                     (["--timeout", "1m", "--clear", "timeout"], 2, "both set and cleared")]:
            with self.subTest(args=args):
                got, _, err = self.run_taskd("defaults", "--notify", "echo x", *args)
                self.assertEqual(got, code, err)
                self.assertOneErrorLine(err, fragment)
                self.assertEqual(self.task("a"), before)
                self.assertIsNone(self.json_of("defaults")["defaults"]["notify"]["value"])

    def test_export_leaves_out_what_comes_from_the_defaults_and_apply_keeps_it_so(self):
        self.ok("defaults", "--timeout", "2m")
        self.add("a", "--every", "1h", "--", "/bin/true")
        self.add("b", "--every", "1h", "--timeout", "2m", "--keep-runs", "1000", "--", "/bin/true")
        exported = self.ok("export")
        a, b = exported.split("[[task]]")[1:]
        self.assertNotIn("timeout", a)
        self.assertIn('timeout = "2m"', b)  # its own, though the same as the default
        self.assertIn("keep_runs = 1000", b)
        path = os.path.join(self.tmp, "tasks.toml")
        with open(path, "w", encoding="utf-8") as file:
            file.write(exported)
        self.assertIn("0 added, 0 changed, 0 removed, 2 unchanged", self.ok("apply", path))
        # The same value written in the file makes it the task's own: a change.
        with open(path, "w", encoding="utf-8") as file:
            file.write(exported.replace('every = "1h"\n', 'every = "1h"\ntimeout = "2m"\n', 1))
        self.assertIn("~ a: timeout\n", self.ok("apply", path))
        self.assertNotIn("timeout", from_defaults(self.task("a")))
        with open(path, "w", encoding="utf-8") as file:
            file.write(exported)
        self.ok("apply", path)
        self.ok("defaults", "--timeout", "4m")
        self.assertEqual((self.task("a")["timeout"], self.task("b")["timeout"]), (240, 120))

    def test_a_task_file_sets_what_it_writes_and_takes_the_rest(self):
        self.ok("defaults", "--retry", "none")
        path = os.path.join(self.tmp, "tasks.toml")
        with open(path, "w", encoding="utf-8") as file:
            file.write('[defaults]\nkeep_runs = 7\n\n'
                       '[[task]]\nname = "a"\ncommand = ["/bin/true"]\nevery = "1h"\n\n'
                       '[[task]]\nname = "b"\ncommand = ["/bin/true"]\nevery = "1h"\nretry = ["1m"]\n')
        self.ok("apply", path)
        a, b = self.task("a"), self.task("b")
        self.assertEqual((a["retry"], a["keep_runs"], from_defaults(a)), ([], 7, ALERTS + ["retry", "timeout"]))
        self.assertEqual((b["retry"], from_defaults(b)), ([60], ALERTS + ["timeout"]))

    def test_an_imported_crontab_keeps_crons_rules_and_takes_the_notify_command(self):
        self.ok("defaults", "--notify", "echo failed", "--retry", "5m")
        crontab = os.path.join(self.tmp, "crontab")
        with open(crontab, "w", encoding="utf-8") as file:
            file.write("17 * * * * /bin/true\n")
        self.ok("import-crontab", crontab)
        task = self.task(self.tasks()[0]["name"])
        self.assertEqual((task["notify"], task["retry"], task["timeout"]), ("echo failed", [], None))
        self.assertIn("mail_to", from_defaults(task))
        # MAILTO is the mail of the lines below it: their own.
        with open(crontab, "w", encoding="utf-8") as file:
            file.write("MAILTO=ops@example.org\n17 * * * * /bin/true\n")
        self.ok("import-crontab", crontab)
        task = self.task(self.tasks()[0]["name"])
        self.assertEqual(task["mail_to"], "ops@example.org")
        self.assertNotIn("mail_to", from_defaults(task))


class DefaultsCopyTest(TaskdTestCase):
    def defaults_of(self, db):
        out = self.ok("--db", db, "--json", "defaults", db=None)
        return {field: entry["value"] for field, entry in parse_json(self, out)["defaults"].items()}

    def test_copy_db_takes_the_defaults_along_and_refuses_other_ones(self):
        self.ok("defaults", "--timeout", "2m")
        self.add("a", "--every", "1h", "--", "/bin/true")
        copy = os.path.join(self.tmp, "copy.db")
        self.ok("copy-db", "--from", self.db, "--to", copy, db=None)
        self.assertEqual(self.defaults_of(copy)["timeout"], "2m")
        self.ok("--db", copy, "defaults", "--timeout", "4m", db=None)
        shown = parse_json(self, self.ok("--db", copy, "--json", "show", "a", db=None))
        self.assertEqual(shown["timeout"], 240)  # the copy still takes it from the defaults

        other = os.path.join(self.tmp, "other.db")
        self.ok("--db", other, "defaults", "--timeout", "3m", db=None)
        self.ok("--db", other, "add", "b", "--every", "1h", "--", "/bin/true", db=None)
        code, _, err = self.run_taskd("copy-db", "--from", self.db, "--to", other, "--merge", db=None)
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, "other defaults", "timeout", "nothing written")
        self.assertEqual(self.defaults_of(other)["timeout"], "3m")


class DefaultsMigrationTest(TaskdTestCase):
    def test_tasks_from_before_take_the_fields_they_left_at_taskds_values(self):
        version = next(v for v, sql in sorted(test_migrate.SECTIONS.items()) if "from_defaults" in sql)
        test_migrate.MigrateTest.make_database_at(self, version - 1)
        columns = "name, command, schedule_kind, schedule_spec, created_at, updated_at"
        self.sql(f"INSERT INTO tasks ({columns}) VALUES ('plain', '[\"/bin/true\"]', 'every', '1h', 0, 0)")
        self.sql(f"INSERT INTO tasks ({columns}, timeout, retry, notify, keep_runs) "
                 "VALUES ('own', '[\"/bin/true\"]', 'every', '1h', 0, 0, 60, '[]', 'echo', 5)")
        self.ok("migrate")
        self.assertEqual(from_defaults(self.task("plain")), ALL_BUT_ZONE)
        self.assertEqual(from_defaults(self.task("own")), ["mail_to", "notify_url", "notify_format"])
        self.ok("defaults", "--keep-runs", "9")
        self.assertEqual((self.task("plain")["keep_runs"], self.task("own")["keep_runs"]), (9, 5))


if __name__ == "__main__":
    import unittest
    unittest.main()
