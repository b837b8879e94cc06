"""taskd backfill: the planned slots of a past window queued as manual runs,
each with its own TASKD_SCHEDULED_AT, the rotation left alone."""

import datetime
import os
import unittest

from croniter import croniter
from dateutil import tz

from taskd_test import TaskdTestCase

NOW = "2026-11-21 14:00:00"
UTC = datetime.timezone.utc


def rfc3339(moment):
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def croniter_slots(expression, zone, start, end):
    """The slots of expression on zone's wall clock in [start, end)."""
    cursor = croniter(expression, start.astimezone(tz.gettz(zone)) - datetime.timedelta(seconds=1))
    slots = []
    while True:
        slot = cursor.get_next(datetime.datetime)
        if slot >= end:
            return slots
        slots.append(rfc3339(slot))


class BackfillTest(TaskdTestCase):
    def setUp(self):
        super().setUp()
        self.out = os.path.join(self.tmp, "slots.txt")

    def add_recorder(self, name, *schedule, fail_until_attempt=0):
        """A task whose every run appends "SLOT ATTEMPT" to self.out; it fails
        while its attempt number is below fail_until_attempt."""
        script = 'echo "$TASKD_SCHEDULED_AT $TASKD_ATTEMPT_NO" >> %s; [ "$TASKD_ATTEMPT_NO" -ge %d ]' % (
            self.out, fail_until_attempt)
        self.add(name, *schedule, "--shell", "--", script, faketime=NOW)

    def recorded(self):
        if not os.path.exists(self.out):
            return []
        with open(self.out) as lines:
            return [line.split() for line in lines.read().splitlines()]

    def backfill(self, *args):
        return self.json_of("backfill", *args, faketime=NOW)

    def rotation(self, name):
        task = self.task(name, faketime=NOW)
        return {key: task[key] for key in ("next_run_at", "attempt_no", "last_run_at", "disabled_until_update")}

    def run_count(self):
        return self.sql("SELECT count(*) FROM runs")[0][0]

    def test_dry_run_lists_the_planned_slots_as_croniter_does(self):
        self.add_recorder("report", "--cron", "17 */3 * * *", "--tz", "Europe/Berlin", "--jitter", "5m")
        before = self.rotation("report")
        start = datetime.datetime(2026, 10, 28, 0, 0, tzinfo=UTC)
        end = datetime.datetime(2026, 11, 13, 0, 0, tzinfo=UTC)
        listed = self.backfill("report", "--from", rfc3339(start), "--until", rfc3339(end), "--dry-run")
        expected = croniter_slots("17 */3 * * *", "Europe/Berlin", start, end)
        self.assertEqual(len(expected), 16 * 8)
        self.assertEqual([slot["scheduled_at"] for slot in listed], expected)
        self.assertEqual({slot["run_id"] for slot in listed}, {None})
        text = self.ok("backfill", "report", "--from", rfc3339(start), "--until", rfc3339(end), "--dry-run",
                       faketime=NOW)
        self.assertEqual(text.splitlines()[:-1], expected)
        self.assertIn("nothing queued", text.splitlines()[-1])
        self.assertEqual(self.run_count(), 0)
        self.assertEqual(self.rotation("report"), before)

    def test_backfill_slots_follow_the_zone_across_the_end_of_summer_time(self):
        # Berlin, 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00Z). croniter
        # puts 03:17 an hour late there; by hand: 00:17 CEST, 03:17 CET, 06:17 CET.
        self.add_recorder("report", "--cron", "17 */3 * * *", "--tz", "Europe/Berlin")
        listed = self.backfill("report", "--from", "2026-10-24T22:00:00Z", "--until", "2026-10-25T06:00:00Z",
                               "--dry-run")
        self.assertEqual([slot["scheduled_at"] for slot in listed],
                         ["2026-10-24T22:17:00Z", "2026-10-25T02:17:00Z", "2026-10-25T05:17:00Z"])

    def test_the_window_includes_from_and_excludes_until(self):
        self.add_recorder("report", "--cron", "0 3 * * *", "--tz", "UTC")
        listed = self.backfill("report", "--from", "2026-11-18T03:00:00Z", "--until", "2026-11-20T03:00:00Z",
                               "--dry-run")
        self.assertEqual([slot["scheduled_at"] for slot in listed], ["2026-11-18T03:00:00Z", "2026-11-19T03:00:00Z"])

    def test_backfilled_runs_run_oldest_first_with_their_slots_and_leave_the_rotation(self):
        self.add_recorder("report", "--cron", "0 3 * * *", "--tz", "UTC")
        before = self.rotation("report")
        queued = self.backfill("report", "--from", "4d", "--until", "2026-11-21T00:00:00Z")
        slots = ["2026-11-18T03:00:00Z", "2026-11-19T03:00:00Z", "2026-11-20T03:00:00Z"]
        self.assertEqual([slot["scheduled_at"] for slot in queued], slots)
        self.assertEqual(self.rotation("report"), before)
        self.run_once(faketime=NOW)
        self.assertEqual(self.recorded(), [[slot, "1"] for slot in slots])
        runs = sorted(self.history("report", faketime=NOW), key=lambda run: run["id"])
        self.assertEqual([(run["id"], run["scheduled_at"], run["trigger"], run["status"]) for run in runs],
                         [(slot["run_id"], slot["scheduled_at"], "manual", "succeeded") for slot in queued])
        after = self.rotation("report")
        self.assertEqual(after["next_run_at"], "2026-11-22T03:00:00Z")
        self.assertEqual({key: after[key] for key in ("next_run_at", "attempt_no", "last_run_at")},
                         {key: before[key] for key in ("next_run_at", "attempt_no", "last_run_at")})

    def test_a_failed_backfilled_run_is_retried_with_its_slot(self):
        self.add_recorder("report", "--cron", "0 3 * * *", "--tz", "UTC", "--retry", "0s,0s", fail_until_attempt=2)
        before = self.rotation("report")
        self.backfill("report", "--from", "2026-11-20T00:00:00Z", "--until", "2026-11-21T00:00:00Z")
        self.run_once(faketime=NOW)
        slot = "2026-11-20T03:00:00Z"
        self.assertEqual(self.recorded(), [[slot, "1"], [slot, "2"]])
        runs = sorted(self.history("report", faketime=NOW), key=lambda run: run["id"])
        self.assertEqual([(run["scheduled_at"], run["trigger"], run["status"], run["attempt_no"]) for run in runs],
                         [(slot, "manual", "failed", 1), (slot, "manual", "succeeded", 2)])
        self.assertEqual(self.rotation("report"), before)

    def test_a_backfilled_slot_gives_up_after_the_ladder_without_disabling_the_task(self):
        self.add_recorder("report", "--cron", "0 3 * * *", "--tz", "UTC", "--retry", "0s", fail_until_attempt=9)
        before = self.rotation("report")
        self.backfill("report", "--from", "2026-11-20T00:00:00Z", "--until", "2026-11-21T00:00:00Z")
        code, _, _ = self.run_taskd("run-once", faketime=NOW)
        self.assertEqual(code, 0)
        self.assertEqual([attempt for _, attempt in self.recorded()], ["1", "2"])
        self.assertEqual(self.rotation("report"), before)
        self.assertEqual(self.sql("SELECT count(*) FROM runs WHERE status = 'queued'")[0][0], 0)

    def test_more_slots_than_max_are_refused_unless_max_allows_them(self):
        self.add_recorder("tick", "--every", "1m", "--phase", "0")
        code, out, err = self.run_taskd("backfill", "tick", "--from", "7d", "--until", "0s", faketime=NOW)
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, "10080 slots", "more than 10000", "--max 10080")
        self.assertEqual(out, "")
        self.assertEqual(self.run_count(), 0)
        code, _, err = self.run_taskd("backfill", "tick", "--from", "7m", "--until", "0s", "--max", "6",
                                      faketime=NOW)
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, "7 slots", "--max 7")
        queued = self.backfill("tick", "--from", "7d", "--until", "0s", "--max", "10080")
        self.assertEqual(len(queued), 10080)
        self.assertEqual(queued[0]["scheduled_at"], "2026-11-14T14:00:00Z")
        self.assertEqual(queued[-1]["scheduled_at"], "2026-11-21T13:59:00Z")
        rows = self.sql("SELECT id, scheduled_at FROM runs WHERE status = 'queued' AND trigger = 'manual' ORDER BY id")
        self.assertEqual([row[0] for row in rows], [slot["run_id"] for slot in queued])
        self.assertEqual([row[1] for row in rows], sorted(row[1] for row in rows))

    def test_a_second_backfill_of_slots_still_queued_is_refused(self):
        self.add_recorder("report", "--cron", "0 3 * * *", "--tz", "UTC")
        window = ("--from", "2026-11-18T00:00:00Z", "--until", "2026-11-21T00:00:00Z")
        self.backfill("report", *window)
        code, _, err = self.run_taskd("backfill", "report", "--from", "2026-11-19T00:00:00Z", "--until",
                                      "2026-11-22T00:00:00Z", "--max", "1", faketime=NOW)
        self.assertEqual(code, 65, err)  # --until in the future
        code, _, err = self.run_taskd("backfill", "report", *window, faketime=NOW)
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, "3 slot(s)", "already have a backfilled run queued", "2026-11-18T03:00:00Z")
        code, _, err = self.run_taskd("backfill", "report", *window, "--dry-run", faketime=NOW)
        self.assertEqual(code, 65, err)
        self.assertEqual(self.run_count(), 3)
        self.run_once(faketime=NOW)
        self.assertEqual(len(self.backfill("report", *window)), 3)  # done: may run again
        self.assertEqual(self.run_count(), 6)

    def test_a_paused_task_is_backfilled_and_a_disabled_one_refused(self):
        self.add_recorder("report", "--cron", "0 3 * * *", "--tz", "UTC")
        self.ok("pause", "report", faketime=NOW)
        text = self.ok("backfill", "report", "--from", "2026-11-20T00:00:00Z", "--until", "2026-11-21T00:00:00Z",
                       faketime=NOW)
        self.assertIn("is paused", text)
        self.run_once(faketime=NOW)
        self.assertEqual(self.recorded(), [["2026-11-20T03:00:00Z", "1"]])
        self.add("broken", "--cron", "0 3 * * *", "--tz", "UTC", "--start-now", "--shell", "--", "exit 78",
                 faketime=NOW)
        self.run_taskd("run-once", faketime=NOW)
        self.assertTrue(self.task("broken")["disabled_until_update"])
        code, _, err = self.run_taskd("backfill", "broken", "--from", "1d", "--until", "0s", faketime=NOW)
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, "broken is disabled", "taskd enable broken")

    def test_bad_input_is_refused_and_writes_nothing(self):
        self.add_recorder("report", "--cron", "0 3 * * *", "--tz", "UTC")
        self.add("by-hand", "--manual", "--", "true", faketime=NOW)
        cases = [
            (("nope", "--from", "1d", "--until", "0s"), 65, ["no task named \"nope\""]),
            (("report", "--from", "2026-11-20T00:00:00Z", "--until", "2026-11-19T00:00:00Z"), 65,
             ["--from 2026-11-20T00:00:00Z is not before --until 2026-11-19T00:00:00Z"]),
            (("report", "--from", "yesterday", "--until", "0s"), 65, ["--from", "\"yesterday\""]),
            (("report", "--from", "1d", "--until", "2026-11-21T25:00:00Z"), 65, ["--until"]),
            (("report", "--from", "1d", "--until", "2026-11-21T15:00:00Z"), 65, ["--until", "in the future"]),
            (("report", "--from", "2026-11-20T04:00:00Z", "--until", "2026-11-21T02:00:00Z"), 65,
             ["no planned slot"]),
            (("by-hand", "--from", "1d", "--until", "0s"), 65, ["by-hand has no planned slots", "--manual"]),
            (("report", "--from", "1d", "--until", "0s", "--max", "0"), 2, ["--max 0", "positive"]),
            (("report", "--from", "1d", "--until", "0s", "--max", "many"), 2, ["--max"]),
            (("report", "--from", "1d"), 2, ["--until"]),
        ]
        for args, exit_code, fragments in cases:
            with self.subTest(args=args):
                code, out, err = self.run_taskd("backfill", *args, faketime=NOW)
                self.assertEqual(code, exit_code, err)
                self.assertEqual(out, "")
                self.assertOneErrorLine(err, *fragments)
        self.assertEqual(self.run_count(), 0)


if __name__ == "__main__":
    unittest.main()
