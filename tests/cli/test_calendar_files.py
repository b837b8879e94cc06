"""[[calendar]] tables in task files: apply creates or replaces them with
the tasks, export writes those its tasks use."""

import os
import textwrap
import unittest

from taskd_test import TaskdTestCase

T0 = "2026-12-20 12:00:00"
BERLIN_NINE = ["--cron", "0 9 * * *", "--tz", "Europe/Berlin"]

FILE = """\
    [[task]]
    name = "standup"
    command = ["true"]
    cron = "0 9 * * *"
    tz = "Europe/Berlin"
    skip_calendar = ["xmas"]

    [[calendar]]
    name = "xmas"
    dates = ["2026-12-24 Christmas Eve", "2026-12-25 Christmas Day"]
    """


class CalendarFileTest(TaskdTestCase):
    def write(self, text, name="tasks.toml"):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(text))
        return path

    def days(self, name):
        return [(d["date"], d["name"]) for d in self.json_of("calendar", "show", name)]

    def preview(self, name, count, faketime=T0):
        return self.json_of("preview", name, "--count", str(count), faketime=faketime)

    def test_apply_creates_the_calendar_a_task_of_the_file_uses(self):
        path = self.write(FILE)
        out = self.ok("apply", path, "--dry-run", faketime=T0)
        self.assertIn("+ calendar xmas: 2 days\n+ standup\n", out)
        self.assertEqual(self.json_of("calendar", "list"), [])
        self.ok("apply", path, faketime=T0)
        self.assertEqual(self.days("xmas"), [("2026-12-24", "Christmas Eve"), ("2026-12-25", "Christmas Day")])
        self.assertEqual(self.preview("standup", 3), [
            "2026-12-21T08:00:00Z", "2026-12-22T08:00:00Z", "2026-12-23T08:00:00Z"])
        self.assertEqual(self.preview("standup", 5)[3:], ["2026-12-26T08:00:00Z", "2026-12-27T08:00:00Z"])
        self.assertIn("0 added, 0 changed, 0 removed, 1 unchanged", self.ok("apply", path, faketime=T0))

    def test_replacing_a_calendar_plans_every_task_that_uses_it_again(self):
        self.ok("apply", self.write(FILE), faketime="2026-12-23 12:00:00")
        self.add("other", *BERLIN_NINE, "--skip-calendar", "xmas", "--", "true", faketime="2026-12-23 12:00:00")
        self.assertEqual(self.task("other")["next_run_at"], "2026-12-26T08:00:00Z")
        self.assertEqual(self.task("standup")["next_run_at"], "2026-12-26T08:00:00Z")
        path = self.write(FILE.replace('"2026-12-24 Christmas Eve", ', ""))
        plan = self.json_of("apply", path, "--dry-run", faketime="2026-12-23 12:00:00")
        self.assertEqual(plan["calendars"], [{"action": "change", "name": "xmas", "days": 1, "was": 2}])
        self.assertEqual(plan["tasks"], [{"action": "change", "name": "standup", "fields": ["calendar_days"]}])
        self.assertEqual(self.task("other")["next_run_at"], "2026-12-26T08:00:00Z")
        out = self.ok("apply", path, faketime="2026-12-23 12:00:00")
        self.assertIn("~ calendar xmas: 1 day (was 2)\n~ standup: calendar_days\n", out)
        self.assertEqual(self.days("xmas"), [("2026-12-25", "Christmas Day")])
        self.assertEqual(self.task("standup")["next_run_at"], "2026-12-24T08:00:00Z")
        self.assertEqual(self.task("other")["next_run_at"], "2026-12-24T08:00:00Z")

    def test_export_writes_the_calendars_its_tasks_use_and_apply_reads_them_back(self):
        path = self.write("2026-12-24 \"Eve\" \\ of\tChristmas\n2027-01-01\n", name="days.txt")
        self.ok("calendar", "add", "xmas", "--dates", path)
        self.ok("calendar", "add", "unused", "--dates", path)
        self.add("standup", *BERLIN_NINE, "--skip-calendar", "xmas", "--", "true", faketime=T0)
        self.add("payroll", "--every", "6h", "--only-calendar", "xmas", "--", "true", faketime=T0)
        exported = self.ok("export")
        self.assertEqual(exported.count("[[calendar]]"), 1)
        self.assertNotIn("unused", exported)
        path = self.write(exported, name="exported.toml")
        self.assertIn("0 added, 0 changed, 0 removed, 2 unchanged", self.ok("apply", path, faketime=T0))
        for name in ("standup", "payroll"):
            self.ok("rm", name)
        for name in ("xmas", "unused"):
            self.ok("calendar", "rm", name)
        self.assertIn("+ calendar xmas: 2 days\n", self.ok("apply", path, faketime=T0))
        self.assertEqual(self.ok("export"), exported)
        self.assertEqual(self.days("xmas"), [("2026-12-24", '"Eve" \\ of\tChristmas'), ("2027-01-01", "")])

    def test_a_bad_calendar_names_the_file_and_line_and_writes_nothing(self):
        cases = {
            'dates = ["2026-12-24", "2026-13-01 nope"]':
                ':10:24: calendar "xmas": dates: "2026-13-01 nope" does not start with a day',
            'dates = "2026-12-24"': ':10:9: calendar "xmas": dates: expected an array',
            'dates = [20261224]': ':10:10: calendar "xmas": dates: expected a string',
            'days = []': ':10:1: unknown key "days" in calendar "xmas"',
        }
        for line, error in cases.items():
            path = self.write(FILE.replace('dates = ["2026-12-24 Christmas Eve", "2026-12-25 Christmas Day"]', line))
            code, out, err = self.run_taskd("apply", path, faketime=T0)
            self.assertEqual((code, out), (65, ""), err)
            self.assertOneErrorLine(err, path + error)
        path = self.write(FILE + '\n    [[calendar]]\n    name = "xmas"\n    dates = []\n')
        code, _, err = self.run_taskd("apply", path, faketime=T0)
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, path + ':12:1: calendar "xmas" is already listed at ' + path + ":8:1")
        path = self.write(FILE.replace('name = "xmas"', 'name = "x mas"'))
        code, _, err = self.run_taskd("apply", path, faketime=T0)
        self.assertEqual(code, 65)
        self.assertIn(path + ":9:8: calendar: ", err)
        self.assertFalse(os.path.exists(self.db), "a bad file created the database")

    def test_prune_leaves_the_calendars_alone(self):
        path = self.write(FILE)
        self.ok("apply", path, faketime=T0)
        self.ok("apply", self.write('[[task]]\nname = "x"\ncommand = ["true"]\nevery = "1h"\n', name="tasks.toml"),
                "--prune", faketime=T0)
        self.assertEqual([t["name"] for t in self.tasks()], ["x"])
        self.assertEqual(len(self.days("xmas")), 2)


if __name__ == "__main__":
    unittest.main()
