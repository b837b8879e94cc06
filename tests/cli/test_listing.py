"""Listings as a large table needs them: list filters and paging, history
filters, listings streamed past the layout sample, forecast buckets that
follow the window, metrics from counters, and history retention
(--keep-runs, --keep-days)."""

import json
import os
import unittest

from loop_helpers import LoopTestCase, wait_for

T0 = "2026-11-21 14:00:00"


def names(tasks):
    return [t["name"] for t in tasks]


def prometheus_samples(text):
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


class ListTest(LoopTestCase):
    def add_one_of_each_state(self):
        """a active, b paused, c failing (retrying), d disabled."""
        self.add("a", "--every", "1h", "--", "true", faketime=T0)
        self.add("b", "--every", "1h", "--", "true", faketime=T0)
        self.ok("pause", "b")
        self.add("c", "--every", "1h", "--start-now", "--retry", "1m", "--", "false", faketime=T0)
        self.add("d", "--every", "1h", "--start-now", "--shell", "--", "exit 78", faketime=T0)
        self.run_once(faketime=T0)

    def test_state_selects_each_task_by_the_one_state_it_is_in(self):
        self.add_one_of_each_state()
        for state, expected in [("active", ["a"]), ("paused", ["b"]), ("failing", ["c"]), ("disabled", ["d"])]:
            self.assertEqual(names(self.tasks("--state", state)), expected, state)
        table = self.ok("list", faketime=T0)
        self.assertRegex(table, r"(?m)^c .* failing ")
        self.assertRegex(table, r"(?m)^d .* disabled ")

    def test_name_glob_limit_group_and_owner_combine(self):
        for name, group in [("web-2", "web"), ("web-1", "web"), ("db-1", ""), ("web-10", "web")]:
            self.add(name, "--every", "1h", "--group", group, "--owner", "me" if name == "web-1" else "", "--", "true")
        self.assertEqual(names(self.tasks("--name", "web-*")), ["web-1", "web-10", "web-2"])
        self.assertEqual(names(self.tasks("--name", "*-1")), ["db-1", "web-1"])
        self.assertEqual(names(self.tasks("--name", "web-*", "--limit", "2")), ["web-1", "web-10"])
        self.assertEqual(names(self.tasks("--group", "web", "--owner", "me")), ["web-1"])
        self.assertEqual(self.tasks("--name", "nothing*"), [])
        self.assertEqual(self.ok("list", "--name", "web-1?").splitlines()[1].split()[0], "web-10")

    def test_on_host_lists_the_tasks_pinned_to_that_host(self):
        for name, host in [("a", "h1"), ("b", "h2"), ("c", ""), ("d", "h1")]:
            self.add(name, "--every", "1h", *(["--on-host", host] if host else []), "--", "true")
        self.assertEqual(names(self.tasks("--on-host", "h1")), ["a", "d"])
        self.assertEqual(names(self.tasks("--on-host", "h1", "--name", "d*")), ["d"])
        self.assertEqual(self.tasks("--on-host", "elsewhere"), [])

    def test_bad_state_or_limit_is_a_usage_error(self):
        code, _, err = self.run_taskd("list", "--state", "sleeping")
        self.assertEqual(code, 2)
        self.assertOneErrorLine(err, "--state", "sleeping", "active, paused, disabled, failing")
        code, _, err = self.run_taskd("list", "--limit", "-3")
        self.assertEqual(code, 2)
        self.assertOneErrorLine(err, "--limit")

    def test_listings_stream_past_the_layout_sample_and_round_trip(self):
        count = 1500  # beyond the 1000 rows that set the table's layout
        task_file = os.path.join(self.tmp, "many.toml")
        with open(task_file, "w") as f:
            for i in range(count):
                f.write('[[task]]\nname = "t%04d"\nevery = "%dm"\ncommand = ["/bin/true", "%d"]\n\n' % (i, 1 + i % 7, i))
                if i == 1200:  # a long name after the sample: its own line shifts, no other
                    f.write('[[task]]\nname = "t1200-%s"\nevery = "1h"\ncommand = ["true"]\n\n' % ("x" * 40))
        self.ok("apply", task_file)
        expected = sorted(["t%04d" % i for i in range(count)] + ["t1200-" + "x" * 40])
        lines = self.ok("list").splitlines()
        self.assertEqual(lines[0].split()[0], "NAME")
        self.assertEqual([line.split()[0] for line in lines[1:]], expected)
        schedule_at = lines[0].index("SCHEDULE")
        for line in lines[1:]:
            if not line.startswith("t1200-"):
                self.assertEqual(line[schedule_at:schedule_at + 6], "every ", line)
        listed = self.tasks()
        self.assertEqual(names(listed), expected)
        self.assertEqual(listed[7]["command"], ["/bin/true", "7"])
        exported = self.ok("export")
        copy = os.path.join(self.tmp, "copy.db")
        exported_file = os.path.join(self.tmp, "exported.toml")
        with open(exported_file, "w") as f:
            f.write(exported)
        self.ok("apply", exported_file, db=copy)
        self.assertEqual(self.ok("export", db=copy), exported)

    def test_json_listings_are_one_document_also_when_empty(self):
        self.assertEqual(self.ok("--json", "list"), "[]\n")
        self.assertEqual(self.ok("--json", "history"), "[]\n")
        self.add("a", "--every", "1h", "--", "true")
        out = self.ok("--json", "list")
        self.assertEqual(json.loads(out)[0]["name"], "a")

    def test_json_is_indented_on_a_terminal_and_a_line_per_element_elsewhere(self):
        self.add("a", "--every", "1h", "--", "true")
        self.add("b", "--cron", "0 3 * * *", "--env", "X=ü \"q\"", "--", "sh", "-c", "echo\t1")
        piped = self.ok("--json", "list")
        lines = piped.splitlines()
        self.assertEqual([lines[0], lines[-1]], ["[", "]"])
        self.assertEqual([json.loads(line.rstrip(",")) for line in lines[1:-1]], json.loads(piped))
        self.assertEqual(piped, "[\n" + ",\n".join(json.dumps(task, separators=(",", ":"), ensure_ascii=False)
                                                    for task in json.loads(piped)) + "\n]\n")
        shown = self.ok("--json", "show", "b")
        self.assertEqual(shown, json.dumps(json.loads(shown), separators=(",", ":"), ensure_ascii=False) + "\n")
        on_a_terminal = self.ok_on_a_terminal("--json", "list")
        self.assertEqual(json.loads(on_a_terminal), json.loads(piped))
        self.assertEqual(on_a_terminal, json.dumps(json.loads(piped), indent=2, ensure_ascii=False) + "\n")


