"""Upgrades (taskd(1), migrate): the commands that only read never migrate
a database of an older schema, they refuse it naming both versions and
`taskd migrate`; `taskd migrate` names each step, backs a SQLite file up
beside itself first (SQLite's backup API) and brings it forward; the
commands that write still migrate on their own. The old database is built
from the schema files' own sections, as an older taskd left it."""

import hashlib
import os
import re
import sqlite3
import stat
import unittest

from taskd_test import STORE, TaskdTestCase, prometheus_samples

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCHEMA_FILE = "schema.sql" if STORE == "sqlite" else "schema-postgresql.sql"
APPLICATION_ID = 0x7461736B


def schema_sections():
    """{version: the section's SQL} of this store's schema file."""
    with open(os.path.join(ROOT, SCHEMA_FILE), encoding="utf-8") as schema:
        text = schema.read()
    parts = re.split(r"^-- migrate: (\d+)\n", text, flags=re.MULTILINE)
    return {int(version): sql for version, sql in zip(parts[1::2], parts[2::2])}


SECTIONS = schema_sections()
CURRENT = max(SECTIONS)
OLDER = CURRENT - 1


def summary(version):
    """The comment line a section opens with: what `migrate` says of it."""
    first = SECTIONS[version].lstrip("\n").split("\n", 1)[0]
    return first[len("-- "):]


# The commands that only read, each as a command line.
READING_COMMANDS = [["list"], ["show", "a"], ["history"], ["logs", "a"], ["status"], ["metrics"],
                    ["preview", "a"], ["forecast"], ["explain", "a"], ["export"], ["check"]]


