"""The PostgreSQL store's own behaviour: how taskd names a server, what it
says when the server cannot serve it, and what it leaves in the database.
The rest of the command line runs on a server too (cli-postgresql.*)."""

import os
import socket
import subprocess
import unittest

import pg_server
from tcp_proxy import TcpProxy
from taskd_test import WRITE_LOCK, TaskdTestCase

MIGRATION_LOCK = WRITE_LOCK + 1  # the advisory lock a migration takes


def closed_port():
    """A local TCP port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@unittest.skipUnless(pg_server.binaries(), "SKIPPED: no PostgreSQL server here (Debian's postgresql package)")
class ServerStoreTest(TaskdTestCase):
    def setUp(self):
        super().setUp()
        self.server = pg_server.server()
        self.database = self.server.new_database()
        self.db = self.server.uri(self.database)

    def assertOneErrorLine(self, err, *parts):
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        for part in parts:
            self.assertIn(part, lines[0])

    def test_the_tables_live_in_the_schema_taskd_with_its_version(self):
        self.ok("add", "a", "--every", "1h", "--", "true")
        tables = {row[0] for row in self.server.psql(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'taskd'", self.database)}
        self.assertTrue({"meta", "tasks", "runs", "groups", "workers"} <= tables, tables)
        [[version]] = self.server.psql("SELECT value FROM taskd.meta WHERE key = 'schema_version'", self.database)
        self.assertGreaterEqual(int(version), 1)
        self.assertEqual(self.server.psql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'",
                                          self.database), [["0"]])

    def test_a_server_that_does_not_answer_is_exit_69_naming_it(self):
        port = closed_port()
        uri = f"postgresql://taskd@127.0.0.1:{port}/taskd?connect_timeout=2"
        code, out, err = self.run_taskd("list", db=uri)
        self.assertEqual((code, out), (69, ""))
        self.assertOneErrorLine(err, f"127.0.0.1:{port}", "cannot connect")

    def test_a_password_is_never_printed(self):
        secret = "s3cret-Pa55"
        port = closed_port()
        for uri in (f"postgresql://taskd:{secret}@127.0.0.1:{port}/taskd",
                    f"postgres://127.0.0.1:{port}/taskd?user=taskd&password={secret}&connect_timeout=2"):
            with self.subTest(uri=uri):
                code, out, err = self.run_taskd("status", db=uri)
                self.assertEqual(code, 69)
                self.assertNotIn(secret, out + err)
                self.assertIn("****", err)

    def test_a_wrong_password_is_exit_69_and_the_right_one_comes_from_libpq(self):
        self.server.add_password_role("guarded", "right-Pa55")
        self.server.psql(f"GRANT CREATE ON DATABASE {self.database} TO guarded")
        uri = self.server.uri(self.database, user="guarded")
        # from the environment: a password in --db is warned of, on a line of its own
        code, out, err = self.run_taskd("list", db=None, env=dict(self.env, TASKD_DB=uri + "&password=wrong-Pa55"))
        self.assertEqual((code, out), (69, ""))
        self.assertOneErrorLine(err, "password authentication failed", "guarded", "****")
        self.assertNotIn("wrong-Pa55", err)
        code, out, err = self.run_taskd("list", db=uri)  # no password anywhere
        self.assertEqual((code, out), (69, ""))
        self.assertOneErrorLine(err, "password")
        self.assertIn("NAME", self.ok("list", db=uri, env=dict(self.env, PGPASSWORD="right-Pa55")))
        with open(os.path.join(self.env["HOME"], ".pgpass"), "w", opener=lambda p, f: os.open(p, f, 0o600)) as pgpass:
            pgpass.write("*:*:*:guarded:right-Pa55\n")
        self.ok("add", "a", "--every", "1h", "--", "true", db=uri)

    def test_status_warns_of_tcp_without_tls_verification_and_not_of_a_unix_socket(self):
        proxy = TcpProxy(os.path.join(self.server.socket_dir, ".s.PGSQL.5432"))
        self.addCleanup(proxy.close)
        tcp = f"postgresql://postgres@127.0.0.1:{proxy.port}/{self.database}?sslmode=disable"
        code, out, err = self.run_taskd("status", db=tcp)
        self.assertEqual(code, 0, err)
        self.assertOneErrorLine(err, "warning", f"127.0.0.1 is TCP without TLS (sslmode=disable)", "verify-full")
        self.assertEqual(len(self.json_of("status", db=tcp)["warnings"]), 1)
        code, out, err = self.run_taskd("status")
        self.assertEqual((code, err), (0, ""))
        self.assertEqual(self.json_of("status")["warnings"], [])

    def test_a_role_that_may_not_create_the_schema_is_refused_and_nothing_is_written(self):
        self.server.psql("CREATE ROLE reader LOGIN", self.database)
        self.server.psql(f"REVOKE CREATE ON DATABASE {self.database} FROM PUBLIC", self.database)
        code, out, err = self.run_taskd("add", "a", "--every", "1h", "--", "true",
                                        db=self.server.uri(self.database, user="reader"))
        self.assertEqual((code, out), (69, ""))
        self.assertOneErrorLine(err, "permission denied")
        self.assertEqual(self.server.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'taskd'",
                                          self.database), [["0"]])

    def test_a_schema_from_a_newer_taskd_is_refused(self):
        self.ok("list")
        self.server.psql("UPDATE taskd.meta SET value = '999' WHERE key = 'schema_version'", self.database)
        code, out, err = self.run_taskd("list")
        self.assertEqual((code, out), (69, ""))
        self.assertOneErrorLine(err, "schema version 999", "newer")

    def test_a_schema_taskd_of_another_program_is_not_taken_over(self):
        self.server.psql("CREATE SCHEMA taskd; CREATE TABLE taskd.invoices (id int)", self.database)
        code, out, err = self.run_taskd("add", "a", "--every", "1h", "--", "true")
        self.assertEqual((code, out), (69, ""))
        self.assertOneErrorLine(err, "not taskd's")

    def test_two_processes_creating_the_schema_at_once_both_succeed(self):
        procs = [self.popen_taskd("add", f"t{i}", "--every", "1h", "--", "true") for i in range(4)]
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(sorted(t["name"] for t in self.json_of("list")), ["t0", "t1", "t2", "t3"])

    def test_a_host_that_finds_another_migrating_waits_for_it_past_the_lock_wait(self):
        # Another host's migration holds the lock for longer than the 5 s a
        # command waits for any other lock; this one waits its turn.
        release = self.server.hold_advisory_lock(self.db, MIGRATION_LOCK)
        try:
            proc = self.popen_taskd("add", "t", "--every", "1h", "--", "true")
            with self.assertRaises(subprocess.TimeoutExpired):
                proc.wait(timeout=6)
        finally:
            release()
        _, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual([t["name"] for t in self.json_of("list")], ["t"])

    def test_the_spawn_ledger_is_kept_in_the_state_directory(self):
        state = os.path.join(self.tmp, "state")
        self.ok("add", "slow", "--every", "1h", "--start-now", "--", "sh", "-c", "ls \"$0\" > \"$1\"",
                state, os.path.join(self.tmp, "seen"))
        self.ok("--state-dir", state, "run-once")
        self.assertEqual(os.stat(state).st_mode & 0o777, 0o700)
        with open(os.path.join(self.tmp, "seen")) as f:
            self.assertRegex(f.read(), r"taskd-spawns\.\d+\.\d+")

    def test_a_state_directory_others_can_write_is_refused_to_run_tasks(self):
        # Whoever can write it can plant a spawn ledger that names any
        # process group for recovery to end.
        state = os.path.join(self.tmp, "state")
        os.mkdir(state)
        os.chmod(state, 0o777)
        marker = os.path.join(self.tmp, "ran")
        self.ok("add", "touch", "--every", "1h", "--start-now", "--", "touch", marker)
        code, out, err = self.run_taskd("--state-dir", state, "run-once")
        self.assertEqual((code, out), (69, ""), err)
        self.assertOneErrorLine(err, state, "0777")
        self.assertFalse(os.path.exists(marker))
        os.chmod(state, 0o700)
        self.ok("--state-dir", state, "run-once")
        self.assertTrue(os.path.exists(marker))


if __name__ == "__main__":
    unittest.main()
