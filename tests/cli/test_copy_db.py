"""taskd copy-db: tasks, their state and history between a SQLite file and a
PostgreSQL server, in both directions, in one transaction on the destination.
Runs once (it names both stores itself), not in the cli-postgresql pass."""

import os
import sqlite3
import unittest

import pg_server
from taskd_test import TaskdTestCase

STATEFUL = 'cat "$TASKD_STATE"; printf x >> "$TASKD_STATE"'


@unittest.skipUnless(pg_server.binaries(), "SKIPPED: no PostgreSQL server here (Debian's postgresql package)")
class CopyDbTest(TaskdTestCase):
    def setUp(self):
        super().setUp()
        self.server = pg_server.server()
        self.pg = self.server.uri(self.server.new_database())

    def fill(self, db):
        """A store with what a real one holds: group caps, every kind of
        schedule, a paused, a failing and a disabled task, captured output, a
        state file and a queued run."""
        self.ok("group", "set", "g", "--concurrency", "2", db=db)
        self.ok("add", "stateful", "--every", "1h", "--group", "g", "--start-now", "--shell", "--", STATEFUL, db=db)
        self.ok("add", "broken", "--cron", "*/5 * * * *", "--tz", "Europe/Berlin", "--start-now", "--retry", "1h",
                "--", "sh", "-c", "echo broken >&2; exit 3", db=db)
        self.ok("add", "retired", "--every", "1d", "--start-now", "--", "sh", "-c", "exit 78", db=db)
        self.ok("add", "weekly", "--rrule", "FREQ=WEEKLY;BYDAY=MO", "--tz", "America/New_York", "--env", "A=b c",
                "--", "true", db=db)
        self.ok("add", "by-hand", "--manual", "--owner", "ops", "--priority", "5", "--", "echo", "hello", db=db)
        self.ok("pause", "weekly", db=db)
        self.ok("run-once", db=db)
        self.ok("trigger", "by-hand", db=db)

    def views(self, db):
        """What a user sees of a store, times and ids included."""
        return {
            "export": self.ok("export", db=db),
            "history": self.json_of("history", "--limit", "1000", db=db),
            "list": self.json_of("list", db=db),
            "groups": self.json_of("group", "list", db=db),
            # The run counters and the lateness histogram; not the heartbeat, which tells of the
            # schedulers on that store (run-once's ticks): a copy has seen none.
            "metrics": "".join(line for line in self.ok("metrics", db=db).splitlines(keepends=True)
                               if not line.startswith("taskd_scheduler_heartbeat")),
        }

    def copy(self, source, destination, *extra):
        return self.ok("copy-db", "--from", source, "--to", destination, *extra, db=None)

    def test_a_file_copied_to_a_server_and_back_is_the_same_store(self):
        source = os.path.join(self.tmp, "source.db")
        self.fill(source)
        before = dict(self.views(source), logs=self.ok("logs", "broken", db=source))
        self.assertIn("broken", before["logs"])
        self.assertEqual(self.copy(source, self.pg).strip(),
                         f"copied 5 tasks, 4 runs and 1 group cap from {source} to {self.pg}")
        self.assertEqual(dict(self.views(self.pg), logs=self.ok("logs", "broken", db=self.pg)), before)
        back = os.path.join(self.tmp, "back.db")
        self.copy(self.pg, back)
        self.assertEqual(dict(self.views(back), logs=self.ok("logs", "broken", db=back)), before)

    def test_the_copy_runs_on_with_its_state_and_new_run_ids(self):
        source = os.path.join(self.tmp, "source.db")
        self.fill(source)
        last_id = max(run["id"] for run in self.history(db=source))
        self.copy(source, self.pg)
        self.ok("trigger", "stateful", db=self.pg)
        self.ok("run-once", db=self.pg)
        newest = self.history("stateful", db=self.pg)[0]
        self.assertGreater(newest["id"], last_id)
        self.assertEqual(self.ok("logs", "stateful", "--run", str(newest["id"]), db=self.pg).strip(), "x")

    def test_a_history_larger_than_a_socket_buffer_goes_across(self):
        # Six runs of 60 000 bytes of output: more than one batch of rows
        # fits in the socket's buffer, so the server is sent them in parts.
        source = os.path.join(self.tmp, "source.db")
        self.add("loud", "--manual", "--", "sh", "-c", "head -c 60000 /dev/zero | tr '\\0' x", db=source)
        for _ in range(6):
            self.ok("trigger", "loud", db=source)
            self.ok("run-once", db=source)
        self.copy(source, self.pg)
        runs = self.history(db=self.pg)
        self.assertEqual(len(runs), 6)
        for run in runs:
            self.assertEqual(self.ok("logs", "loud", "--run", str(run["id"]), db=self.pg), "x" * 60000)

    def test_a_task_at_boot_without_its_host_is_refused_on_a_server(self):
        source = os.path.join(self.tmp, "source.db")
        self.add("warm", "--cron", "@reboot", "--", "true", db=source)
        before = self.views(self.pg)
        code, out, err = self.run_taskd("copy-db", "--from", source, "--to", self.pg, db=None)
        self.assertEqual((code, out), (65, ""))
        self.assertOneErrorLine(err, "1 task of", "--cron @reboot", "--on-host", "nothing written")
        self.assertEqual(self.views(self.pg), before)
        self.ok("edit", "warm", "--on-host", "box", db=source)
        self.copy(source, self.pg)
        self.assertEqual(self.task("warm", db=self.pg)["on_host"], "box")

    def test_a_destination_with_tasks_is_refused_without_merge(self):
        self.add("there", "--every", "1h", "--", "true", db=self.pg)
        before = self.views(self.pg)
        source = os.path.join(self.tmp, "source.db")
        self.fill(source)
        code, out, err = self.run_taskd("copy-db", "--from", source, "--to", self.pg, db=None)
        self.assertEqual((code, out), (65, ""))
        self.assertOneErrorLine(err, "already holds 1 task", "--merge", "nothing written")
        self.assertEqual(self.views(self.pg), before)

    def test_merge_adds_the_tasks_with_their_runs_renumbered(self):
        self.add("there", "--every", "1h", "--start-now", "--", "true", db=self.pg)
        self.ok("run-once", db=self.pg)
        source = os.path.join(self.tmp, "source.db")
        self.fill(source)
        source_history = self.history(db=source)
        self.copy(self.pg, source, "--merge")  # a server into a file ...
        merged = self.history(db=source)
        self.assertEqual(len(merged), len(source_history) + 1)
        self.assertEqual(merged[0]["task"], "there")
        self.assertEqual(len({run["id"] for run in merged}), len(merged))
        self.assertEqual(sorted(t["name"] for t in self.tasks(db=source)),
                         ["broken", "by-hand", "retired", "stateful", "there", "weekly"])
        other = self.server.uri(self.server.new_database())
        self.copy(source, other)  # ... and the sum into another server
        self.assertEqual(self.views(other), self.views(source))

    def test_merge_into_a_server_never_reuses_a_run_id_and_keeps_a_chains_upstream_run(self):
        # The server's newest runs are gone with their task, but their ids were handed out.
        self.add("gone", "--every", "1h", "--start-now", "--", "true", db=self.pg)
        for _ in range(3):
            self.ok("trigger", "gone", db=self.pg)
            self.ok("run-once", db=self.pg)
        taken = max(run["id"] for run in self.history(db=self.pg))
        self.ok("rm", "gone", db=self.pg)
        source = os.path.join(self.tmp, "source.db")
        self.add("a", "--every", "1h", "--start-now", "--", "true", db=source)
        self.add("b", "--after", "a", "--", "true", db=source)
        self.ok("run-once", db=source)
        self.copy(source, self.pg, "--merge")
        runs = {run["task"]: run for run in self.history(db=self.pg)}
        self.assertGreater(min(run["id"] for run in runs.values()), taken)
        self.assertEqual(runs["b"]["upstream_run_id"], runs["a"]["id"])
        self.ok("trigger", "a", db=self.pg)
        newest = self.history(db=self.pg)[0]
        self.assertGreater(newest["id"], max(run["id"] for run in runs.values()))

    def test_merge_refuses_names_on_both_sides_listing_them_and_writes_nothing(self):
        source = os.path.join(self.tmp, "source.db")
        self.fill(source)
        for name in ("broken", "weekly", "mine"):
            self.add(name, "--every", "1h", "--", "true", db=self.pg)
        before = self.views(self.pg)
        code, out, err = self.run_taskd("copy-db", "--from", source, "--to", self.pg, "--merge", db=None)
        self.assertEqual((code, out), (65, ""))
        self.assertOneErrorLine(err, "2 task names are in both", "broken, weekly", "nothing written")
        self.assertEqual(self.views(self.pg), before)

    def test_merge_refuses_a_group_capped_otherwise(self):
        source = os.path.join(self.tmp, "source.db")
        self.fill(source)
        self.ok("group", "set", "g", "--concurrency", "3", db=self.pg)
        code, out, err = self.run_taskd("copy-db", "--from", source, "--to", self.pg, "--merge", db=None)
        self.assertEqual((code, out), (65, ""))
        self.assertOneErrorLine(err, "1 group has another concurrency cap", ": g;")
        self.assertEqual(self.tasks(db=self.pg), [])

    def test_calendars_go_across_and_merge_refuses_one_with_other_days(self):
        def days(text):
            path = os.path.join(self.tmp, "days.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            return path

        source = os.path.join(self.tmp, "source.db")
        self.ok("calendar", "add", "holidays", "--dates", days("2026-12-25 Christmas Day\n2027-01-01\n"), db=source)
        self.copy(source, self.pg)
        shown = self.json_of("calendar", "show", "holidays", db=source)
        self.assertEqual(self.json_of("calendar", "show", "holidays", db=self.pg), shown)
        self.copy(self.pg, source, "--merge")  # the same days: nothing to refuse
        self.ok("calendar", "add", "holidays", "--replace", "--dates", days("2026-12-26 Boxing Day\n"), db=self.pg)
        code, out, err = self.run_taskd("copy-db", "--from", self.pg, "--to", source, "--merge", db=None)
        self.assertEqual((code, out), (65, ""))
        self.assertOneErrorLine(err, "1 calendar has other days", ": holidays;")
        self.assertEqual(self.json_of("calendar", "show", "holidays", db=source), shown)

    def test_a_source_with_a_running_run_is_refused_and_no_destination_is_made(self):
        source = os.path.join(self.tmp, "source.db")
        self.fill(source)
        with sqlite3.connect(source) as db:  # as a taskd running it leaves the row
            db.execute("UPDATE runs SET status = 'running', started_at = enqueued_at WHERE status = 'queued'")
        destination = os.path.join(self.tmp, "new", "copy.db")
        code, out, err = self.run_taskd("copy-db", "--from", source, "--to", destination, db=None)
        self.assertEqual((code, out), (65, ""))
        self.assertOneErrorLine(err, "has a running run (by-hand)", "tick", "nothing written")
        self.assertFalse(os.path.exists(destination))

    def test_text_that_is_not_utf8_reaches_a_server_with_u_fffd_and_a_warning(self):
        source = os.path.join(self.tmp, "source.db")
        self.fill(source)
        with sqlite3.connect(source) as db:  # as another program may write it
            db.execute("UPDATE tasks SET owner = CAST(X'6f70ff' AS TEXT) WHERE name = 'by-hand'")
            db.execute("UPDATE runs SET reason = CAST(X'657869742033ff' AS TEXT) WHERE id = 1")
        code, out, err = self.run_taskd("copy-db", "--from", source, "--to", self.pg, db=None)
        self.assertEqual(code, 0, err)
        self.assertIn("warning: copy-db: 2 texts held bytes that are not UTF-8", err)
        self.assertEqual(self.json_of("show", "by-hand", db=self.pg)["owner"], "op\ufffd")
        reasons = [run["reason"] for run in self.json_of("history", "--limit", "1000", db=self.pg) if run["id"] == 1]
        self.assertEqual(reasons, ["exit 3\ufffd"])

    def test_a_source_with_a_malformed_task_is_refused_and_nothing_is_written(self):
        source = os.path.join(self.tmp, "source.db")
        self.fill(source)
        with sqlite3.connect(source) as db:  # as sqlite3 by hand leaves it: a server's bigint refuses it
            db.execute("UPDATE tasks SET next_run_at = 'soon' WHERE name = 'weekly'")
        code, out, err = self.run_taskd("copy-db", "--from", source, "--to", self.pg, db=None)
        self.assertEqual((code, out), (65, ""))
        self.assertOneErrorLine(err, "1 malformed task (weekly; weekly: next_run_at: not an integer", "taskd rm",
                                "nothing written")
        self.assertEqual(self.json_of("list", db=self.pg), [])

    def test_a_missing_source_or_the_same_database_twice_is_refused(self):
        missing = os.path.join(self.tmp, "missing.db")
        code, out, err = self.run_taskd("copy-db", "--from", missing, "--to", self.pg, db=None)
        self.assertEqual((code, out), (65, ""))
        self.assertOneErrorLine(err, "no database at " + missing)
        code, out, err = self.run_taskd("copy-db", "--from", self.pg, "--to", self.pg, db=None)
        self.assertEqual((code, out), (2, ""))
        self.assertOneErrorLine(err, "the same database")
        self.assertEqual(self.server.psql_uri(self.pg, "SELECT count(*) FROM pg_namespace WHERE nspname = 'taskd'"),
                         [["0"]])


if __name__ == "__main__":
    unittest.main()
