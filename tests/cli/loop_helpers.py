"""Helpers for the tests of the long-running commands (run, work): start one
with its event log in a file, wait for a log line or a condition with a
deadline, stop it with a signal."""

import collections
import os
import re
import signal
import time

from taskd_test import TaskdTestCase, parse_time

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


SKIPPED_SPAN = re.compile(r"^(?:slot (\S+)|\d+ slots from (\S+) to (\S+)) skipped")


def slots_of(row, interval):
    """The slots a schedule row stands for: its own, or the span a SKIPPED row counts."""
    if row["status"] != "skipped":
        return [parse_time(row["scheduled_at"])]
    match = SKIPPED_SPAN.match(row["reason"])
    if not match:
        raise AssertionError("a SKIPPED row without its span: %r" % row["reason"])
    first = parse_time(match.group(1) or match.group(2))
    last = parse_time(match.group(1) or match.group(3))
    return [first + interval * i for i in range(int((last - first) / interval) + 1)]


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

    def assertEverySlotHasOneRow(self, runs, interval, tasks):
        """Per task (of `tasks` tasks, all every `interval`), the slots of its
        rows (a SKIPPED row counts its span) follow each other without a
        repeat or a gap, up to its next run: every slot that came due has
        exactly one row. A retry row counts as the slot it serves: with a
        timeout at least as long as the interval, every retry runs past the
        next planned slot and is replaced by it (see POLICY in taskd(1))."""
        by_task = collections.defaultdict(list)
        for row in runs:
            if row["trigger"] != "manual":
                by_task[row["task"]].extend(slots_of(row, interval))
        self.assertEqual(len(by_task), tasks)
        next_runs = {task["name"]: task["next_run_at"] for task in self.tasks()}
        for task, slots in by_task.items():
            counted = collections.Counter(slots)
            self.assertEqual([s for s, n in counted.items() if n > 1], [], "%s: a slot has two rows" % task)
            first, last = min(slots), max(slots)
            expected = [first + interval * i for i in range(int((last - first) / interval) + 1)]
            self.assertEqual(sorted(slots), expected, "%s: a slot that came due has no row" % task)
            self.assertGreater(parse_time(next_runs[task]), last, task)

    def stop(self, proc, sig=signal.SIGTERM, seconds=30):
        """Sends sig and waits for the exit; returns (code, stdout, stderr)."""
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=seconds)
        return proc.returncode, out, err
