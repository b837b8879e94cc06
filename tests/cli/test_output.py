"""How taskd prints for people and for programs: `list` as a table that fits
the terminal, relative or absolute next runs, colour only on a terminal and
never with NO_COLOR, and --json on every command that prints data."""

import os
import unittest

from taskd_test import TaskdTestCase, parse_json

NOW = "2026-11-21 14:00:00"
LONG_COMMAND = "echo " + " ".join("word%d" % i for i in range(40))
ESCAPE = "\033["


class ListOutputTest(TaskdTestCase):
    def setUp(self):
        super().setUp()
        self.env["TZ"] = "UTC"
        self.env.pop("COLUMNS", None)
        self.env.pop("NO_COLOR", None)

    def add_tasks(self):
        self.add("soon", "--every", "1h", "--phase", "4m", "--", "true", faketime=NOW)
        self.add("talkative", "--cron", "0 3 * * *", "--shell", "--", LONG_COMMAND, faketime=NOW)

    def add_failed_and_disabled(self):
        self.add("broken", "--every", "1h", "--phase", "0", "--retry", "none", "--permanent-exit", "none",
                 "--", "false", faketime=NOW)
        self.add("refused", "--every", "1h", "--phase", "0", "--shell", "--", "exit 78", faketime=NOW)
        self.run_once(faketime="2026-11-21 15:00:00")

    def list_on_a_terminal(self, columns, env=None, *args):
        """`taskd list` with stdout on a pseudo-terminal `columns` wide; the text it printed."""
        return self.ok_on_a_terminal("list", *args, columns=columns, env=env, faketime="2026-11-21 15:00:00")

    def test_next_run_is_relative_and_absolute_with_absolute(self):
        self.add_tasks()
        out = self.ok("list", faketime=NOW)
        self.assertRegex(out, r"\nsoon +every 1h +in 4m +- +active +true\n")
        self.assertIn("in 13h", out)
        out = self.ok("list", "--absolute", faketime=NOW)
        self.assertRegex(out, r"\nsoon +every 1h +2026-11-21T14:04:00Z +- ")

    def test_past_times_read_ago(self):
        self.add_tasks()
        self.assertIn("1h56m ago", self.ok("list", faketime="2026-11-21 16:00:00"))

    def test_not_a_terminal_no_width_nothing_cut_and_no_colour(self):
        self.add_tasks()
        self.add_failed_and_disabled()
        out = self.ok("list", faketime=NOW)
        self.assertIn(LONG_COMMAND, out)
        self.assertNotIn(ESCAPE, out)
        self.assertNotIn("…", out)

    def test_columns_cuts_the_command_first_then_drops_columns(self):
        self.add_tasks()
        self.env["COLUMNS"] = "100"
        out = self.ok("list", faketime=NOW)
        lines = out.splitlines()
        self.assertTrue(all(len(line) <= 100 for line in lines), out)
        self.assertEqual(lines[0].split(), ["NAME", "SCHEDULE", "NEXT", "LAST", "STATE", "COMMAND"])
        self.assertIn("echo word0 word1", out)
        self.assertTrue(lines[2].endswith("…"), lines[2])
        self.env["COLUMNS"] = "36"
        out = self.ok("list", faketime=NOW)
        self.assertEqual(out.splitlines()[0].split(), ["NAME", "NEXT", "STATE"])
        self.assertTrue(all(len(line) <= 36 for line in out.splitlines()), out)

    def test_control_characters_stay_on_one_line(self):
        self.add("lines", "--every", "1h", "--shell", "--", "printf 'a\\n'\necho b", faketime=NOW)
        out = self.ok("list", faketime=NOW)
        self.assertEqual(len(out.splitlines()), 2, out)
        self.assertIn("printf 'a\\n'\\necho b", out)

    def test_a_terminal_gets_colour_and_its_width(self):
        self.add_tasks()
        self.add_failed_and_disabled()
        out = self.list_on_a_terminal(70)
        self.assertIn(ESCAPE + "31mfailed" + ESCAPE + "0m", out)
        self.assertIn(ESCAPE + "33mdisabled" + ESCAPE + "0m", out)
        self.assertIn(ESCAPE + "32msucceeded" + ESCAPE + "0m", out)
        plain = out.replace(ESCAPE + "0m", "")
        for code in ("31m", "32m", "33m", "36m"):
            plain = plain.replace(ESCAPE + code, "")
        self.assertTrue(all(len(line) <= 70 for line in plain.splitlines()), plain)
        self.assertNotIn(LONG_COMMAND, plain)

    def test_no_color_turns_colour_off_on_a_terminal(self):
        self.add_failed_and_disabled()
        out = self.list_on_a_terminal(200, dict(self.env, NO_COLOR="1"))
        self.assertIn("failed", out)
        self.assertNotIn(ESCAPE, out)