class HistoryFilterTest(LoopTestCase):
    def test_status_trigger_and_window_select_runs(self):
        self.add("ok", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        self.add("bad", "--cron", "0 16 * * *", "--tz", "UTC", "--retry", "none", "--", "false", faketime=T0)
        for hour in ("15", "16", "17"):
            self.run_once(faketime="2026-11-21 %s:00:00" % hour)
        self.ok("trigger", "ok", faketime="2026-11-21 17:30:00")
        self.run_once(faketime="2026-11-21 17:30:00")

        def runs(*args):
            return [(r["task"], r["status"], r["scheduled_at"])
                    for r in self.json_of("history", *args, faketime="2026-11-21 18:00:00")]

        self.assertEqual({(t, s) for t, s, _ in runs("--status", "failed")}, {("bad", "failed")})
        self.assertEqual(runs("--trigger", "manual"), [("ok", "succeeded", "2026-11-21T17:30:00Z")])
        window = runs("--since", "2026-11-21T16:00:00Z", "--until", "2026-11-21T17:00:00Z")
        self.assertEqual(sorted(window), [("bad", "failed", "2026-11-21T16:00:00Z"),
                                          ("ok", "succeeded", "2026-11-21T16:00:00Z")])
        # A duration means that long before now (18:00).
        self.assertEqual([s for _, _, s in runs("ok", "--since", "1h")], ["2026-11-21T17:30:00Z", "2026-11-21T17:00:00Z"])
        self.assertEqual(len(runs("--limit", "2")), 2)
        table = self.ok("history", "bad", "--status", "failed", faketime="2026-11-21 18:00:00")
        self.assertEqual(len(table.splitlines()), 1 + 1, table)  # the ladder is empty: disabled after one failure

    def test_status_takes_several_statuses(self):
        self.add("ok", "--every", "1h", "--phase", "0", "--", "true", faketime=T0)
        self.add("bad", "--cron", "0 16 * * *", "--tz", "UTC", "--retry", "none", "--", "false", faketime=T0)
        for hour in ("15", "16"):
            self.run_once(faketime="2026-11-21 %s:00:00" % hour)

        def runs(*args):
            return sorted((r["task"], r["status"], r["scheduled_at"])
                          for r in self.json_of("history", *args, faketime="2026-11-21 18:00:00"))

        self.assertEqual(runs("--status", "failed,lost"), [("bad", "failed", "2026-11-21T16:00:00Z")])
        self.assertEqual(runs("--status", "failed,succeeded"), runs())
        self.assertEqual(len(runs()), 3)
        self.assertEqual(runs("--status", "lost,timed_out"), [])
        table = self.ok("history", "--status", "succeeded,failed", "--limit", "2", faketime="2026-11-21 18:00:00")
        self.assertEqual(len(table.splitlines()), 1 + 2, table)
        code, out, err = self.run_taskd("history", "--status", "failed,exploded")
        self.assertEqual((code, out), (2, ""))
        self.assertOneErrorLine(err, "--status", "\"exploded\"")

    def test_bad_filters_name_what_is_wrong(self):
        code, _, err = self.run_taskd("history", "--status", "exploded")
        self.assertEqual(code, 2)
        self.assertOneErrorLine(err, "--status", "exploded")
        code, _, err = self.run_taskd("history", "--trigger", "cron")
        self.assertEqual(code, 2)
        self.assertOneErrorLine(err, "--trigger", "cron")
        code, _, err = self.run_taskd("history", "--since", "yesterday")
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, "--since", "yesterday", "RFC 3339")


