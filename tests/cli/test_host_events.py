"""What the hosts of one server log and spend in normal operation: a
replacement (overlap=replace) is no outage, a lost run is logged once
across the hosts, and a storm of change notices (NOTIFY taskd, which any
role that can connect may send) costs a bounded number of passes. The hosts
are taskd processes of this machine with distinct host ids and short
leases."""

import os
import signal
import subprocess
import time
import unittest

from loop_helpers import LoopTestCase, wait_for, next_slot_half_a_day_away
from taskd_test import STORE, parse_time

LEASE = 2  # seconds: renewed every 0.5 s, fenced after 1 s without a renewal


def cpu_ticks(pid):
    """The CPU time (user + system) of process pid so far, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


@unittest.skipUnless(STORE == "postgresql", "several hosts share a server")
class HostEventsTest(LoopTestCase):
    def setUp(self):
        super().setUp()
        self.starts = os.path.join(self.tmp, "starts")
        self.marker = self.unique_sleep()

    def started(self):
        """Each start so far: (pid, host)."""
        try:
            with open(self.starts) as f:
                return [(int(pid), host) for pid, host in (line.split() for line in f)]
        except FileNotFoundError:
            return []

    def host(self, host_id):
        return self.start("run", "--host-id", host_id, "--lease", f"{LEASE}s", log_name=f"{host_id}.log")

    def test_a_replacement_every_period_is_no_outage_and_no_reconnection(self):
        # Each run lasts longer than the 2 s period, so that every slot
        # replaces the run of the one before.
        self.add("often", "--every", "2s", "--timeout", "1h", "--overlap", "replace", "--shell", "--",
                 f'echo "$$ $TASKD_HOST" >> {self.starts}; exec sleep {self.marker}')
        proc, log = self.host("solo")
        sessions = lambda: self.sql("SELECT pid FROM pg_stat_activity WHERE application_name = 'taskd' "
                                    "AND datname = current_database()")
        wait_for(self.started, 20, "the first run")
        first_sessions = sessions()
        wait_for(lambda: len(self.started()) >= 5, 30, "four replacements")
        replaced = self.sql("SELECT count(*) FROM runs WHERE reason LIKE 'replaced by the run of slot%'")[0][0]
        self.assertGreaterEqual(replaced, 3)
        self.assertEqual(sessions(), first_sessions)  # the same session throughout, never made again
        self.assertEqual(self.events(log, "database.unreachable"), [])
        self.assertEqual(self.events(log, "database.reachable"), [])
        self.assertEqual(self.stop(proc)[0], 0)

    def test_a_lost_run_is_logged_once_across_the_hosts(self):
        self.add("long", "--every", "1d", "--phase", next_slot_half_a_day_away(), "--start-now", "--timeout", "1h",
                 "--kill-grace", "1s", "--shell", "--",
                 f'echo "$$ $TASKD_HOST" >> {self.starts}; exec sleep {self.marker}')
        victim, _ = self.host("victim")
        [(_, host)] = wait_for(self.started, 20, "the run to start")
        self.assertEqual(host, "victim")
        witnesses = [self.host(name) for name in ("w1", "w2")]
        victim.send_signal(signal.SIGKILL)
        victim.communicate(timeout=30)
        wait_for(lambda: self.sql("SELECT status FROM runs ORDER BY id LIMIT 1") == [("lost",)], 20,
                 "the run to be recorded as lost")
        [(lost_ms,)] = self.sql("SELECT finished_at FROM runs ORDER BY id LIMIT 1")
        # Both witnesses looked at the run as its lease ended: let each pass
        # once more after, to log whatever it would of it.
        passed_since = lambda log: any(parse_time(e["ts"]).timestamp() * 1000 > lost_ms
                                       for e in self.events(log, "loop.sleep"))
        wait_for(lambda: all(passed_since(log) for _, log in witnesses), 20, "every witness to pass after the loss")
        lines = [event for _, log in witnesses for event in self.events(log, "run.lost")]
        self.assertEqual(len(lines), 1, lines)
        for proc, _ in witnesses:
            self.assertEqual(self.stop(proc)[0], 0)

    def test_a_storm_of_change_notices_costs_an_idle_loop_a_bounded_number_of_passes(self):
        self.add("far", "--every", "1d", "--", "true")
        proc, log = self.host("idle")
        wait_for(lambda: self.events(log, "loop.sleep"), 20, "the loop to go to sleep")
        passes_before = len(self.events(log, "loop.sleep"))
        ticks_before = cpu_ticks(proc.pid)
        started = time.monotonic()
        # 20 000 notices, each its own transaction, as fast as psql sends them.
        storm = subprocess.run(["psql", "-X", "-q", "-d", self.db], input="NOTIFY taskd;\n" * 20000,
                               capture_output=True, text=True, timeout=120)
        self.assertEqual(storm.returncode, 0, storm.stderr)
        lasted = time.monotonic() - started
        # A change made as the storm ends is still seen at once.
        self.add("now", "--every", "1d", "--start-now", "--", "true")
        wait_for(lambda: self.sql("SELECT status FROM runs") == [("succeeded",)], 10, "the new task's run")
        passes = len(self.events(log, "loop.sleep")) - passes_before
        spent = cpu_ticks(proc.pid) - ticks_before
        # One pass per tenth of a second at the most (two counted generously;
        # one per notice, a few hundred a second, without the rest).
        self.assertLess(passes, 20 * lasted + 10, f"{passes} passes in {lasted:.1f} s")
        self.assertLess(spent, os.sysconf("SC_CLK_TCK") * (lasted / 10 + 0.2), f"{spent} CPU ticks in {lasted:.1f} s")
        self.assertEqual(self.stop(proc)[0], 0)

if __name__ == "__main__":
    unittest.main()
