"""Shared helpers for the black-box tests of the taskd command line.

Every test gets a fresh private temporary directory, a database inside it
(passed with --db), and an environment without any TASKD_* variable whose
HOME and XDG_STATE_HOME point into that directory, so nothing outside it is
read or written.
"""

import datetime
import fcntl
import json
import os
import pty
import random
import re
import signal
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import termios
import time
import unittest

TASKD_BIN = os.environ.get("TASKD_BIN", "")
# "postgresql": every test's database is a database of its own on a
# throwaway PostgreSQL server (pg_server.py) instead of a SQLite file.
STORE = os.environ.get("TASKD_TEST_STORE", "sqlite")
FAKETIME = shutil.which("faketime") or "/usr/bin/faketime"

# The advisory lock a write transaction holds on PostgreSQL ('task').
WRITE_LOCK = 0x7461736B


def bind_literals(query, params):
    """query with each ? replaced by its parameter as a SQL literal."""
    parts = query.split("?")
    if len(parts) != len(params) + 1:
        raise ValueError("%d parameters for %r" % (len(params), query))
    out = parts[0]
    for param, part in zip(params, parts[1:]):
        out += (str(param) if isinstance(param, (int, float)) else "'" + str(param).replace("'", "''") + "'") + part
    return out


def number_or_text(field):
    if field is None:
        return None
    for kind in (int, float):
        try:
            return kind(field)
        except ValueError:
            pass
    return field


# Generous: a command that hangs must fail the test, not the whole suite.
COMMAND_TIMEOUT = 60


