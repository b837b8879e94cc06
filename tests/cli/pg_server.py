"""A throwaway PostgreSQL server for the tests that run on the server store.

Debian's postgresql package (its binaries in /usr/lib/postgresql/N/bin): a
cluster in a temporary directory, fsync off, listening on a Unix socket only.
initdb refuses to run as root, so as root the cluster belongs to the
'postgres' user the package creates, and its commands run through runuser.
One server per test process, started on first use and stopped at exit; each
test gets a database of its own.
"""

import atexit
import glob
import itertools
import os
import shutil
import subprocess
import tempfile
import time

_server = None
_databases = itertools.count(1)


def binaries():
    """The newest server's bin directory, or None when no server is installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(found[-1]) if found else None


class Server:
    def __init__(self):
        self.bin = binaries()
        if not self.bin:
            raise RuntimeError("no PostgreSQL server: install Debian's postgresql package")
        self.dir = tempfile.mkdtemp(prefix="taskd-pg-")
        self.data = os.path.join(self.dir, "data")
        self.socket_dir = self.dir
        self.as_user = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        os.chmod(self.dir, 0o755)
        self.run("initdb", "-N", "-A", "trust", "-U", "postgres", "--locale=C.UTF-8", "-E", "UTF8", "-D", self.data)
        # fsync off: a crash of this machine may lose what the OS did not
        # write, but a crash of the server (pg_ctl stop -m immediate) loses
        # nothing committed, as the failover tests assert.
        self.options = f"-c listen_addresses='' -c unix_socket_directories='{self.socket_dir}' -c fsync=off " \
                       "-c full_page_writes=off -c max_connections=200"
        self.start()
        atexit.register(self.stop)

    def start(self):
        self.run("pg_ctl", "start", "-w", "-s", "-D", self.data, "-l", os.path.join(self.dir, "log"),
                 "-o", self.options)

    def crash_and_restart(self, down_seconds):
        """Stops the server as a crash does (pg_ctl stop -m immediate: no
        checkpoint, every connection cut), and starts it again after
        down_seconds."""
        self.run("pg_ctl", "stop", "-s", "-m", "immediate", "-D", self.data)
        time.sleep(down_seconds)
        self.start()

    def run(self, program, *args):
        subprocess.run(self.as_user + [os.path.join(self.bin, program), *args], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)

    def uri(self, database="postgres", user="postgres"):
        return f"postgresql:///{database}?host={self.socket_dir}&user={user}"

    def psql(self, sql, database="postgres", user="postgres"):
        """Runs sql on one of the server's databases; see psql_uri."""
        return self.psql_uri(self.uri(database, user), sql)

    def psql_uri(self, uri, sql):
        """Runs sql on the database at uri, with taskd's schema first in the
        search path; returns its rows, each a list of text fields, NULL as None."""
        result = subprocess.run(["psql", "-X", "-q", "-At", "-F", "\t", "-P", "null=\\N", "-v", "ON_ERROR_STOP=1",
                                 "-d", uri, "-c", "SET search_path = taskd, public", "-c", sql],
                                check=True, capture_output=True, text=True, timeout=60)
        return [[None if field == "\\N" else field for field in line.split("\t")]
                for line in result.stdout.splitlines()]

    def hold_advisory_lock(self, uri, key):
        """Holds the transaction-level advisory lock `key` in a psql session
        until the returned function is called."""
        holder = subprocess.Popen(["psql", "-X", "-q", "-At", "-d", uri], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        holder.stdin.write(f"BEGIN; SELECT pg_advisory_xact_lock({key}); SELECT 'held';\n")
        holder.stdin.flush()
        while (line := holder.stdout.readline()) and line.strip() != "held":
            pass
        if not line:
            raise RuntimeError("psql did not take the lock")

        def release():
            if holder.stdin.closed:
                return
            holder.stdin.write("ROLLBACK;\n")
            holder.stdin.close()
            holder.wait(timeout=60)
            holder.stdout.close()
        return release

    def add_password_role(self, role, password):
        """A role that must log in with its password (scram-sha-256), where
        every other role is trusted."""
        self.psql(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        hba = os.path.join(self.data, "pg_hba.conf")
        with open(hba) as f:
            rules = f.read()
        with open(hba, "w") as f:
            f.write(f"local all {role} scram-sha-256\n" + rules)
        self.run("pg_ctl", "reload", "-s", "-D", self.data)
        # reload only signals the server: the rule holds once a login without
        # the password is refused
        deadline = time.monotonic() + 30
        while subprocess.run(["psql", "-X", "-w", "-d", self.uri("postgres", role), "-c", "SELECT 1"],
                             env={k: v for k, v in os.environ.items() if not k.startswith("PG")},
                             capture_output=True, timeout=60).returncode == 0:
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not read the new pg_hba.conf")

    def new_database(self):
        name = f"t{os.getpid()}_{next(_databases)}"
        self.psql(f"CREATE DATABASE {name}")
        return name

    def stop(self):
        try:
            self.run("pg_ctl", "stop", "-s", "-m", "immediate", "-D", self.data)
        except (subprocess.SubprocessError, OSError):
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


def server():
    global _server
    if _server is None:
        _server = Server()
    return _server
