"""taskd check, the monitoring plugin (taskd(1), check): its summary line
with performance data, a detail line per problem and its exit codes (0 OK,
1 WARNING, 2 CRITICAL, 3 UNKNOWN, usage errors too); a disabled task, a task
past its --alert-after and a database no scheduler heartbeats on while tasks
are due are CRITICAL, a late run is a WARNING; --json; the same facts in
taskd metrics; the --alert-after field through add, edit, show, export and
apply. Every time is explicit (faketime); nothing sleeps."""

import datetime
import os
import re
import unittest

from taskd_test import STORE, TaskdTestCase, parse_json

T0 = "2026-11-21 10:00:00"


def unix_ms(text):
    """Unix milliseconds of "2026-11-21 10:00:00" (UTC)."""
    moment = datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.timezone.utc)
    return int(moment.timestamp() * 1000)


# The user a database's file modes bind: nobody when the tests run as root
# (root reads any file whatever its mode).
ANOTHER_UID = 65534


def as_bound_user():
    """preexec_fn for a taskd that file modes bind."""
    if os.geteuid() == 0:
        os.setgid(ANOTHER_UID)
        os.setuid(ANOTHER_UID)


SUMMARY = re.compile(r"^TASKD (OK|WARNING|CRITICAL|UNKNOWN) - [^|\n]+"
                     r" \| ok=\d+ warning=\d+ critical=\d+ paused=\d+$")


class CheckTestCase(TaskdTestCase):
    def check(self, *args, at, expect):
        """taskd check ARGS at the time `at`; asserts the exit code `expect`
        and returns stdout's lines (the summary first)."""
        code, out, err = self.run_taskd("check", *args, faketime=at)
        self.assertEqual(code, expect, "check %s at %s:\nstdout: %s\nstderr: %s" % (args, at, out, err))
        self.assertEqual(err, "")
        lines = out.splitlines()
        self.assertRegex(lines[0], SUMMARY)
        return lines

    def check_json(self, *args, at, expect):
        code, out, err = self.run_taskd("--json", "check", *args, faketime=at)
        self.assertEqual(code, expect, err)
        return parse_json(self, out)

    def add_worker(self, heartbeat, role="run"):
        """A scheduler's row in the workers table, of another host, with its
        last heartbeat at `heartbeat`."""
        self.sql("INSERT INTO workers (role, host, pid, boot_id, process_start, concurrency, started_at, "
                 "heartbeat_at) VALUES (?, 'elsewhere.example', 77, 'b', 1, 4, ?, ?)",
                 (role, unix_ms(T0), unix_ms(heartbeat)))