class ForecastBucketTest(LoopTestCase):
    def test_the_bucket_follows_the_window(self):
        self.add("hourly", "--every", "1h", "--", "true", faketime=T0)
        # Buckets start on the clock: 12h buckets at 12:00, two hours before T0, and the
        # chart reaches 30 days past T0 in 61 of them.
        for window, bucket, count in [("1h", 60, 60), ("1d", 900, 96), ("30d", 43200, 61), ("90s", 1, 90)]:
            forecast = self.json_of("forecast", "--window", window, faketime=T0)
            self.assertEqual((forecast["bucket"], len(forecast["buckets"])), (bucket, count), window)
        day = self.json_of("forecast", "--window", "1d", faketime=T0)
        self.assertEqual(sum(b["starts"] for b in day["buckets"]), 24)

    def test_a_window_that_the_bucket_does_not_divide_keeps_its_last_starts(self):
        self.add("m", "--every", "1m", "--phase", "0", "--", "true", faketime=T0)
        forecast = self.json_of("forecast", "--window", "90s", "--bucket", "1m", faketime=T0)
        # 14:01:00 falls in the half bucket after 14:01: it is counted, not out of range.
        self.assertEqual([b["starts"] for b in forecast["buckets"]], [0, 1])

    def test_a_bucket_given_must_fit_the_window(self):
        code, _, err = self.run_taskd("forecast", "--window", "30d", "--bucket", "1m")
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, "--bucket 1m", "--window 30d", "leave --bucket out")