class LocalTimesTest(TaskdTestCase):
    """Human output shows times in the local zone ($TZ), with the offset where it is not
    today's; --utc shows RFC 3339 UTC; --json is always UTC. Under TZ=Europe/Berlin,
    faketime's clock is Berlin's too."""

    utc_times = False

    def setUp(self):
        super().setUp()
        self.env["TZ"] = "Europe/Berlin"

    def test_add_show_list_and_history_show_local_times(self):
        added = self.add("hourly", "--every", "1h", "--phase", "0", "--", "true", faketime="2026-11-21 14:10:00")
        self.assertIn("next run 2026-11-21 15:00:00\n", added)
        self.assertIn("2026-11-21 15:00:00 (in 50m)", self.ok("show", "hourly", faketime="2026-11-21 14:10:00"))
        listed = self.ok("list", "--absolute", faketime="2026-11-21 14:10:00")
        self.assertIn(" 2026-11-21 15:00:00 ", listed)
        self.assertIn(" 2026-11-21T14:00:00Z ", self.ok("--utc", "list", "--absolute", faketime="2026-11-21 14:10:00"))
        self.assertEqual(self.task("hourly")["next_run_at"], "2026-11-21T14:00:00Z")
        self.run_once(faketime="2026-11-21 15:00:01")
        self.assertIn(" 2026-11-21 15:00:00 ", self.ok("history", faketime="2026-11-21 15:00:02"))

    def test_explain_tells_its_times_in_local_time_and_json_in_utc(self):
        self.add("hourly", "--every", "1h", "--phase", "0", "--", "true", faketime="2026-11-21 14:10:00")
        self.run_once(faketime="2026-11-21 15:00:01")
        told = self.ok("explain", "hourly", faketime="2026-11-21 15:10:00")
        self.assertIn("The latest planned slot is 2026-11-21 15:00:00.", told)
        self.assertIn("Next: the planned slot 2026-11-21 16:00:00", told)
        self.assertNotRegex(told, r"\d\dT\d\d:\d\d:\d\d")
        facts = self.json_of("explain", "hourly", faketime="2026-11-21 15:10:00")["facts"]
        self.assertIn("The latest planned slot is 2026-11-21T14:00:00Z.", [fact["text"] for fact in facts])

    def test_a_time_in_another_offset_carries_it(self):
        preview = ["preview", "--cron", "0 3 * * *", "--tz", "UTC", "--count", "2"]
        self.assertEqual(self.ok(*preview, faketime="2026-03-28 12:00:00").splitlines(),
                         ["2026-03-29 05:00:00+02:00", "2026-03-30 05:00:00+02:00"])
        self.assertEqual(self.ok("--utc", *preview, faketime="2026-03-28 12:00:00").splitlines(),
                         ["2026-03-29T03:00:00Z", "2026-03-30T03:00:00Z"])
        self.assertEqual(self.ok(*preview, faketime="2026-03-30 12:00:00").splitlines(),
                         ["2026-03-31 05:00:00", "2026-04-01 05:00:00"])

    def test_forecast_buckets_start_on_the_clock(self):
        self.add("hourly", "--every", "1h", "--phase", "0", "--", "true", faketime="2026-11-21 14:10:20")
        chart = self.ok("forecast", "--window", "2h", "--bucket", "15m", faketime="2026-11-21 14:10:20")
        self.assertTrue(chart.startswith("2026-11-21 14:00:00  "), chart)
        self.assertIn("\n2026-11-21 15:00:00  #", chart)
        self.assertIn("\n2026-11-21 16:00:00  ", chart)  # the window reaches 16:10:20
        forecast = self.json_of("forecast", "--window", "2h", "--bucket", "15m", faketime="2026-11-21 14:10:20")
        self.assertEqual(forecast["from"], "2026-11-21T13:00:00Z")
        self.assertEqual(sum(bucket["starts"] for bucket in forecast["buckets"]), 2)


class JsonEverywhereTest(TaskdTestCase):
    """Every command that prints data prints JSON with --json, and the man page names them all."""

    def test_every_data_command_prints_json(self):
        self.env["TZ"] = "UTC"
        later = "2026-11-21 15:00:02"
        self.assertEqual(self.json_of("add", "tick", "--every", "1h", "--phase", "0", "--", "true",
                                      faketime=NOW)["name"], "tick")
        self.assertEqual(self.json_of("run-once", faketime="2026-11-21 15:00:01")[0]["status"], "succeeded")
        task_file = os.path.join(self.tmp, "tasks.toml")
        with open(task_file, "w") as out:
            out.write('[[task]]\nname = "filed"\nevery = "1h"\ncommand = ["true"]\n')
        commands = [
            ("list",),
            ("show", "tick"),
            ("history",),
            ("logs", "tick"),
            ("preview", "tick"),
            ("forecast",),
            ("explain", "tick"),
            ("status",),
            ("check",),
            ("group", "list"),
            ("calendar", "list"),
            ("edit", "tick", "--timeout", "5m"),
            ("pause", "tick"),
            ("resume", "tick"),
            ("enable", "tick"),
            ("trigger", "tick"),
            ("backfill", "tick", "--from", "2026-11-21T10:00:00Z", "--until", "2026-11-21T12:00:00Z", "--dry-run"),
            ("rename", "tick", "tock"),
            ("apply", task_file),
            ("copy-db", "--from", self.db, "--to", os.path.join(self.tmp, "copy.db")),
        ]
        for args in commands:
            with self.subTest(args=args):
                self.assertIsNotNone(self.json_of(*args, faketime=later, db=None if args[0] == "copy-db" else True))
        report = self.json_of("import-crontab", "-", input="@daily date\n", faketime=NOW)
        self.assertEqual(report["tasks"][0]["name"], "date")
        checked = {"add", "run-once", "import-crontab"} | {args[0] for args in commands}
        self.assertEqual(self.commands_the_man_page_gives_json(), checked)

    def commands_the_man_page_gives_json(self):
        page = os.path.join(os.path.dirname(__file__), "..", "..", "man", "taskd.1")
        with open(page) as text:
            roff = text.read()
        start = roff.index("every command that prints data has it (")
        listed = roff[start:roff.index(")", start)].split("(", 1)[1]
        return {name.strip().replace("\\-", "-") for name in listed.replace("\n", " ").split(",")}


if __name__ == "__main__":
    unittest.main()
