"""The database's secrets: kept from the tasks' environment, warned of and
hidden on the command line, and never printed, in whatever spelling libpq
reads a server's location."""

import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import unittest

from taskd_test import STORE, TASKD_BIN, TaskdTestCase

PYTHON = "/usr/bin/python3"
SECRET = "s3cret-Pa55"
# The variables that would hand a command the database.
WITHHELD = ("TASKD_DB", "PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE", "PGSSLKEY")

# Prints the child's environment as one JSON line, then fails (for --notify).
REPORT_AND_FAIL = r"""
import json, os, sys
print(json.dumps(dict(os.environ)))
sys.exit(1)
"""


def unprivileged_user():
    """The password entry of a user that is not root (Debian's postgresql
    package makes `postgres`; `nobody` is always there), or None."""
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            pass
    return None


def closed_port():
    """A local TCP port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class SecretsTest(TaskdTestCase):
    def database_with_password(self):
        """The test's database, named with a password that taskd needs: on a
        server, a role that logs in with it; a SQLite file needs none."""
        if STORE == "sqlite":
            return self.db
        import pg_server
        server = pg_server.server()
        database = self.db.split("///", 1)[1].split("?", 1)[0]
        server.add_password_role("secretive", SECRET)
        server.psql(f"GRANT CREATE ON DATABASE {database} TO secretive")
        return f"postgresql://secretive:{SECRET}@/{database}?host={server.socket_dir}"

    def test_a_child_gets_neither_the_database_nor_libpq_passwords(self):
        inherited = {name: os.path.join(self.tmp, "home", name.lower()) for name in WITHHELD}
        inherited.update(TASKD_DB=self.database_with_password(), PGPASSWORD=SECRET, PGAPPNAME="kept")
        env = dict(self.env, **inherited)
        notified = os.path.join(self.tmp, "notify-env")
        self.add("reporter", "--every", "1h", "--start-now", "--env", "PGPASSFILE=/given/by/the/task",
                 "--notify", f"env > {notified}.tmp && mv {notified}.tmp {notified}",
                 "--", PYTHON, "-c", REPORT_AND_FAIL, db=None, env=env)
        self.ok("run-once", db=None, env=env)
        seen = json.loads(self.logs("reporter", db=None, env=env).strip().splitlines()[-1])
        self.wait_for_file(notified)
        with open(notified) as f:
            notify_seen = dict(line.split("=", 1) for line in f.read().splitlines() if "=" in line)
        for child, environment in (("run", seen), ("notify", notify_seen)):
            with self.subTest(child=child):
                self.assertEqual([name for name in WITHHELD if name in environment], ["PGPASSFILE"])
                self.assertEqual(environment["PGPASSFILE"], "/given/by/the/task")
                self.assertEqual(environment["PGAPPNAME"], "kept")
                self.assertNotIn(SECRET, json.dumps(environment))

    @unittest.skipUnless(os.geteuid() == 0 and shutil.which("setpriv") and unprivileged_user(),
                         "needs root to run taskd as another user (root reads any process's environment)")
    def test_a_task_cannot_read_its_taskds_environment(self):
        user = unprivileged_user()
        home = tempfile.mkdtemp(prefix="taskd-private-")
        self.addCleanup(shutil.rmtree, home, ignore_errors=True)
        os.chown(home, user.pw_uid, user.pw_gid)
        env = dict(self.env, HOME=home, TMPDIR=home, XDG_STATE_HOME=home, PGPASSWORD=SECRET)
        as_user = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--",
                   TASKD_BIN, "--db", os.path.join(home, "taskd.db")]
        seen, error = os.path.join(home, "seen"), os.path.join(home, "error")
        for args in (["add", "peek", "--every", "1h", "--start-now", "--shell", "--",
                      f"cat /proc/$PPID/environ > {seen} 2> {error}; true"], ["run-once"]):
            proc = subprocess.run(as_user + args, env=env, cwd=home, capture_output=True, text=True, timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(seen, "rb") as f:
            self.assertNotIn(SECRET.encode(), f.read())
        with open(error) as f:
            self.assertIn("Permission denied", f.read())

    def test_a_password_in_db_is_warned_of_and_hidden_from_ps(self):
        # A server that takes the connection and never answers: taskd waits
        # for it, and its command line can be read meanwhile.
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            listener.settimeout(30)
            uri = f"postgresql://taskd:{SECRET}@127.0.0.1:{listener.getsockname()[1]}/taskd?connect_timeout=30"
            proc = self.popen_taskd("status", db=uri)
            try:
                connection, _ = listener.accept()
                connection.close()
                with open(f"/proc/{proc.pid}/cmdline", "rb") as f:
                    cmdline = f.read().decode().split("\0")
            finally:
                proc.kill()
                out, err = proc.communicate(timeout=60)
        self.assertIn("--db", cmdline)
        self.assertNotIn(SECRET, " ".join(cmdline))
        self.assertIn(uri.replace(SECRET, "*" * len(SECRET)), cmdline)
        self.assertNotIn(SECRET, out + err)
        self.assertOneErrorLine(err, "warning", "--db holds a password", "~/.pgpass", "PGPASSFILE", "TASKD_DB")

    def test_a_password_in_copy_db_locations_is_warned_of(self):
        port = closed_port()
        uri = f"host=127.0.0.1 port={port} connect_timeout=2 password={SECRET}"
        code, out, err = self.run_taskd("copy-db", f"--from={uri}", "--to", os.path.join(self.tmp, "copy.db"),
                                        db=None)
        self.assertEqual(code, 69, err)
        self.assertNotIn(SECRET, out + err)
        self.assertIn("taskd: warning: --from holds a password", err)

    def test_an_unreachable_server_never_shows_its_password(self):
        port = closed_port()
        server = f"127.0.0.1:{port}"
        unreachable = [
            f"host=127.0.0.1 port={port} user=taskd dbname=taskd connect_timeout=2 password={SECRET}",
            f"host=127.0.0.1 port={port} connect_timeout=2 password = '{SECRET} with spaces'",
            f"postgresql://{server}/taskd?user=taskd&%70assword={SECRET}&connect_timeout=2",
            f"postgresql://{server}/taskd?sslpassword={SECRET}&connect_timeout=2",
        ]
        refused = [
            f"postgresql://taskd:a/{SECRET}@{server}/taskd?connect_timeout=2",
            f"postgresql://taskd:a@{SECRET}@{server}/taskd?connect_timeout=2",
            f"POSTGRESQL://taskd:{SECRET}@{server}/taskd?connect_timeout=2",
            f"postgresql://{server}/taskd?PASSWORD={SECRET}&connect_timeout=2",
            f"host=127.0.0.1 port={port} PASSWORD={SECRET}",
        ]
        before = sorted(os.listdir(self.tmp))
        for location, expected in [(u, 69) for u in unreachable] + [(r, 2) for r in refused]:
            for args in (("status",), ("--json", "status")):
                with self.subTest(location=location, args=args):
                    code, out, err = self.run_taskd(*args, db=location)
                    self.assertEqual(code, expected, err)
                    self.assertNotIn(SECRET, out + err)
                    self.assertIn("****", err.splitlines()[-1])
                    self.assertEqual(sorted(os.listdir(self.tmp)), before, "no file was made of the location")


if __name__ == "__main__":
    unittest.main()
