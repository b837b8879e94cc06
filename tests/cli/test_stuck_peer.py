"""A stuck peer on a shared server: a session that holds a task's row lock
in an open transaction, and a host frozen (SIGSTOP) in the middle of one of
its own transactions. The healthy hosts keep their runs and go on running
tasks (a lock held past their lock wait is "busy, look again", not an
outage); the server ends a taskd session left idle in a transaction; the
frozen host's runs are recovered by their leases, as a dead host's are.
Each host's sessions carry its host id as application_name, so that the
test finds them in pg_stat_activity."""

import os
import signal
import subprocess
import time
import unittest

from loop_helpers import LoopTestCase, wait_for, next_slot_half_a_day_away
from taskd_test import STORE
from test_failover import FAILOVER_BOUND, KILL_GRACE, LEASE, alive

# A taskd run's session idle in a transaction is ended after a quarter of
# its lease; pg_stat_activity is sampled, so allow it half a second more.
IDLE_BOUND = LEASE / 4 + 0.5
# How long the stuck peer holds on: three leases.
HOLD = 3 * LEASE


class Psql:
    """A psql session of the test's own, kept open: its statements run one
    after the other in one session, so a transaction it opens stays open
    between them, and a query costs no new process."""

    DONE = "--done--"

    def __init__(self, uri):
        self.proc = subprocess.Popen(["psql", "-X", "-q", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", uri],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def query(self, sql):
        """Runs sql; its rows, each a list of text fields."""
        self.proc.stdin.write(f"{sql};\n\\echo {self.DONE}\n")
        self.proc.stdin.flush()
        rows = []
        while (line := self.proc.stdout.readline()) and line.rstrip("\n") != self.DONE:
            rows.append(line.rstrip("\n").split("\t"))
        if not line:
            raise AssertionError(f"psql ended at: {sql}")
        return rows

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        self.proc.stdout.close()


@unittest.skipUnless(STORE == "postgresql", "several hosts share a server")
class StuckPeerTest(LoopTestCase):
    def setUp(self):
        super().setUp()
        self.starts = os.path.join(self.tmp, "starts")
        self.marker = self.unique_sleep()
        self.monitor = self.psql()

    def psql(self):
        session = Psql(self.db)
        self.addCleanup(session.close)
        return session

    def add_long_task(self, name, host):
        """The task `name`, pinned to `host`, whose child records its start
        (pid, host, attempt) and sleeps until it is ended."""
        self.add(name, "--every", "1d", "--phase", next_slot_half_a_day_away(), "--start-now", "--timeout", "1h",
                 "--kill-grace", f"{KILL_GRACE}s",
                 "--on-host", host, "--shell", "--",
                 f'echo "{name} $$ $TASKD_HOST $TASKD_ATTEMPT_UID" >> {self.starts}; exec sleep {self.marker}')

    def started(self):
        """Each start so far, by task: (pid, host, attempt uid)."""
        try:
            with open(self.starts) as f:
                return {name: (int(pid), host, uid) for name, pid, host, uid in (line.split() for line in f)}
        except FileNotFoundError:
            return {}

    def lines(self, path):
        try:
            with open(path) as f:
                return f.read().split()
        except FileNotFoundError:
            return []

    def host(self, host_id):
        """`taskd run` as host `host_id`, its sessions named after it."""
        return self.start("run", "--host-id", host_id, "--lease", f"{LEASE}s", "--concurrency", "4",
                          log_name=f"{host_id}.log", db=f"{self.db}&application_name={host_id}")

    def sessions_idle_in_a_transaction(self, hosts, longer_than):
        """The hosts whose sessions have sat idle in a transaction (or an
        aborted one) for longer than `longer_than` seconds."""
        names = ", ".join(f"'{h}'" for h in hosts)
        return [row[0] for row in self.monitor.query(
            f"SELECT application_name FROM pg_stat_activity WHERE application_name IN ({names}) "
            f"AND state LIKE 'idle in transaction%' AND clock_timestamp() - state_change > "
            f"interval '{longer_than} s'")]

    def watch_sessions(self, hosts, seconds, also=lambda: None):
        """Samples pg_stat_activity for `seconds`; the hosts seen with a
        session idle in a transaction past IDLE_BOUND. Calls also() at each
        sample."""
        seen = set()
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            seen.update(self.sessions_idle_in_a_transaction(hosts, IDLE_BOUND))
            also()
            time.sleep(0.05)
        return seen

    def assertHealthy(self, host, log):
        """The host logged no outage, and none of its runs ended but as its task did."""
        self.assertEqual(self.events(log, "database.unreachable"), [])
        self.assertEqual(self.sql("SELECT id, status, reason FROM runs WHERE worker_host = ? "
                                  "AND status NOT IN ('running', 'succeeded')", (host,)), [])

    def assertStillRunning(self, task, start):
        pid, host, uid = start
        self.assertTrue(alive(pid), f"the run of {task} on {host} was ended")
        self.assertEqual(self.sql("SELECT r.status, r.worker_host, r.attempt_uid FROM runs r JOIN tasks t "
                                  "ON t.id = r.task_id WHERE t.name = ?", (task,)), [("running", host, uid)])

    def test_a_task_row_held_for_three_leases_costs_the_healthy_hosts_nothing(self):
        for i in range(2):
            self.add_long_task(f"long{i}", f"h{i}")
            self.add(f"often{i}", "--every", "1s", "--", "true")
        # Its run in flight as the hold begins ends during it, longer than its
        # lease and kill grace: its end waits, and so does its lease's end.
        held_starts = os.path.join(self.tmp, "held-starts")
        self.add("held", "--every", "1s", "--kill-grace", "1s", "--shell", "--",
                 f"echo x >> {held_starts}; sleep 0.5")
        hosts = {f"h{i}": self.host(f"h{i}") for i in range(2)}
        starts = wait_for(lambda: len(self.started()) == 2 and self.started(), 20, "both long runs")
        wait_for(lambda: len(self.lines(held_starts)) >= 2, 20, "the held task's first runs")
        before = len(self.lines(held_starts))
        wait_for(lambda: len(self.lines(held_starts)) > before, 10, "a run of the held task")

        holder = self.psql()
        holder.query("BEGIN")
        holder.query("SELECT 1 FROM taskd.tasks WHERE name = 'held' FOR UPDATE")
        held_runs = len(self.lines(held_starts))
        succeeded = ("SELECT count(*) FROM runs r JOIN tasks t ON t.id = r.task_id "
                     "WHERE t.name = ? AND r.status = 'succeeded'")
        often_before = [self.sql(succeeded, (f"often{i}",))[0][0] for i in range(2)]
        stuck = self.watch_sessions(hosts, HOLD)
        often_during = [self.sql(succeeded, (f"often{i}",))[0][0] - often_before[i] for i in range(2)]
        self.assertEqual(len(self.lines(held_starts)), held_runs, "the held task ran while held")
        holder.query("ROLLBACK")

        wait_for(lambda: len(self.lines(held_starts)) > held_runs, 10, "the held task to run again")
        for name, start in starts.items():
            self.assertStillRunning(name, start)
        self.assertEqual(stuck, set())
        # Every second, on one host or the other, while the held task waited.
        self.assertGreaterEqual(sum(often_during), HOLD, often_during)
        for host, (proc, log) in hosts.items():
            self.assertHealthy(host, log)
            self.assertEqual(self.events(log, "run.lost"), [])
            self.assertEqual(self.stop(proc)[0], 0)

    def waiting_transactions(self, host):
        """The starts of the host's transactions seen waiting for a lock."""
        return {row[0] for row in self.monitor.query(
            f"SELECT xact_start FROM pg_stat_activity WHERE application_name = '{host}' AND wait_event_type = 'Lock'")}

    def wait_for_a_second_try(self, host, proc):
        """Until the host waits for the write lock in a second transaction: its first gave up (busy)."""
        seen = set()

        def retried_or_ended():
            if proc.poll() is not None:
                return True
            seen.update(self.waiting_transactions(host))
            return len(seen) >= 2

        wait_for(retried_or_ended, 30, f"{host}'s second try")
        self.assertIsNone(proc.poll(), f"{host} gave up on the held write lock")

    def test_a_host_that_starts_or_stops_while_the_write_lock_is_held_waits_for_it(self):
        release = self.hold_write_lock()
        proc, log = self.host("waiter")
        self.wait_for_a_second_try("waiter", proc)
        release()
        wait_for(lambda: self.sql("SELECT count(*) FROM workers WHERE host = 'waiter'") == [(1,)], 20,
                 "the waiter's row")
        release = self.hold_write_lock()
        proc.send_signal(signal.SIGTERM)
        self.wait_for_a_second_try("waiter", proc)
        release()
        self.assertEqual(proc.wait(timeout=30), 0)
        self.assertEqual(self.sql("SELECT count(*) FROM workers WHERE host = 'waiter'"), [(0,)])

    def test_run_once_waits_for_a_held_task_row_to_write_its_runs_end(self):
        started = os.path.join(self.tmp, "started")
        self.add("held", "--every", "1d", "--start-now", "--shell", "--", f"touch {started}; sleep 1")
        run_once = self.popen_taskd("run-once")
        self.addCleanup(self.reap, run_once)
        wait_for(lambda: os.path.exists(started), 20, "the run to start")
        holder = self.psql()
        holder.query("BEGIN")
        holder.query("SELECT 1 FROM taskd.tasks WHERE name = 'held' FOR UPDATE")
        # Its end comes while the row is held, for longer than run-once's
        # lock wait (1 s): a busy server, not a failure.
        until = time.monotonic() + HOLD
        while time.monotonic() < until and run_once.poll() is None:
            time.sleep(0.05)
        holder.query("ROLLBACK")
        _, err = run_once.communicate(timeout=30)
        self.assertEqual(run_once.returncode, 0, err)
        self.assertEqual(self.sql("SELECT status FROM runs"), [("succeeded",)])

    def freeze_in_a_claim(self, hosts, group_holder):
        """Freezes the host whose claim waits for the capped group's row
        (which `group_holder` holds), then lets the group go: the frozen
        host's session then sits in its transaction with the task's row
        locked. Returns the frozen host's id and when it was frozen."""
        names = ", ".join(f"'{h}'" for h in hosts)
        waiting = (f"SELECT application_name FROM pg_stat_activity WHERE application_name IN ({names}) "
                   f"AND wait_event_type = 'Lock' AND query LIKE '%FROM groups g%FOR UPDATE%'")
        in_transaction = (f"SELECT application_name FROM pg_stat_activity WHERE application_name IN ({names}) "
                          f"AND xact_start IS NOT NULL AND query LIKE '%FROM groups g%FOR UPDATE%'")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            rows = self.monitor.query(waiting)
            if not rows:
                time.sleep(0.002)
                continue
            frozen = rows[0][0]
            proc, _ = hosts[frozen]
            proc.send_signal(signal.SIGSTOP)
            frozen_at = time.time()
            # Its wait may have ended, on a lock wait's bound, just before the
            # signal: then it is let go, and caught at its next claim.
            if [frozen] in self.monitor.query(in_transaction):
                group_holder.query("ROLLBACK")
                return frozen, frozen_at
            proc.send_signal(signal.SIGCONT)
        raise AssertionError("no host was caught waiting for the group's row")

    def test_a_host_frozen_in_a_transaction_is_recovered_by_lease_and_the_other_keeps_its_run(self):
        self.ok("group", "set", "g", "--concurrency", "5")
        for i in range(2):
            self.add_long_task(f"long{i}", f"h{i}")
        hosts = {f"h{i}": self.host(f"h{i}") for i in range(2)}
        starts = wait_for(lambda: len(self.started()) == 2 and self.started(), 20, "both long runs")

        group_holder = self.psql()
        group_holder.query("BEGIN")
        group_holder.query("SELECT 1 FROM taskd.groups WHERE name = 'g' FOR UPDATE")
        grouped = os.path.join(self.tmp, "grouped")
        self.add("grouped", "--every", "1d", "--start-now", "--group", "g", "--shell", "--",
                 f'echo "$TASKD_HOST" >> {grouped}')
        frozen, frozen_at = self.freeze_in_a_claim(hosts, group_holder)
        [healthy] = [h for h in hosts if h != frozen]
        frozen_task, healthy_task = f"long{frozen[1]}", f"long{healthy[1]}"
        first_status = "SELECT r.status FROM runs r JOIN tasks t ON t.id = r.task_id WHERE t.name = ? ORDER BY r.id LIMIT 1"
        lost_at = []

        def note_when_lost():
            if not lost_at and self.sql(first_status, (frozen_task,)) == [("lost",)]:
                lost_at.append(time.time())
        try:
            stuck = self.watch_sessions([frozen], HOLD, note_when_lost)
            self.assertStillRunning(healthy_task, starts[healthy_task])
            self.assertEqual(stuck, set(), "the frozen host's session stayed idle in its transaction")
            self.assertTrue(lost_at, f"the frozen host's run of {frozen_task} was not recovered")
            self.assertLessEqual(lost_at[0] - frozen_at, FAILOVER_BOUND)
            if os.environ.get("TASKD_TEST_VERBOSE"):
                print(f"frozen to lost: {lost_at[0] - frozen_at:.2f} s")
            self.assertEqual(self.lines(grouped), [healthy])  # its run moved to the healthy host
        finally:
            hosts[frozen][0].send_signal(signal.SIGCONT)
        [(reason,)] = self.sql("SELECT r.reason FROM runs r JOIN tasks t ON t.id = r.task_id WHERE t.name = ? "
                               "ORDER BY r.id LIMIT 1", (frozen_task,))
        self.assertIn(f"on {frozen} expired", reason)
        self.assertHealthy(healthy, hosts[healthy][1])
        for proc, _ in hosts.values():
            self.assertEqual(self.stop(proc)[0], 0)


if __name__ == "__main__":
    unittest.main()