class MigrateTest(TaskdTestCase):
    def setUp(self):
        super().setUp()
        self.make_database_at(OLDER)

    def make_database_at(self, version):
        """The database as a taskd of schema `version` left it: empty tables."""
        sql = "".join(SECTIONS[v] for v in sorted(SECTIONS) if v <= version)
        if STORE == "sqlite":
            os.close(os.open(self.db, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            db = sqlite3.connect(self.db)
            # taskd's own SQL function, which the step to 23 calls.
            db.create_function("taskd_sha256", 1, lambda text: hashlib.sha256(text.encode()).hexdigest())
            db.execute("PRAGMA journal_mode = WAL")
            db.executescript(sql)
            db.execute(f"PRAGMA user_version = {version}")
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.commit()
            db.close()
        else:
            import pg_server
            pg_server.server().psql_uri(
                self.db, f"CREATE SCHEMA taskd; SET search_path = taskd; {sql}; "
                         f"UPDATE meta SET value = '{version}' WHERE key = 'schema_version'")

    def fingerprint(self):
        """What would change if anything wrote to the database."""
        if STORE == "sqlite":
            with open(self.db, "rb") as file:
                digest = hashlib.sha256(file.read()).hexdigest()
            return digest, sorted(name for name in os.listdir(self.tmp)
                                  if name.startswith("taskd.db") and ".bak-" not in name)
        return self.sql("SELECT value FROM meta WHERE key = 'schema_version'"), self.sql(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'taskd' "
            "ORDER BY 1, 2")

    def schema_version(self):
        if STORE == "sqlite":
            return self.sql("PRAGMA user_version")[0][0]
        return int(self.sql("SELECT value FROM meta WHERE key = 'schema_version'")[0][0])

    def test_the_commands_that_only_read_refuse_an_older_schema_and_change_nothing(self):
        before = self.fingerprint()
        for command in READING_COMMANDS:
            with self.subTest(command=command):
                code, out, err = self.run_taskd(*command)
                # check says UNKNOWN (3), as monitoring plugins do; the others: unavailable
                self.assertEqual(code, 3 if command == ["check"] else 69, err)
                self.assertIn(f"schema version {OLDER}, older than this taskd's ({CURRENT})", err)
                self.assertIn("taskd migrate", err)
                self.assertIn(self.db if STORE == "sqlite" else "postgresql://", err)
                self.assertEqual(self.fingerprint(), before)
        self.assertEqual(self.schema_version(), OLDER)

    def test_migrate_dry_run_names_each_step_and_writes_nothing(self):
        before = self.fingerprint()
        out = self.ok("migrate", "--dry-run")
        self.assertIn(f"has schema version {OLDER}; this taskd's is {CURRENT}", out)
        self.assertRegex(out, rf"\n +{CURRENT}  {re.escape(summary(CURRENT))}\n")
        if STORE == "sqlite":
            self.assertIn(f"would back it up to {self.db}.bak-{OLDER}", out)
        self.assertEqual(self.fingerprint(), before)
        self.assertFalse(os.path.exists(f"{self.db}.bak-{OLDER}"))

    def test_migrate_brings_the_schema_forward_and_then_has_nothing_to_do(self):
        out = self.ok("migrate")
        self.assertRegex(out, rf"applied:\n +{CURRENT}  {re.escape(summary(CURRENT))}\n")
        self.assertEqual(self.schema_version(), CURRENT)
        self.assertIn("NAME", self.ok("list"))
        self.assertEqual(self.ok("migrate"),
                         f"{self.db} has schema version {CURRENT}, this taskd's: nothing to migrate\n")

    @unittest.skipUnless(STORE == "sqlite", "a server keeps its own backups")
    def test_migrate_backs_the_file_up_beside_it_first(self):
        before = self.fingerprint()[0]
        out = self.ok("migrate")
        backup = f"{self.db}.bak-{OLDER}"
        self.assertIn(f"backed it up to {backup}\n", out)
        self.assertEqual(stat.S_IMODE(os.stat(backup).st_mode), 0o600)
        copy = sqlite3.connect(backup)
        try:
            self.assertEqual(copy.execute("PRAGMA user_version").fetchone()[0], OLDER)
            self.assertEqual(copy.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        finally:
            copy.close()
        self.assertNotEqual(self.fingerprint()[0], before)

    @unittest.skipUnless(STORE == "sqlite", "a server keeps its own backups")
    def test_migrate_never_writes_over_a_file_or_through_a_link_where_the_backup_goes(self):
        backup = f"{self.db}.bak-{OLDER}"
        elsewhere = os.path.join(self.tmp, "elsewhere")
        before = self.fingerprint()
        for make in (lambda: open(backup, "w").close(), lambda: os.symlink(elsewhere, backup)):
            make()
            for dry_run in ([], ["--dry-run"]):
                with self.subTest(dry_run=dry_run, link=os.path.islink(backup)):
                    code, out, err = self.run_taskd("migrate", *dry_run)
                    self.assertEqual((code, out), (69, ""))
                    self.assertOneErrorLine(err, backup, "already exists")
                    self.assertEqual(self.fingerprint(), before)
                    self.assertFalse(os.path.exists(elsewhere))
                    self.assertTrue(os.path.islink(backup) or os.path.getsize(backup) == 0)
            os.unlink(backup)

    def test_the_commands_that_write_still_migrate(self):
        self.ok("add", "a", "--every", "1h", "--", "true")
        self.assertEqual(self.schema_version(), CURRENT)
        self.assertEqual([task["name"] for task in self.tasks()], ["a"])


class CalendarDaysMigrationTest(TaskdTestCase):
    """The step that moved tasks' calendar days out of the task rows."""
    make_database_at = MigrateTest.make_database_at
    STEP = next(version for version, sql in SECTIONS.items() if "CREATE TABLE calendar_day_sets" in sql)

    def setUp(self):
        super().setUp()
        self.make_database_at(self.STEP - 1)

    def test_the_days_in_the_task_rows_move_to_their_own_table(self):
        days = {"a": "skip 2026-12-25", "b": "skip 2026-12-25", "c": "only 2026-12-24,2026-12-31"}
        self.sql("INSERT INTO calendars (name, dates, days, updated_at) VALUES ('x', '2026-12-25', 1, 0)")
        for name, text in days.items():
            kind = "skip_calendar" if text.startswith("skip") else "only_calendar"
            self.sql(f"INSERT INTO tasks (name, command, schedule_kind, schedule_spec, tz, {kind}, calendar_days, "
                     "created_at, updated_at) VALUES (?, '[\"true\"]', 'cron', '0 9 * * *', 'UTC', 'x', ?, 0, 0)",
                     (name, text))
        self.ok("migrate")
        digest = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in days.items()}
        self.assertEqual(self.sql("SELECT name, calendar_days_digest FROM tasks ORDER BY name"), sorted(digest.items()))
        self.assertEqual(self.sql("SELECT digest, days FROM calendar_day_sets ORDER BY days"),
                         [(digest["c"], days["c"]), (digest["a"], days["a"])])
        preview = self.ok("preview", "a", "--count", "2", "--utc", faketime="2026-12-24 12:00:00").split()
        self.assertEqual(preview[0], "2026-12-25T09:00:00Z")
        self.assertIn("(skipped:", " ".join(preview[:4]))
        self.assertEqual(self.ok("preview", "c", "--count", "2", "--utc", faketime="2026-12-20 12:00:00").split(),
                         ["2026-12-24T09:00:00Z", "2026-12-31T09:00:00Z"])


class TaskRunStatsMigrationTest(TaskdTestCase):
    """The step that gave each task its counters: made from the history kept."""
    make_database_at = MigrateTest.make_database_at
    STEP = next(version for version, sql in SECTIONS.items() if "CREATE TABLE task_run_stats" in sql)

    def setUp(self):
        super().setUp()
        self.make_database_at(self.STEP - 1)

    def test_each_task_s_counters_start_from_its_history(self):
        self.sql("INSERT INTO tasks (name, command, schedule_kind, schedule_spec, tz, created_at, updated_at) "
                 "VALUES ('a', '[\"true\"]', 'cron', '0 * * * *', 'UTC', 0, 0)")
        # (status, trigger, slot, start, end): 0.05 s and 2 s late, a retry that ended last, one queued.
        for run in [("succeeded", "schedule", 3600_000, 3600_050, 3601_050),
                    ("failed", "schedule", 7200_000, 7202_000, 7205_000),
                    ("succeeded", "retry", 7260_000, 7260_000, 7262_500), ("queued", "schedule", 10800_000, 0, 0)]:
            self.sql("INSERT INTO runs (task_id, status, trigger, scheduled_at, enqueued_at, not_before, started_at, "
                     "finished_at) SELECT id, ?, ?, ?, 0, 0, nullif(?, 0), nullif(?, 0) FROM tasks", run)
        self.ok("migrate")
        samples = prometheus_samples(self, self.ok("metrics"))
        self.assertEqual(samples['taskd_task_runs_total{task="a",status="succeeded"}'], 2)
        self.assertEqual(samples['taskd_task_runs_total{task="a",status="failed"}'], 1)
        self.assertEqual(samples['taskd_task_start_lateness_seconds_bucket{task="a",le="0.1"}'], 1)
        self.assertEqual(samples['taskd_task_start_lateness_seconds_bucket{task="a",le="5"}'], 2)
        self.assertEqual(samples['taskd_task_start_lateness_seconds_count{task="a"}'], 2)
        self.assertAlmostEqual(samples['taskd_task_start_lateness_seconds_sum{task="a"}'], 2.05)
        self.assertEqual(samples['taskd_task_last_duration_seconds{task="a"}'], 2.5)


class MigrateMissingDatabaseTest(TaskdTestCase):
    @unittest.skipUnless(STORE == "sqlite", "a server's database is there or unreachable")
    def test_migrate_of_no_file_creates_none(self):
        code, out, err = self.run_taskd("migrate")
        self.assertEqual((code, out), (69, ""))
        self.assertOneErrorLine(err, f"no database at {self.db}")
        self.assertFalse(os.path.exists(self.db))


if __name__ == "__main__":
    unittest.main()