def clean_environment(tmp):
    """The process environment minus TASKD_*, with HOME and XDG_STATE_HOME in tmp."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKD_")}
    env["HOME"] = os.path.join(tmp, "home")
    env["XDG_STATE_HOME"] = os.path.join(tmp, "home", ".local", "state")
    env["TMPDIR"] = os.path.join(tmp, "tmp")  # where taskd makes the run files
    # libfaketime is LD_PRELOADed ahead of the ASan runtime; let an
    # -fsanitize=address build run under it (ignored by a plain build).
    opts = env.get("ASAN_OPTIONS", "")
    env["ASAN_OPTIONS"] = (opts + ":" if opts else "") + "verify_asan_link_order=0"
    return env


class TaskdTestCase(unittest.TestCase):
    """Base class: self.tmp (mode 0700), self.db, self.env and run helpers."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        if not TASKD_BIN or not os.access(TASKD_BIN, os.X_OK):
            raise RuntimeError("set TASKD_BIN to the taskd binary (got %r)" % TASKD_BIN)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="taskd-cli-")
        os.chmod(self.tmp, 0o700)
        # TASKD_TEST_KEEP=1 keeps each test's directory (its logs) to read after.
        if os.environ.get("TASKD_TEST_KEEP"):
            print(f"\n{self.id()}: {self.tmp}", file=sys.stderr)
        else:
            self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        os.makedirs(os.path.join(self.tmp, "home"), mode=0o700)
        os.makedirs(os.path.join(self.tmp, "tmp"), mode=0o700)
        self.db = os.path.join(self.tmp, "taskd.db")
        if STORE == "postgresql":
            import pg_server
            if not pg_server.binaries():
                self.skipTest("SKIPPED: no PostgreSQL server here (Debian's postgresql package)")
            server = pg_server.server()
            self.db = server.uri(server.new_database())
        self.env = clean_environment(self.tmp)

    # -- the database itself --------------------------------------------------

    def sql(self, query, params=()):
        """Runs one statement on the test's database (SQLite's ? parameters);
        returns its rows as tuples, numbers as numbers and NULL as None."""
        if STORE == "sqlite":
            db = sqlite3.connect(self.db)
            try:
                with db:
                    return [tuple(row) for row in db.execute(query, params)]
            finally:
                db.close()
        import pg_server
        return [tuple(number_or_text(field) for field in row)
                for row in pg_server.server().psql_uri(self.db, bind_literals(query, params))]

    def hold_write_lock(self):
        """Takes the lock every write transaction takes, in another
        connection, until the returned function is called."""
        if STORE == "sqlite":
            holder = sqlite3.connect(self.db, isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")
            return holder.close
        import pg_server
        return pg_server.server().hold_advisory_lock(self.db, WRITE_LOCK)

    def local_files_dir(self):
        """Where taskd keeps this host's files beside the database."""
        if STORE == "sqlite":
            return os.path.dirname(self.db)
        return os.path.join(self.env["XDG_STATE_HOME"], "taskd")

    # -- running the binary -------------------------------------------------

    # Human output shows times in UTC (--utc) unless a test is about local times.
    utc_times = True

    def command_line(self, args, db=True, faketime=None):
        argv = [TASKD_BIN, "--utc"] if self.utc_times else [TASKD_BIN]
        if db is True:
            argv += ["--db", self.db]
        elif db:
            argv += ["--db", db]
        argv += list(args)
        if faketime:
            argv = faketime_prefix(faketime) + argv
        return argv

    def environment(self, env, faketime, server_clock):
        """The child's environment: self.env unless env is given. Under
        faketime on a server, TASKD_CLOCK=host, so that the clock faketime
        sets is the one taskd keeps, unless server_clock asks for the
        server's."""
        env = self.env if env is None else env
        if faketime and STORE == "postgresql" and not server_clock:
            env = dict(env, TASKD_CLOCK="host")
        return env

    def run_taskd(self, *args, db=True, faketime=None, env=None, timeout=COMMAND_TIMEOUT, server_clock=False,
                  **kwargs):
        """Runs taskd; returns (returncode, stdout, stderr) as text.

        Global options go first in args: run_taskd("--json", "history").
        db=True uses self.db, db=None passes no --db, a string names another file.
        faketime="2026-11-21 14:00:00.547" stops the binary's wall clock at that
        instant; faketime="@2026-11-21 14:00:00 x10" starts it there and lets it run.
        input="text" feeds taskd's stdin through a pipe (default: /dev/null).
        """
        if "input" not in kwargs:
            kwargs["stdin"] = subprocess.DEVNULL
        proc = subprocess.run(
            self.command_line(args, db=db, faketime=faketime),
            env=self.environment(env, faketime, server_clock),
            cwd=self.tmp,
            capture_output=True,
            encoding="utf-8",
            errors="surrogateescape",  # invalid UTF-8 stays visible as lone surrogates
            timeout=timeout,
            **kwargs,
        )
        return proc.returncode, proc.stdout, proc.stderr

    def popen_taskd(self, *args, db=True, faketime=None, env=None, server_clock=False, **kwargs):
        return subprocess.Popen(
            self.command_line(args, db=db, faketime=faketime),
            env=self.environment(env, faketime, server_clock),
            cwd=self.tmp,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            encoding="utf-8",
            errors="surrogateescape",
            **kwargs,
        )

    def ok_on_a_terminal(self, *args, columns=80, env=None, faketime=None):
        """Runs taskd with stdout on a pseudo-terminal `columns` wide and
        asserts exit 0; returns the text it printed (newlines as \\n)."""
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
        proc = subprocess.Popen(self.command_line(args, faketime=faketime), env=env or self.env, cwd=self.tmp,
                                stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other side is closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(master)
        _, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0, err)
        return b"".join(chunks).decode().replace("\r\n", "\n")

    def ok(self, *args, **kwargs):
        """Runs taskd and asserts exit 0; returns stdout."""
        code, out, err = self.run_taskd(*args, **kwargs)
        self.assertEqual(code, 0, "taskd %s failed (%d):\nstdout: %s\nstderr: %s" % (" ".join(args), code, out, err))
        return out

    def json_of(self, *args, **kwargs):
        """Runs `taskd --db DB --json ARGS…`, asserts exit 0, returns the parsed JSON."""
        out = self.ok("--json", *args, **kwargs)
        return parse_json(self, out)

    def add(self, name, *args, **kwargs):
        """taskd add NAME ARGS… (schedule, options, --, command); asserts success."""
        return self.ok("add", name, *args, **kwargs)

    def task(self, name, **kwargs):
        return self.json_of("show", name, **kwargs)

    def tasks(self, *args, **kwargs):
        return self.json_of("list", *args, **kwargs)

    def history(self, *args, **kwargs):
        return self.json_of("history", "--limit", "1000", *args, **kwargs)

    def run_once(self, *args, **kwargs):
        """taskd run-once; asserts exit 0 and returns stdout."""
        return self.ok("run-once", *args, **kwargs)

    def logs(self, name, **kwargs):
        return self.ok("logs", name, **kwargs)

    def wait_for_file(self, path, seconds=20, seen=None):
        """Polls for a file a child writes: a condition, with a deadline.
        `seen`: what the failure should also tell, asked only then."""
        deadline = time.monotonic() + seconds
        while not os.path.exists(path):
            if time.monotonic() >= deadline:
                self.fail("the child never wrote %s%s" % (path, "; " + seen() if seen else ""))
            time.sleep(0.02)

    def unique_sleep(self):
        """A `sleep` argument no other process on the machine uses, and a
        cleanup that kills (by pid) whatever a broken taskd left behind."""
        marker = "3141.%06d" % random.randrange(10**6)
        def kill_leftovers():
            for pid, _ in processes_matching("sleep " + marker):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        self.addCleanup(kill_leftovers)
        return marker

    def kill_watchdog_of(self, taskd_pid):
        """SIGKILL to the watchdog of the taskd process taskd_pid; returns once it is gone. What
        a taskd killed after it leaves running is then for the next taskd's recovery."""
        [watchdog] = watchdogs_of(taskd_pid)
        os.kill(watchdog, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while watchdogs_of(taskd_pid):
            self.assertLess(time.monotonic(), deadline, "the watchdog outlived its SIGKILL")
            time.sleep(0.01)

    # -- assertions ----------------------------------------------------------

    def assertOneErrorLine(self, err, *fragments):
        """stderr is one line (ignoring a usage hint line) that names what is wrong."""
        lines = [line for line in err.splitlines() if line.strip() and not line.startswith("Run 'taskd --help'")]
        self.assertEqual(len(lines), 1, "expected one error line, got: %r" % err)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])
        return lines[0]


