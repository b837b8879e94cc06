"""taskd import-crontab on the real examples of crontab(5) and Debian's
/etc/crontab (copies in fixtures/): what it imports, what it reports, that
bad lines write nothing, and that the tasks run when cron would run them."""

import datetime
import os
import pwd
import resource
import shutil
import unittest

import croniter

from taskd_test import TaskdTestCase

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
MAN_EXAMPLE = os.path.join(FIXTURES, "crontab.5-example")
DEBIAN_CRONTAB = os.path.join(FIXTURES, "debian-etc-crontab")
NOW = "2026-11-21 14:07:00"
# What the environment copied into one crontab's tasks may come to, counted as
# execve(2) counts an environment (NAME=VALUE, a null byte, a pointer).
CARRIED_ENVIRONMENT = 16 * 1024 * 1024


def cron_times(expression, start, count):
    """The next `count` slots of a cron expression after `start`, as cron
    (croniter) computes them on a UTC wall clock, in taskd's RFC 3339 form."""
    walk = croniter.croniter(expression, start)
    return [walk.get_next(datetime.datetime).strftime("%Y-%m-%dT%H:%M:%SZ") for _ in range(count)]


class ImportCrontabTest(TaskdTestCase):
    def setUp(self):
        super().setUp()
        self.env["TZ"] = "UTC"

    def import_crontab(self, *args, **kwargs):
        return self.ok("import-crontab", *args, faketime=NOW, **kwargs)

    def write_crontab(self, text, name="crontab"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def assertReports(self, out, *starts):
        """Each of `starts` begins a line of the report `out`."""
        lines = out.splitlines()
        for start in starts:
            self.assertTrue(any(line.startswith(start) for line in lines), "no line starts with %r" % start)

    def assertPreviewIsCron(self, task):
        start = datetime.datetime(2026, 11, 21, 14, 7)
        times = self.ok("preview", task["name"], "--from", "2026-11-21T14:07:00Z", "--count", "8").split()
        self.assertEqual(times, cron_times(task["schedule"]["spec"], start, 8), task["name"])

    def test_the_example_of_crontab_5(self):
        out = self.import_crontab(MAN_EXAMPLE)
        owner = "crontab:" + MAN_EXAMPLE
        tasks = {t["name"]: t for t in self.tasks()}
        self.assertEqual(sorted(tasks), sorted([
            "daily.job", "monthly", "mail-s-It-s-10pm-joe", "echo-run-23-minutes-after-midn-2am-4am-everyday",
            "echo-run-at-5-after-4-every-sunday", "expr"]))
        for task in tasks.values():
            self.assertEqual(task["schedule"]["kind"], "cron")
            self.assertEqual(task["owner"], owner)
            self.assertEqual(task["tz"], "UTC")
            self.assertEqual(task["env"], {"SHELL": "/bin/sh"}, "MAILTO is reported, not passed on")
            self.assertTrue(task["shell"])
            self.assertPreviewIsCron(task)
        self.assertEqual(tasks["daily.job"]["schedule"]["spec"], "5 0 * * *")
        self.assertEqual(tasks["daily.job"]["command"], "$HOME/bin/daily.job >> $HOME/tmp/out 2>&1")
        self.assertEqual(tasks["echo-run-at-5-after-4-every-sunday"]["schedule"]["spec"], "5 4 * * sun")
        self.assertEqual(tasks["expr"]["command"],
                         "expr $(date +%s) / 60 / 60 / 24 % 9 > /dev/null || echo Wax the floor.")
        self.assertEqual(tasks["mail-s-It-s-10pm-joe"]["command"],
                         "printf '%s' 'Joe,\n\nWhere are your kids?\n' | (\nmail -s \"It's 10pm\" joe\n)")
        where = MAN_EXAMPLE + ":"
        self.assertIn(where + "6: note: MAILTO=paul: not mailed: taskd mails only addresses with an @", out)
        self.assertIn(where + "9: added daily.job: cron 5 0 * * * (UTC)", out)
        self.assertIn("imported 6 task(s) with owner " + owner, out)

    def test_debian_etc_crontab_is_read_with_its_user_field(self):
        path = os.path.join(self.tmp, "crontab")
        shutil.copy(DEBIAN_CRONTAB, path)
        self.import_crontab("--system", path)
        tasks = {t["name"]: t for t in self.tasks()}
        self.assertEqual(sorted(tasks), ["run-parts-report-cron.daily", "run-parts-report-cron.hourly",
                                         "run-parts-report-cron.monthly", "run-parts-report-cron.weekly"])
        daily = tasks["run-parts-report-cron.daily"]
        self.assertEqual(daily["schedule"]["spec"], "25 6 * * *")
        self.assertEqual(daily["command"],
                         "test -x /usr/sbin/anacron || { cd / && run-parts --report /etc/cron.daily; }")
        self.assertEqual(daily["env"], {"SHELL": "/bin/sh",
                                        "PATH": "/usr/local/sbin:/usr/local/bin:/sbin:/bin:/usr/sbin:/usr/bin"})
        for task in tasks.values():
            self.assertPreviewIsCron(task)

    def test_a_crontab_whose_commands_all_start_with_a_user_is_read_as_a_system_one(self):
        path = os.path.join(self.tmp, "crontab")
        shutil.copy(DEBIAN_CRONTAB, path)
        out = self.import_crontab(path)
        self.assertIn("read as a system crontab", out)
        self.assertIn("run-parts-report-cron.weekly", [t["name"] for t in self.tasks()])
        # --user insists: the first word is then part of the command.
        self.ok("rm", "--owner", "crontab:" + path)
        self.import_crontab("--user", path)
        self.assertNotIn("run-parts-report-cron.weekly", [t["name"] for t in self.tasks()])
        self.assertEqual(self.task("root-cd")["command"],
                         "root\tcd / && run-parts --report /etc/cron.hourly")

    def test_a_one_word_command_that_is_also_a_user_name_stays_a_command(self):
        path = self.write_crontab("0 3 * * * sync\n")
        out = self.import_crontab(path)
        self.assertNotIn("read as a system crontab", out)
        self.assertEqual(self.task("sync")["command"], "sync")

    def test_a_system_line_keeps_its_user(self):
        me = pwd.getpwuid(os.geteuid()).pw_name
        path = self.write_crontab(f"0 * * * * nobody id -u\n5 * * * * someone-else true\n10 * * * * {me} date\n")
        out = self.import_crontab("--system", path)
        self.assertNotIn("note:", out)
        users = {t["name"]: t["user"] for t in self.tasks()}
        self.assertEqual(users, {"id-u": "nobody", "true": "someone-else", "date": ""},
                         "the importing user's own lines run as the scheduler does")

    def test_dry_run_prints_the_plan_and_writes_nothing(self):
        out = self.import_crontab("--dry-run", MAN_EXAMPLE)
        self.assertIn(MAN_EXAMPLE + ":17: would add expr: cron 33 22 * * * (UTC)", out)
        self.assertIn("would import 6 task(s)", out)
        self.assertFalse(os.path.exists(self.db), "a dry run created the database")
        self.assertEqual(self.tasks(), [])

    def test_a_bad_line_fails_the_whole_import(self):
        path = self.write_crontab("0 * * * * hourly-job\n@fortnightly start-things\n61 * * * * bad-minute\n")
        code, out, err = self.run_taskd("import-crontab", path, faketime=NOW)
        self.assertEqual(code, 65, err)
        self.assertEqual(out, "")
        self.assertIn(path + ":2: cannot convert: cron: unknown alias \"@fortnightly\"", err)
        self.assertIn(path + ":3: cannot convert: cron: field 1 (minute): 61", err)
        self.assertIn("2 line(s) of %s cannot be converted; nothing was imported" % path, err)
        self.assertFalse(os.path.exists(self.db), "bad input created the database")

    def test_skip_bad_imports_the_lines_that_convert(self):
        path = self.write_crontab("0 * * * * hourly-job\n@fortnightly start-things\n")
        out = self.import_crontab("--skip-bad", path)
        self.assertIn(path + ":2: skipped: cron: unknown alias \"@fortnightly\"", out)
        self.assertEqual([t["name"] for t in self.tasks()], ["hourly-job"])

    def test_importing_as_another_owner_collides_and_rm_owner_removes_the_import(self):
        self.import_crontab(MAN_EXAMPLE)
        code, _, err = self.run_taskd("import-crontab", "--owner", "other", MAN_EXAMPLE, faketime=NOW)
        self.assertEqual(code, 65)
        self.assertIn(MAN_EXAMPLE + ":9: cannot convert: a task named \"daily.job\" already exists", err)
        self.ok("rm", "--owner", "crontab:" + MAN_EXAMPLE)
        self.assertEqual(self.tasks(), [])

    def test_importing_the_same_crontab_again_updates_in_place_and_keeps_history(self):
        path = self.write_crontab("0 * * * * echo hourly\n30 2 * * * echo nightly\n0 5 * * * echo gone\n")
        self.import_crontab(path)
        self.run_once(faketime="2026-11-21 15:00:30")
        self.assertEqual([r["status"] for r in self.history("echo-hourly")], ["succeeded"])
        before = {t["name"]: t for t in self.tasks()}
        self.assertIsNotNone(before["echo-hourly"]["last_run_at"])

        self.write_crontab("15 * * * * echo hourly\n30 2 * * * echo nightly\n0 6 * * * echo new\n")
        plan = self.import_crontab("--dry-run", path)
        self.assertReports(plan, path + ":1: would change echo-hourly: schedule", path + ":2: unchanged echo-nightly",
                           path + ":3: would add echo-new: cron 0 6 * * *", path + ": would remove echo-gone")
        self.assertIn("(1 added, 1 changed, 1 removed, 1 unchanged); nothing was written", plan)
        self.assertEqual(sorted(t["name"] for t in self.tasks()), ["echo-gone", "echo-hourly", "echo-nightly"])

        out = self.import_crontab(path)
        self.assertReports(out, path + ":1: changed echo-hourly: schedule", path + ":2: unchanged echo-nightly",
                           path + ":3: added echo-new", path + ": removed echo-gone")
        after = {t["name"]: t for t in self.tasks()}
        self.assertEqual(sorted(after), ["echo-hourly", "echo-new", "echo-nightly"])
        self.assertEqual(after["echo-hourly"]["last_run_at"], before["echo-hourly"]["last_run_at"])
        self.assertEqual(after["echo-nightly"], before["echo-nightly"])
        self.assertEqual(after["echo-hourly"]["schedule"]["spec"], "15 * * * *")
        self.assertEqual([r["status"] for r in self.history("echo-hourly")], ["succeeded"])
        self.assertIn("0 added, 0 changed, 0 removed, 3 unchanged", self.import_crontab(path))

    def test_a_dry_run_shows_every_line_although_some_cannot_convert(self):
        path = self.write_crontab("0 * * * * echo first\n@fortnightly start-things\n61 * * * * echo bad\n"
                                  "0 1 * * * echo last\n")
        code, out, err = self.run_taskd("import-crontab", "--dry-run", path, faketime=NOW)
        self.assertEqual(code, 65, err)
        self.assertReports(out, path + ":1: would add echo-first", path + ":2: cannot convert: cron: unknown alias",
                           path + ":3: cannot convert: cron: field 1 (minute): 61", path + ":4: would add echo-last")
        self.assertIn("2 line(s) of %s cannot be converted; the import would write nothing" % path, err)
        self.assertFalse(os.path.exists(self.db), "a dry run created the database")

    def test_imported_tasks_keep_crons_behaviour(self):
        path = self.write_crontab("0 9 28-31 * * echo month-end\n")
        out = self.import_crontab(path)
        self.assertIn("overlap=skip", out)
        task = self.task("echo-month-end")
        self.assertEqual((task["retry"], task["timeout"], task["permanent_exit"]), ([], None, []))
        self.assertEqual(task["overlap"], "skip")

    def test_standard_input_and_an_owner_of_ones_own(self):
        self.ok("import-crontab", "-", "--owner", "mine", input="@hourly date\n", faketime=NOW)
        task = self.task("date")
        self.assertEqual(task["owner"], "mine")
        self.assertEqual(task["schedule"], {"kind": "cron", "spec": "@hourly"})
        self.ok("import-crontab", input="@daily uptime\n", faketime=NOW)
        self.assertEqual(self.task("uptime")["owner"], "crontab:-")

    def test_cron_tz_and_shell(self):
        path = self.write_crontab("CRON_TZ=Asia/Kolkata\nSHELL=/bin/bash\n30 9 * * * echo $BASH_VERSION\n")
        self.import_crontab(path)
        task = self.task("echo-BASH-VERSION")
        self.assertEqual(task["tz"], "Asia/Kolkata")
        self.assertFalse(task["shell"])
        self.assertEqual(task["command"], ["/bin/bash", "-c", "echo $BASH_VERSION"])
        self.assertEqual(task["next_run_at"], "2026-11-22T04:00:00Z")  # 09:30 in Kolkata

    def test_percent_input_reaches_the_command_as_cron_would_feed_it(self):
        out_file = os.path.join(self.tmp, "out")
        path = self.write_crontab("* * * * * cat > %s # a comment%%first%%second\\%%\n" % out_file)
        self.import_crontab(path)
        self.run_once(faketime="2026-11-21 14:08:00")
        with open(out_file) as f:
            self.assertEqual(f.read(), "first\nsecond%")

    def test_json_report(self):
        report = self.json_of("import-crontab", "--skip-bad", "--dry-run", MAN_EXAMPLE, faketime=NOW)
        self.assertEqual(report["owner"], "crontab:" + MAN_EXAMPLE)
        self.assertTrue(report["dry_run"])
        self.assertEqual([t["line"] for t in report["tasks"]], [9, 11, 13, 14, 15, 17])
        self.assertEqual(report["tasks"][0]["next_run_at"], "2026-11-22T00:05:00Z")
        self.assertEqual(report["skipped"], [])
        self.assertEqual([n["line"] for n in report["notes"]], [6])

    def test_a_missing_file_is_bad_input(self):
        code, _, err = self.run_taskd("import-crontab", os.path.join(self.tmp, "nope"))
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, "cannot read", "nope", "No such file")

    def test_many_repeated_lines_import_in_linear_work(self):
        # 50 000 lines: an environment line every tenth line, a report line of
        # its own every seventh, and the same backup line everywhere else.
        # Numbering each repeat by trying every number below it took 6.7 s of
        # CPU for 10 000 repeats here, growing with their square (about 140 s
        # for these 45 000); the import takes about 2 s, and the kernel ends it
        # past 60 s (RLIMIT_CPU): a bound only quadratic work reaches.
        lines, backups, reports = [], 0, 0
        for i in range(50000):
            if i % 10 == 0:
                lines.append("%s=/value/%d" % (("PATH", "MAILFROM", "LANG", "DIR", "HINT")[i // 10 % 5], i))
            elif i % 7 == 0:
                lines.append("%d %d * * * /usr/local/bin/report --day %d" % (i % 60, i % 24, i))
                reports += 1
            else:
                lines.append("*/5 * * * * /usr/local/bin/backup --all >/dev/null 2>&1")
                backups += 1
        path = self.write_crontab("\n".join(lines) + "\n")

        def limit_cpu():
            resource.setrlimit(resource.RLIMIT_CPU, (60, 60))

        code, out, err = self.run_taskd("import-crontab", "--dry-run", path, faketime=NOW, timeout=600,
                                        preexec_fn=limit_cpu)
        self.assertEqual(code, 0, err[-2000:])
        self.assertReports(out, "would import %d task(s)" % (backups + reports), path + ":2: would add backup-all: ",
                           path + ":50000: would add backup-all-%d: " % backups,
                           path + ":49995: would add report-day-49994: ")

    def test_environment_lines_between_jobs_are_copied_up_to_a_limit(self):
        # A variable of its own above each of 5 000 jobs: job k carries k
        # variables, 12.5 million copies in all, which took 1.6 GB before. The
        # copies stop at the limit, and the lines below it do not convert.
        lines, carried, environment, within = [], 0, 0, None
        for i in range(5000):
            lines += ["V%d=value%d" % (i, i), "%d * * * * job%d" % (i % 60, i)]
            environment += len("V%d=value%d" % (i, i)) + 1 + 8
            if within is None and carried + environment > CARRIED_ENVIRONMENT:
                within, refused_with = i, environment
            carried += environment
        path = self.write_crontab("\n".join(lines) + "\n")
        code, out, err = self.run_taskd("import-crontab", "--dry-run", "--skip-bad", path, faketime=NOW, timeout=600)
        # The largest child of this test process so far, in KiB: within a
        # bound that N*N copies pass by far.
        self.assertLess(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, 1024 * 1024)
        self.assertEqual(code, 0, err[-2000:])
        self.assertReports(
            out, "would import %d task(s)" % within, "%s:%d: would add job%d: " % (path, 2 * within, within - 1),
            "%s:%d: skipped: the %d variable(s) set above this line (%d bytes) would bring the environment copied "
            "into the tasks of this crontab past 16 MiB in all" % (path, 2 * within + 2, within + 1, refused_with))


if __name__ == "__main__":
    unittest.main()
