"""Helpers for the tests of the long-running commands (run, work): start one
with its event log in a file, wait for a log line or a condition with a
deadline, stop it with a signal."""

import os
import re
import signal
import time

from taskd_test import TaskdTestCase

# A logfmt line: ts, level and event first, then key=value pairs whose value
# is bare or a quoted string with backslash escapes.
LOGFMT = re.compile(r'^ts=\S+ level=(debug|info|warn|error) event=\S+( [a-z_]+=("([^"\\]|\\.)*"|[^ "=]+))*$')
PAIR = re.compile(r'([a-z_]+)=("(?:[^"\\]|\\.)*"|[^ "=]+)')


def parse_logfmt(line):
    fields = {}
    for key, value in PAIR.findall(line):
        if value.startswith('"'):
            value = re.sub(r'\\(.)', lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), value[1:-1])
        fields[key] = value
    return fields


def wait_for(condition, seconds, what):
    """Polls condition() until it is true; fails after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %ss waiting for %s" % (seconds, what))
        time.sleep(0.01)


class LoopTestCase(TaskdTestCase):
    def start(self, command, *args, log_name="taskd.log"):
        """Starts `taskd COMMAND ARGS --log-file LOG --log-level debug`; waits for loop.started."""
        log = os.path.join(self.tmp, log_name)
        proc = self.popen_taskd(command, "--log-file", log, "--log-level", "debug", *args)
        self.addCleanup(self.reap, proc)
        wait_for(lambda: self.events(log, "loop.started") or proc.poll() is not None, 20, "loop.started")
        self.assertIsNone(proc.poll(), proc.stderr.read() if proc.poll() is not None else "")
        return proc, log

    def reap(self, proc):
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)

    def log_lines(self, log):
        try:
            with open(log) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def events(self, log, event):
        return [parse_logfmt(l) for l in self.log_lines(log) if " event=%s " % event in l + " "]

    def stop(self, proc, sig=signal.SIGTERM, seconds=30):
        """Sends sig and waits for the exit; returns (code, stdout, stderr)."""
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=seconds)
        return proc.returncode, out, err