def faketime_prefix(spec):
    """The faketime command line that runs a program with its wall clock at spec.

    "2026-11-21 14:00:00.547" stands still at that instant for the whole
    command, however long the binary takes to start (a busy machine, a
    sanitized build): what it reads and writes as "now" is exactly that. Its
    monotonic clock stays real, so timeboxes and waits take their real time.
    "@2026-11-21 14:00:00 x10" (libfaketime's own format) starts the clock there
    and lets it run, here ten times as fast, for the long-running loops.
    """
    remove_stale_faketime_files()
    if spec.startswith("@"):
        return [FAKETIME, "-f", spec]
    return [FAKETIME, "--exclude-monotonic", "-f", spec]


STALE_FAKETIME_FILE = re.compile(r"^(?:sem\.faketime_sem|faketime_shm)_(\d+)$")


def remove_stale_faketime_files(shm="/dev/shm"):
    """Removes the semaphore and shared memory of faketime wrappers that were
    killed (tests SIGKILL loops): a new wrapper that gets a dead one's pid
    finds its semaphore and refuses to start ("sem_open: File exists")."""
    for name in os.listdir(shm):
        match = STALE_FAKETIME_FILE.match(name)
        if not match:
            continue
        try:
            os.kill(int(match.group(1)), 0)
        except ProcessLookupError:
            try:
                os.unlink(os.path.join(shm, name))
            except FileNotFoundError:
                pass  # another test removed it first
        except PermissionError:
            pass  # alive, another user's


def parse_json(test, text):
    try:
        return json.loads(text)
    except ValueError as e:
        test.fail("not JSON (%s): %r" % (e, text))


PROMETHEUS_LABEL = r'[a-z]+="([^"\\]|\\.)*"'
PROMETHEUS_SAMPLE = re.compile(r'^[a-z_]+(\{%s(,%s)*\})? [0-9.e+-]+$' % (PROMETHEUS_LABEL, PROMETHEUS_LABEL))


def prometheus_samples(test, text):
    """{series with its labels: value}; every line a sample, a HELP or a TYPE."""
    samples = {}
    for line in text.splitlines():
        if line.startswith("# "):
            test.assertRegex(line, r"^# (HELP|TYPE) taskd_[a-z_]+ ")
            continue
        test.assertRegex(line, PROMETHEUS_SAMPLE)
        name, value = line.rsplit(" ", 1)
        samples[name] = float(value)
    return samples


RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$")


def parse_time(text):
    """An RFC 3339 UTC string of taskd's JSON as an aware datetime."""
    if not isinstance(text, str) or not RFC3339.match(text):
        raise AssertionError("not an RFC 3339 UTC time: %r" % (text,))
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def cgroup2_mount():
    """Where the cgroup2 hierarchy is mounted, or None."""
    with open("/proc/self/mountinfo") as mounts:
        for line in mounts:
            fields, _, rest = line.partition(" - ")
            if rest.startswith("cgroup2 "):
                return fields.split()[4]
    return None


def watchdogs_of(taskd_pid):
    """The pids of the live watchdog of the taskd process taskd_pid (none or one)."""
    title = "taskd: watchdog of pid %d" % taskd_pid
    return [pid for pid, cmdline in processes_matching(title) if cmdline == title]


def sleeps_of(marker):
    """The live `sleep MARKER` processes themselves, not the shells whose
    command lines name them on the way."""
    return [p for p in processes_matching("sleep " + marker) if p[1] == "sleep " + marker]


def processes_matching(marker):
    """Command lines of the live processes whose command line contains marker."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            with open("/proc/%s/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and marker in cmdline:
            found.append((int(pid), cmdline))
    return found
