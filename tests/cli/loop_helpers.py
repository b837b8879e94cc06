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


def slots_of(status, trigger, scheduled_ms, reason, interval_ms, phase_ms):
    """The slots (Unix ms) a row stands for: its own; the span a SKIPPED row
    counts; none for a retry off the plan's grid. A retry that would run past
    the next planned slot is replaced by it (see POLICY in taskd(1)) and
    serves that slot."""
    if status == "skipped":
        match = SKIPPED_SPAN.match(reason)
        if not match:
            raise AssertionError("a SKIPPED row without its span: %r" % reason)
        first = round(parse_time(match.group(1) or match.group(2)).timestamp() * 1000)
        last = round(parse_time(match.group(1) or match.group(3)).timestamp() * 1000)
        return list(range(first, last + 1, interval_ms))
    if trigger == "retry" and (scheduled_ms - phase_ms) % interval_ms:
        return []
    return [scheduled_ms]


def next_slot_half_a_day_away():
    """A --phase for an `--every 1d` task: its next slot half a day from now.
    One drawn from the task's name can come due while a test runs, or come
    within a retry's timebox, which then gives way to it (no retry)."""
    return "%ds" % ((int(time.time()) + 43200) % 86400)


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
    def start(self, command, *args, log_name="taskd.log", faketime=None, db=True, server_clock=False):
        """Starts `taskd COMMAND ARGS --log-file LOG --log-level debug`; waits for loop.started.
        A SIGTERM ends its runs at once (--drain 0) unless ARGS give a --drain:
        the tests that stop it are about what comes after."""
        if "--drain" not in args:
            args += ("--drain", "0")
        log = os.path.join(self.tmp, log_name)
        proc = self.popen_taskd(command, "--log-file", log, "--log-level", "debug", *args, faketime=faketime, db=db,
                                server_clock=server_clock)
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

    def events_before(self, log, event, later_event):
        """The `event` lines logged before the first `later_event` line."""
        fields = [parse_logfmt(l) for l in self.log_lines(log)]
        names = [f.get("event") for f in fields]
        end = names.index(later_event) if later_event in names else len(fields)
        return [f for f in fields[:end] if f.get("event") == event]

    def assertEverySlotHasOneRow(self, interval, tasks):
        """Per task (of `tasks` tasks, all every `interval` seconds), the slots of its rows follow each other without
        a repeat or a gap, up to its next run: every slot that came due has
        exactly one row. Read from the database, whose times have
        milliseconds."""
        interval_ms = interval * 1000
        by_task = collections.defaultdict(list)
        rows_of_slot = collections.defaultdict(list)
        rows = self.sql("SELECT t.name, r.status, r.trigger, r.scheduled_at, r.reason FROM runs r "
                        "JOIN tasks t ON t.id = r.task_id WHERE r.trigger <> 'manual'")
        next_runs = dict(self.sql("SELECT name, next_run_at FROM tasks"))
        phases_ms = {name: round(phase * 1000) for name, phase in self.sql("SELECT name, phase FROM tasks")}
        for task, status, trigger, scheduled_ms, reason in rows:
            for slot in slots_of(status, trigger, scheduled_ms, reason, interval_ms, phases_ms[task]):
                by_task[task].append(slot)
                rows_of_slot[task, slot].append((status, trigger, scheduled_ms, reason))
        self.assertEqual(len(by_task), tasks)
        for task, slots in by_task.items():
            counted = collections.Counter(slots)
            repeated = [rows_of_slot[task, s] for s, n in counted.items() if n > 1]
            self.assertEqual(repeated, [], "%s: a slot has two rows" % task)
            expected = list(range(min(slots), max(slots) + 1, interval_ms))
            self.assertEqual(sorted(counted), expected, "%s: a slot that came due has no row" % task)
            self.assertGreater(next_runs[task], max(slots), task)

    def stop(self, proc, sig=signal.SIGTERM, seconds=30):
        """Sends sig and waits for the exit; returns (code, stdout, stderr)."""
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=seconds)
        return proc.returncode, out, err