class RetentionTest(LoopTestCase):
    def test_keep_runs_bounds_one_task_and_the_counters_keep_counting(self):
        self.add("few", "--every", "1h", "--keep-runs", "2", "--", "true")
        self.add("many", "--every", "1h", "--", "true")
        self.assertEqual(self.task("few")["keep_runs"], 2)
        self.assertEqual(self.task("many")["keep_runs"], 1000)
        for _ in range(4):
            self.ok("trigger", "few")
            self.ok("trigger", "many")
            self.run_once()
        self.assertEqual(len(self.history("few")), 2)
        self.assertEqual(len(self.history("many")), 4)
        samples = prometheus_samples(self.ok("metrics"))
        self.assertEqual(samples['taskd_runs_total{status="succeeded"}'], 8)
        self.assertEqual(samples["taskd_history_runs"], 6)
        self.ok("edit", "few", "--keep-runs", "5")
        self.assertIn("keep_runs = 5", self.ok("export"))
        self.assertIn("keep runs", self.ok("show", "few"))
        code, _, err = self.run_taskd("edit", "few", "--keep-runs", "0")
        self.assertEqual(code, 65)
        self.assertOneErrorLine(err, "--keep-runs 0")

    def history_slots(self):
        return [row[0] for row in self.sql("SELECT status FROM runs ORDER BY id")]

    def three_runs_three_days_apart(self, name):
        self.add(name, "--every", "1d", "--phase", "0", "--tz", "UTC", "--", "true", faketime="2026-11-01 00:00:00")
        for day in ("02", "05", "08"):
            self.run_once(faketime="2026-11-%s 00:00:01" % day)
        self.assertEqual(len(self.history(name)), 5)  # three runs, two SKIPPED rows for the days between

    def test_keep_days_deletes_what_is_older_in_run_once_and_tick(self):
        self.three_runs_three_days_apart("daily")
        self.run_once("--keep-days", "4", faketime="2026-11-08 00:00:02")
        kept = self.history("daily")
        self.assertEqual([r["scheduled_at"][:10] for r in kept], ["2026-11-08", "2026-11-06", "2026-11-05"])
        self.ok("tick", "--keep-days", "1", faketime="2026-11-08 12:00:00")
        self.assertEqual([r["scheduled_at"][:10] for r in self.history("daily")], ["2026-11-08"])
        samples = prometheus_samples(self.ok("metrics"))
        self.assertEqual(samples['taskd_runs_total{status="succeeded"}'], 3)
        code, _, err = self.run_taskd("tick", "--keep-days", "-1")
        self.assertEqual(code, 2)
        self.assertOneErrorLine(err, "--keep-days")

    def test_the_loop_prunes_while_it_runs(self):
        self.three_runs_three_days_apart("daily")  # in 2026-11, more than two days before now
        self.ok("pause", "daily")  # nothing new comes due while the loop runs on the real clock
        proc, log = self.start("run", "--keep-days", "2")
        wait_for(lambda: not self.history("daily"), 20, "the loop to prune the history")
        code, _, err = self.stop(proc)
        self.assertEqual(code, 0, err)
        self.assertEqual([e["runs"] for e in self.events(log, "history.pruned")], ["5"])


class StatusTest(LoopTestCase):
    def test_status_counts_every_disabled_task_and_shows_the_history_size(self):
        for i in range(23):
            self.add("t%02d" % i, "--every", "1h", "--", "true")
        self.sql("UPDATE tasks SET disabled_until_update = 1, disabled_reason = 'broken'")
        self.ok("trigger", "--force", "t00")
        self.run_once()
        out = self.ok("status")
        self.assertIn("… and 2 more (taskd list --state disabled)", out)  # t00 ran: enabled again
        self.assertRegex(out, r"History: 1 runs, \d+ B of output; database \d")
        status = self.json_of("status")
        self.assertEqual((len(status["disabled"]), status["disabled_count"]), (20, 22))
        self.assertEqual(status["history"]["runs"], 1)


if __name__ == "__main__":
    unittest.main()
