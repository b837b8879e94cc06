"""taskd explain NAME [--at TIME]: why a slot ran, was skipped, dropped,
retried or late, and when the task runs next (taskd(1), explain). Every
story is made with explicit times (faketime), then asked about."""

import unittest

from taskd_test import TaskdTestCase

ADDED = "2026-11-21 07:30:00"


class ExplainTest(TaskdTestCase):
    def explain(self, name, *args, now):
        return self.json_of("explain", name, *args, faketime=now)

    def facts(self, name, *args, now):
        return self.explain(name, *args, now=now)["facts"]

    def fact(self, facts, kind):
        found = [f for f in facts if f["kind"] == kind]
        self.assertTrue(found, "no %r fact among %r" % (kind, [f["kind"] for f in facts]))
        return found[0]

    def kinds(self, facts):
        return [f["kind"] for f in facts]

    def test_a_failed_slot_its_jitter_lateness_retry_and_the_ladder_yielding_to_the_plan(self):
        self.add("report", "--cron", "0 * * * *", "--tz", "UTC", "--jitter", "30s", "--retry", "1m,50m",
                 "--", "false", faketime=ADDED)
        self.run_once(faketime="2026-11-21 08:00:40")
        self.run_once(faketime="2026-11-21 08:01:45")
        out = self.explain("report", "--at", "2026-11-21T08:00:00Z", now="2026-11-21 08:05:00")
        self.assertEqual(out["slot"], "2026-11-21T08:00:00Z")
        facts = out["facts"]
        self.assertEqual(self.kinds(facts)[:2], ["schedule", "slot"])
        queued = self.fact(facts, "queued")
        self.assertEqual(queued["slot"], "2026-11-21T08:00:00Z")
        jitter = self.fact(facts, "jitter")
        self.assertEqual(self.fact(facts, "late")["late_by"] > 0, True)
        self.assertEqual(jitter["due_at"], "2026-11-21T08:00:%02dZ" % jitter["jitter"])
        self.assertIn("exit code 1", self.fact(facts, "failed")["text"])
        retry = self.fact(facts, "retry")
        self.assertEqual((retry["attempt_no"], retry["rung"], retry["retry_delay"]), (2, 1, 60))
        nxt = self.fact(facts, "next")
        self.assertEqual((nxt["next_kind"], nxt["next_run_at"], nxt["attempt_no"]),
                         ("retry_at_slot", "2026-11-21T09:00:00Z", 3))
        text = self.ok("explain", "report", "--at", "2026-11-21T08:00:00Z", faketime="2026-11-21 08:05:00")
        self.assertIn("rung 1 of the ladder (1m) after attempt 1 ended", text)
        self.assertIn("rung 2 of the ladder (50m)", text)
        self.assertIn("so the retry waits for the plan", text)

    def test_slots_missed_while_no_scheduler_ran_are_told_by_their_skipped_row(self):
        self.add("hourly", "--every", "1h", "--phase", "0", "--", "true", faketime=ADDED)
        self.run_once(faketime="2026-11-21 10:30:00")
        facts = self.facts("hourly", "--at", "2026-11-21T09:10:00Z", now="2026-11-21 10:40:00")
        skipped = self.fact(facts, "skipped")
        self.assertIn("missed while no scheduler ran", skipped["text"])
        self.assertIn("2026-11-21T08:00:00Z to 2026-11-21T09:00:00Z", skipped["reason"])
        self.assertEqual(self.fact(facts, "slot")["slot"], "2026-11-21T09:00:00Z")
        ran = self.facts("hourly", "--at", "2026-11-21T10:00:00Z", now="2026-11-21 10:40:00")
        self.assertEqual(self.fact(ran, "queued")["queued_after"], 1800)
        self.assertFalse(self.fact(ran, "scheduler")["scheduler_running"])
        self.fact(ran, "succeeded")

    def test_a_dropped_run_quotes_the_drop_rule(self):
        marker = self.tmp + "/failed-once"
        self.add("drop", "--every", "1h", "--phase", "0", "--timeout", "1s", "--retry", "58m", "--shell", "--",
                 "test -e %s || { touch %s; exit 1; }" % (marker, marker), faketime=ADDED)
        self.run_once(faketime="2026-11-21 08:00:00")   # fails; the retry comes at 08:58
        self.run_once(faketime="2026-11-21 08:58:30")   # the retry succeeds
        self.run_once(faketime="2026-11-21 09:00:10")   # 09:00 would start 1m40s after it
        facts = self.facts("drop", "--at", "2026-11-21T09:00:00Z", now="2026-11-21 09:05:00")
        dropped = self.fact(facts, "dropped")
        self.assertIn("sooner than interval 1h - tolerance 6m", dropped["text"])
        earlier = self.facts("drop", "--at", "2026-11-21T08:00:00Z", now="2026-11-21 09:05:00")
        retry = self.fact(earlier, "retry")
        self.assertEqual((retry["rung"], retry["retry_delay"]), (1, 3480))
        self.fact(earlier, "succeeded")

    def test_a_future_slot_is_not_due_and_the_next_run_is_the_planned_slot(self):
        self.add("later", "--every", "1h", "--phase", "0", "--", "true", faketime=ADDED)
        out = self.explain("later", "--at", "2026-11-21T11:20:00Z", now="2026-11-21 07:40:00")
        self.assertEqual(out["slot"], "2026-11-21T12:00:00Z")
        self.assertIn("not due yet", self.fact(out["facts"], "not_due")["text"])
        nxt = self.fact(out["facts"], "next")
        self.assertEqual((nxt["next_kind"], nxt["next_run_at"]), ("planned", "2026-11-21T08:00:00Z"))

    def test_a_wall_time_is_read_in_the_tasks_zone(self):
        self.add("berlin", "--cron", "0 3 * * *", "--tz", "Europe/Berlin", "--", "true", faketime=ADDED)
        out = self.explain("berlin", "--at", "2026-11-22T03:00:00", now="2026-11-23 12:00:00")
        self.assertEqual(out["slot"], "2026-11-22T02:00:00Z")
        self.assertEqual(out["at"], "2026-11-22T02:00:00Z")
        self.fact(out["facts"], "pending")
        # A time of day: the latest that has come, today or yesterday.
        self.assertEqual(self.explain("berlin", "--at", "03:00", now="2026-11-23 12:00:00")["slot"],
                         "2026-11-23T02:00:00Z")
        self.assertEqual(self.explain("berlin", "--at", "03:00:00", now="2026-11-23 01:00:00")["slot"],
                         "2026-11-22T02:00:00Z")

    def test_a_slot_before_the_kept_history_or_the_task_says_so(self):
        self.add("kept", "--every", "1h", "--phase", "0", "--keep-runs", "1", "--", "true", faketime=ADDED)
        for hour in ("08", "09", "10"):
            self.run_once(faketime="2026-11-21 %s:00:05" % hour)
        facts = self.facts("kept", "--at", "2026-11-21T08:00:00Z", now="2026-11-21 10:30:00")
        self.assertIn("--keep-runs 1", self.fact(facts, "before_history")["text"])
        facts = self.facts("kept", "--at", "2026-11-21T06:00:00Z", now="2026-11-21 10:30:00")
        self.fact(facts, "before_created")

    def test_paused_and_disabled_tasks_say_what_holds_them(self):
        self.add("held", "--every", "1h", "--phase", "0", "--", "sh", "-c", "exit 78", faketime=ADDED)
        self.ok("pause", "held", faketime=ADDED)
        self.fact(self.facts("held", now="2026-11-21 07:40:00"), "paused")
        self.ok("resume", "held", faketime=ADDED)
        self.run_once(faketime="2026-11-21 08:00:01")
        facts = self.facts("held", now="2026-11-21 08:10:00")
        disabled = self.fact(facts, "disabled")
        self.assertIn("taskd enable held", disabled["text"])
        self.assertNotIn("next", self.kinds(facts))

    def test_a_manual_task_explains_its_latest_run(self):
        self.add("by-hand", "--manual", "--", "true", faketime=ADDED)
        self.ok("trigger", "by-hand", faketime="2026-11-21 08:00:00")
        self.run_once(faketime="2026-11-21 08:00:01")
        out = self.explain("by-hand", now="2026-11-21 09:00:00")
        self.assertIsNone(out["slot"])
        self.assertEqual(self.kinds(out["facts"])[:4], ["schedule", "no_slots", "triggered", "succeeded"])

    def test_the_chain_is_shown_and_a_chained_run_names_its_upstream_run(self):
        self.add("extract", "--every", "1h", "--phase", "0", "--", "true", faketime=ADDED)
        self.add("load", "--after", "extract", "--", "true", faketime=ADDED)
        self.add("cleanup", "--after", "load:finished", "--", "true", faketime=ADDED)
        self.run_once(faketime="2026-11-21 08:00:01")
        [extract_run] = self.history("extract")
        facts = self.facts("load", now="2026-11-21 08:10:00")
        self.assertEqual(self.fact(facts, "upstream")["upstream"], "extract")
        self.assertEqual(self.fact(facts, "followers")["followers"], ["cleanup"])
        chained = self.fact(facts, "chained")
        self.assertEqual(chained["upstream_run_id"], extract_run["id"])
        self.fact(facts, "succeeded")
        self.assertEqual(self.fact(self.facts("extract", now="2026-11-21 08:10:00"), "followers")["followers"],
                         ["load"])

    def test_a_slot_shaped_by_daylight_saving_time_names_the_rule(self):
        self.add("gap", "--cron", "30 2 * * *", "--tz", "Europe/Berlin", "--dst-gap", "skip", "--", "true",
                 faketime="2026-03-28 12:00:00")
        out = self.explain("gap", "--at", "2026-03-30T02:30:00", now="2026-03-28 12:00:00")
        dst = self.fact(out["facts"], "dst")
        self.assertEqual((dst["dst_rule"], dst["dst_rule_by_default"]), ("--dst-gap skip", False))
        self.assertIn("02:30", dst["text"])

    def test_bad_input_names_what_is_wrong(self):
        code, _, err = self.run_taskd("explain", "missing")
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, 'no task named "missing"')
        self.add("there", "--every", "1h", "--", "true")
        code, _, err = self.run_taskd("explain", "there", "--at", "yesterday-ish")
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, "--at", "yesterday-ish")


if __name__ == "__main__":
    unittest.main()