class VerdictTest(CheckTestCase):
    def test_a_healthy_database_is_ok_in_one_line(self):
        self.add("hourly", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        self.add("manual", "--manual", "--alert-after", "1d", "--", "true", faketime=T0)
        lines = self.check(at="2026-11-21 10:30:00", expect=0)
        self.assertEqual(lines, ["TASKD OK - 2 tasks ok | ok=2 warning=0 critical=0 paused=0"])

    def test_a_disabled_task_is_critical_with_its_reason(self):
        self.add("backup", "--every", "1h", "--phase", "0", "--start-now", "--permanent-exit", "3", "--",
                 "sh", "-c", "echo 'disk full' >&2; exit 3", faketime=T0)
        self.add("fine", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        self.run_once(faketime=T0)
        self.assertTrue(self.task("backup")["disabled_until_update"])
        lines = self.check(at="2026-11-21 10:00:30", expect=2)
        self.assertEqual(lines, ["TASKD CRITICAL - 1 task critical: backup | ok=1 warning=0 critical=1 paused=0",
                                 "CRITICAL backup: disabled: disk full"])

    def test_a_paused_task_is_not_judged(self):
        self.add("backup", "--manual", "--alert-after", "1h", "--", "true", faketime=T0)
        self.sql("UPDATE tasks SET disabled_until_update = 1, disabled_reason = 'broken'")
        self.check(at="2026-11-21 12:00:00", expect=2)
        self.ok("pause", "backup")
        lines = self.check(at="2026-11-21 12:00:00", expect=0)
        self.assertEqual(lines, ["TASKD OK - 0 tasks ok, 1 paused | ok=0 warning=0 critical=0 paused=1"])

    def test_a_task_past_its_alert_after_is_critical_counted_from_its_last_success(self):
        self.add("report", "--manual", "--alert-after", "2h", "--", "true", faketime=T0)
        self.ok("trigger", "report", faketime=T0)
        self.run_once(faketime=T0)
        self.assertEqual(self.task("report")["last_succeeded_at"], "2026-11-21T10:00:00.000Z")
        self.assertEqual(self.check(at="2026-11-21 12:00:00", expect=0)[1:], [])
        lines = self.check(at="2026-11-21 12:00:01", expect=2)
        self.assertEqual(lines, [
            "TASKD CRITICAL - 1 task critical: report | ok=0 warning=0 critical=1 paused=0",
            "CRITICAL report: no success for 2h1s (alert after 2h; last success 2026-11-21T10:00:00Z)"])
        self.ok("edit", "report", "--alert-after", "none")
        self.check(at="2026-11-21 12:00:01", expect=0)

    def test_local_times_carry_their_offset_and_json_stays_utc(self):
        self.env["TZ"] = "Europe/Berlin"
        self.utc_times = False
        self.add("report", "--manual", "--alert-after", "2h", "--", "true", faketime=T0)
        code, out, _ = self.run_taskd("check", faketime="2026-11-21 12:00:01")
        self.assertEqual(code, 2, out)
        self.assertEqual(out.splitlines()[1], "CRITICAL report: never succeeded in the 2h1s since it was added "
                                              "2026-11-21 10:00:00+01:00 (alert after 2h)")  # faketime reads local time
        problem = self.check_json(at="2026-11-21 12:00:01", expect=2)["problems"][0]
        self.assertIn("added 2026-11-21T09:00:00Z", problem["detail"])
        self.assertEqual(problem["since"], "2026-11-21T09:00:00Z")

    def test_a_task_that_never_succeeded_counts_from_its_creation(self):
        self.add("fresh", "--manual", "--alert-after", "1h", "--", "false", faketime=T0)
        self.ok("trigger", "fresh", faketime=T0)
        self.run_once(faketime=T0)  # fails: no success yet
        self.check(at="2026-11-21 11:00:00", expect=0)
        lines = self.check(at="2026-11-21 11:30:00", expect=2)
        self.assertEqual(lines[1], "CRITICAL fresh: never succeeded in the 1h30m since it was added "
                                   "2026-11-21T10:00:00Z (alert after 1h)")

    def test_no_scheduler_while_a_task_is_due_for_two_minutes_is_critical(self):
        self.add("hourly", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)  # due at 11:00
        self.check(at="2026-11-21 10:59:00", expect=0)  # nothing due: no scheduler needed
        self.check(at="2026-11-21 11:01:59", expect=0)  # due, not for two minutes yet
        lines = self.check(at="2026-11-21 11:02:00", expect=2)
        self.assertEqual(lines, [
            "TASKD CRITICAL - no scheduler (taskd run) is registered while 1 task is due"
            " | ok=1 warning=0 critical=0 paused=0",
            "CRITICAL scheduler: no scheduler (taskd run) is registered while 1 task is due"])

    def test_a_scheduler_silent_for_two_minutes_is_critical_while_tasks_are_due(self):
        self.add("hourly", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        self.add_worker("2026-11-21 11:05:00")
        self.check(at="2026-11-21 11:07:00", expect=0)
        lines = self.check(at="2026-11-21 11:07:01", expect=2)
        self.assertEqual(lines[1], "CRITICAL scheduler: no scheduler (taskd run) has heartbeated for 2m1s "
                                   "(last 2026-11-21T11:05:00Z) while 1 task is due")
        self.ok("pause", "hourly")
        self.check(at="2026-11-21 11:07:01", expect=0)  # nothing due

    def test_a_worker_that_only_runs_queued_runs_is_no_scheduler(self):
        self.add("hourly", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        self.add_worker("2026-11-21 11:05:00", role="work")
        self.check(at="2026-11-21 11:05:30", expect=2)

    def test_a_run_later_than_late_is_a_warning(self):
        self.add("sync", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        self.ok("tick", faketime="2026-11-21 11:00:00")  # queued for 11:00
        lines = self.check("--late", "5m", at="2026-11-21 11:06:00", expect=1)
        self.assertEqual(lines, [
            "TASKD WARNING - 1 task late: sync | ok=0 warning=1 critical=0 paused=0",
            "WARNING sync: its run due 2026-11-21T11:00:00Z has waited 6m to start (--late 5m)"])
        self.run_once(faketime="2026-11-21 11:07:00")
        self.check("--late", "7m", at="2026-11-21 11:30:00", expect=0)
        lines = self.check("--late", "5m", at="2026-11-21 11:30:00", expect=1)
        self.assertEqual(lines[1], "WARNING sync: its last run started 7m late (due 2026-11-21T11:00:00Z; --late 5m)")
        self.check(at="2026-11-21 11:30:00", expect=0)  # without --late, lateness is not judged

    def test_critical_outranks_warning_and_each_problem_has_its_line(self):
        self.add("sync", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        self.add("report", "--manual", "--alert-after", "30m", "--", "true", faketime=T0)
        self.ok("tick", faketime="2026-11-21 11:00:00")
        lines = self.check("--late", "30s", at="2026-11-21 11:01:00", expect=2)
        self.assertEqual(lines, [
            "TASKD CRITICAL - 1 task critical: report; 1 task late: sync | ok=0 warning=1 critical=1 paused=0",
            "CRITICAL report: never succeeded in the 1h1m since it was added 2026-11-21T10:00:00Z (alert after 30m)",
            "WARNING sync: its run due 2026-11-21T11:00:00Z has waited 1m to start (--late 30s)"])

    def test_check_writes_nothing(self):
        self.add("report", "--every", "1h", "--phase", "0", "--alert-after", "1h", "--", "true", faketime=T0)
        before = self.sql("SELECT * FROM tasks")
        self.check("--late", "1m", at="2026-11-21 13:00:00", expect=2)
        self.assertEqual(self.sql("SELECT * FROM tasks"), before)
        self.assertEqual(self.sql("SELECT count(*) FROM runs"), [(0,)])


class JsonTest(CheckTestCase):
    def test_json_gives_the_same_facts_structured_with_the_same_exit_code(self):
        self.add("report", "--manual", "--alert-after", "2h", "--", "true", faketime=T0)
        self.add("hourly", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        self.add_worker("2026-11-21 11:00:00")
        out = self.check_json("--late", "90s", at="2026-11-21 12:30:00", expect=2)
        self.assertEqual(out["status"], "CRITICAL")
        self.assertEqual(out["exit_code"], 2)
        self.assertRegex(out["summary"], SUMMARY)
        self.assertEqual(out["counts"], {"ok": 1, "warning": 0, "critical": 1, "paused": 0})
        self.assertEqual(out["late"], 90)
        self.assertEqual(out["scheduler"], {"heartbeat_at": "2026-11-21T11:00:00Z", "due_tasks": 1})
        self.assertEqual(out["problems"], [
            {"status": "CRITICAL", "kind": "no_scheduler", "task": None,
             "detail": "no scheduler (taskd run) has heartbeated for 1h30m (last 2026-11-21T11:00:00Z) "
                       "while 1 task is due",
             "since": "2026-11-21T11:00:00Z", "for": 5400, "limit": 120},
            {"status": "CRITICAL", "kind": "no_success", "task": "report",
             "detail": "never succeeded in the 2h30m since it was added 2026-11-21T10:00:00Z (alert after 2h)",
             "since": "2026-11-21T10:00:00Z", "for": 9000, "limit": 7200}])

    def test_json_of_a_healthy_database(self):
        self.add("hourly", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        out = self.check_json(at="2026-11-21 10:10:00", expect=0)
        self.assertEqual((out["status"], out["exit_code"], out["problems"], out["late"]), ("OK", 0, [], None))
        self.assertEqual(out["scheduler"], {"heartbeat_at": None, "due_tasks": 0})


class UnknownTest(CheckTestCase):
    def test_bad_arguments_are_unknown_not_critical(self):
        self.add("hourly", "--every", "1h", "--", "true")
        for args, fragment in [(["--late", "soon"], "--late"), (["--bogus"], "--bogus"), (["extra"], "extra")]:
            with self.subTest(args=args):
                code, out, err = self.run_taskd("check", *args)
                self.assertEqual(code, 3, (out, err))
                self.assertTrue(out.startswith("TASKD UNKNOWN - "), out)
                self.assertIn(fragment, out.splitlines()[0])
                self.assertOneErrorLine(err, fragment)

    def test_a_missing_database_is_unknown(self):
        missing = os.path.join(self.tmp, "nowhere", "taskd.db")
        code, out, err = self.run_taskd("check", db=missing)
        self.assertEqual((code, out), (3, "TASKD UNKNOWN - no database at %s\n" % missing), err)
        self.assertFalse(os.path.exists(os.path.dirname(missing)))
        code, out, _ = self.run_taskd("--json", "check", db=missing)
        self.assertEqual(code, 3)
        self.assertEqual(parse_json(self, out)["status"], "UNKNOWN")

    @unittest.skipIf(STORE == "postgresql", "file modes are a SQLite file's")
    def test_a_database_it_may_not_read_is_unknown_naming_the_file_and_the_permission(self):
        # The database in a directory of the user check runs as; the test's
        # own directory lets that user through.
        os.chmod(self.tmp, 0o711)
        theirs = os.path.join(self.tmp, "theirs")
        db = os.path.join(theirs, "taskd.db")
        self.add("hourly", "--every", "1h", "--", "true", db=db)
        uid = ANOTHER_UID if os.geteuid() == 0 else os.geteuid()
        for path in [theirs] + [os.path.join(theirs, name) for name in os.listdir(theirs)]:
            os.chown(path, uid, uid)

        os.chmod(db, 0)
        code, out, err = self.run_taskd("check", db=db, preexec_fn=as_bound_user)
        self.assertEqual((code, out), (3, "TASKD UNKNOWN - database %s is unavailable: unable to open database file: "
                                          "Permission denied\n" % db), err)
        os.chmod(db, 0o600)
        os.chmod(theirs, 0)
        code, out, err = self.run_taskd("check", db=db, preexec_fn=as_bound_user)
        self.assertEqual((code, out), (3, "TASKD UNKNOWN - cannot look at the database %s: Permission denied\n" % db),
                         err)
        os.chmod(theirs, 0o700)
        self.assertEqual(self.run_taskd("check", db=db, preexec_fn=as_bound_user)[:2],
                         (0, "TASKD OK - 1 task ok | ok=1 warning=0 critical=0 paused=0\n"))

    def test_other_commands_keep_their_usage_exit_code(self):
        code, _, _ = self.run_taskd("status", "--bogus")
        self.assertEqual(code, 2)


class MetricsTest(CheckTestCase):
    def samples(self, at):
        samples = {}
        for line in self.ok("metrics", faketime=at).splitlines():
            if not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                samples[name] = float(value)
        return samples

    def test_metrics_give_each_tasks_last_success_and_the_newest_scheduler_heartbeat(self):
        self.add("report", "--manual", "--", "true", faketime=T0)
        self.add("never", "--manual", "--", "true", faketime=T0)
        self.ok("trigger", "report", faketime=T0)
        self.run_once(faketime=T0)
        samples = self.samples("2026-11-21 10:30:00")
        self.assertEqual(samples['taskd_task_last_success_timestamp_seconds{task="report"}'], unix_ms(T0) / 1000)
        self.assertNotIn('taskd_task_last_success_timestamp_seconds{task="never"}', samples)
        # run-once is a scheduler too: its tick is the newest heartbeat
        self.assertEqual(samples["taskd_scheduler_heartbeat_timestamp_seconds"], unix_ms(T0) / 1000)
        self.add_worker("2026-11-21 10:20:00")
        self.add_worker("2026-11-21 10:25:00")
        self.add_worker("2026-11-21 10:29:00", role="work")
        samples = self.samples("2026-11-21 10:30:00")
        self.assertEqual(samples["taskd_scheduler_heartbeat_timestamp_seconds"],
                         unix_ms("2026-11-21 10:25:00") / 1000)


class AlertAfterFieldTest(CheckTestCase):
    def test_alert_after_goes_through_show_export_apply_and_edit(self):
        self.add("report", "--every", "1h", "--alert-after", "90m", "--", "true")
        self.assertEqual(self.task("report")["alert_after"], 5400)
        self.assertRegex(self.ok("show", "report"), r"\nalert after +1h30m\n")
        exported = self.ok("export")
        self.assertIn('\nalert_after = "1h30m"\n', exported)
        path = os.path.join(self.tmp, "tasks.toml")
        with open(path, "w") as f:
            f.write(exported)
        self.ok("rm", "report")
        self.ok("apply", path)
        self.assertEqual(self.task("report")["alert_after"], 5400)
        self.assertEqual(self.ok("export"), exported)

        with open(path, "w") as f:
            f.write(exported.replace('alert_after = "1h30m"', 'alert_after = "2h"'))
        self.assertIn("~ report: alert_after\n", self.ok("apply", path))
        self.assertEqual(self.task("report")["alert_after"], 7200)
        with open(path, "w") as f:
            f.write(exported.replace('alert_after = "1h30m"', 'alert_after = "none"'))
        self.ok("apply", path)
        self.assertIsNone(self.task("report")["alert_after"])

        self.ok("edit", "report", "--alert-after", "1d")
        self.assertEqual(self.task("report")["alert_after"], 86400)
        self.ok("edit", "report", "--alert-after", "")
        self.assertIsNone(self.task("report")["alert_after"])
        self.assertNotIn("alert", self.ok("show", "report"))
        self.assertNotIn("alert_after", self.ok("export"))

    def test_a_bad_alert_after_is_refused_and_nothing_is_written(self):
        self.add("kept", "--every", "1h", "--", "true")
        before = self.tasks()
        for value in ["0", "0s", "soon"]:
            with self.subTest(value=value):
                code, out, err = self.run_taskd("edit", "kept", "--alert-after", value)
                self.assertEqual((code, out), (65, ""), err)
                self.assertOneErrorLine(err, "--alert-after")
                self.assertEqual(self.tasks(), before)


class SelectionTest(CheckTestCase):
    def test_names_group_and_owner_choose_the_tasks_judged(self):
        self.add("web", "--manual", "--group", "front", "--owner", "alice", "--", "true", faketime=T0)
        self.add("db", "--manual", "--group", "back", "--", "true", faketime=T0)
        self.add("broken", "--manual", "--alert-after", "1h", "--group", "back", "--", "true", faketime=T0)
        at = "2026-11-21 11:30:00"
        self.assertEqual(self.check(at=at, expect=2)[0],
                         "TASKD CRITICAL - 1 task critical: broken | ok=2 warning=0 critical=1 paused=0")
        self.assertEqual(self.check("web", "db", at=at, expect=0),
                         ["TASKD OK - 2 tasks ok | ok=2 warning=0 critical=0 paused=0"])
        self.assertEqual(self.check("--group", "back", at=at, expect=2)[0],
                         "TASKD CRITICAL - 1 task critical: broken | ok=1 warning=0 critical=1 paused=0")
        self.assertEqual(self.check("--owner", "alice", at=at, expect=0),
                         ["TASKD OK - 1 task ok | ok=1 warning=0 critical=0 paused=0"])
        self.assertEqual(self.check("broken", "--group", "front", at=at, expect=0)[0],
                         "TASKD OK - 0 tasks ok | ok=0 warning=0 critical=0 paused=0")
        # A name that is not there must not pass.
        code, out, err = self.run_taskd("check", "web", "nosuch", faketime=at)
        self.assertEqual((code, out), (3, 'TASKD UNKNOWN - no task named "nosuch" (see taskd list)\n'), err)

    def test_a_final_failure_is_a_warning_and_a_failure_with_a_retry_to_come_is_not(self):
        # A retry 30m after the failure with a 40m timebox would end past the
        # next slot: it waits for that slot, and the failure is final.
        self.add("final", "--every", "1h", "--phase", "0", "--retry", "30m", "--timeout", "40m", "--", "false",
                 faketime=T0)
        # A retry a minute after the failure: still to come.
        self.add("retrying", "--every", "1h", "--phase", "0", "--retry", "1m", "--timeout", "10s", "--", "false",
                 faketime=T0)
        # A chain's step that fails, started by the final failure of its upstream.
        self.add("then", "--after", "final:finished", "--retry", "none", "--", "false", faketime=T0)
        self.run_once(faketime="2026-11-21 11:00:00")
        self.assertIs(self.task("then")["disabled_until_update"], False)  # a chained run walks no ladder
        lines = self.check(at="2026-11-21 11:00:30", expect=1)
        self.assertEqual(lines, [
            "TASKD WARNING - 2 tasks failed: final, then | ok=1 warning=2 critical=0 paused=0",
            "WARNING final: its latest run ended failed 30s ago (2026-11-21T11:00:00Z), with no retry to come",
            "WARNING then: its latest run ended failed 30s ago (2026-11-21T11:00:00Z), with no retry to come"])
        problem = self.check_json(at="2026-11-21 11:00:30", expect=1)["problems"][0]
        self.assertEqual((problem["kind"], problem["task"], problem["since"]), ("failed", "final", "2026-11-21T11:00:00Z"))
        # Queued, the retry is still to come.
        self.ok("tick", faketime="2026-11-21 11:01:00")
        self.assertEqual([r["status"] for r in self.history("retrying")], ["queued", "failed"])
        self.check("retrying", at="2026-11-21 11:01:30", expect=0)
        # A run started by hand is left out: whoever started it saw it fail.
        self.ok("trigger", "final", faketime="2026-11-21 11:02:00")
        self.run_once(faketime="2026-11-21 11:02:00")
        self.assertEqual(self.history("final")[0]["trigger"], "manual")
        self.check("final", at="2026-11-21 11:03:00", expect=0)


if __name__ == "__main__":
    unittest.main()
