"""Several hosts on one server, and what goes wrong between them: a host
killed (kill -9), frozen (SIGSTOP), or cut off from the server by a network
that stops carrying packets, and the server itself crashing and coming back.
The hosts are taskd processes of this machine with distinct host ids and
short leases; the tasks' children write when they start, and the test sees
when they end, so that no two attempts of a task may overlap unseen."""

import glob
import os
import signal
import time
import unittest

from loop_helpers import LoopTestCase, wait_for, next_slot_half_a_day_away
from taskd_test import STORE, parse_time, processes_matching
from tcp_proxy import TcpProxy

LIBFAKETIME = (glob.glob("/usr/lib/*/faketime/libfaketime.so.1") + [""])[0]

LEASE = 2  # seconds: renewed every 0.5 s, fenced after 1 s without a renewal
KILL_GRACE = 1
MARGIN = 0.5  # renewed_lease_margin
# The longest a run may wait for its retry after its host is gone: the lease
# (with the kill grace it covers) and the margin from the last renewal, and
# a pass of the host that recovers it.
FAILOVER_BOUND = LEASE + KILL_GRACE + MARGIN + 2


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:  # reaped between the two looks
        return False


@unittest.skipUnless(STORE == "postgresql", "several hosts share a server")
class FailoverTest(LoopTestCase):
    def setUp(self):
        super().setUp()
        self.starts = os.path.join(self.tmp, "starts")
        self.marker = self.unique_sleep()

    def add_long_task(self, *options, escapee=""):
        """The task "long", whose child records its start (pid, time, host,
        attempt) and sleeps until it is ended; retried at once, 25 times.
        `escapee`: a command its child starts first, in the background."""
        self.add("long", "--every", "1d", "--phase", next_slot_half_a_day_away(), "--start-now", "--timeout", "1h",
                 "--kill-grace", f"{KILL_GRACE}s",
                 "--retry", ",".join(["0s"] * 25), *options, "--shell", "--",
                 f'{escapee}echo "$$ $(date +%s.%N) $TASKD_HOST $TASKD_ATTEMPT_UID" >> {self.starts}; '
                 f'exec sleep {self.marker}')

    def started(self):
        """Each start so far: (pid, time, host, attempt uid)."""
        try:
            with open(self.starts) as f:
                return [(int(p), float(t), h, u) for p, t, h, u in (line.split() for line in f)]
        except FileNotFoundError:
            return []

    def wait_for_start(self, count, seconds):
        return wait_for(lambda: len(self.started()) >= count and self.started()[count - 1], seconds,
                        f"start number {count}")

    def host(self, host_id, *options):
        return self.start("run", "--host-id", host_id, "--lease", f"{LEASE}s", *options, log_name=f"{host_id}.log")

    def cgroups_allowed(self):
        code, _, _ = self.run_taskd("run-once", "--containment", "cgroup", db=os.path.join(self.tmp, "probe.db"))
        return code == 0

    def wait_gone(self, pid, seconds):
        wait_for(lambda: not alive(pid), seconds, f"pid {pid} to end")
        return time.time()

    def run_rows(self):
        return self.sql("SELECT id, status, worker_host, reason, attempt_uid FROM runs ORDER BY id")

    def test_a_killed_hosts_run_is_lost_and_retried_on_another_host_without_overlap_20_times(self):
        self.add_long_task()
        hosts = {}
        for name in ("h0", "h1"):
            hosts[name] = self.host(name)
        failovers = []
        for trial in range(20):
            pid, started_at, host, _ = self.wait_for_start(trial + 1, FAILOVER_BOUND + 10)
            if trial > 0:
                failovers.append(started_at - killed_at)
                self.assertGreater(started_at, gone_at, "the retry started before the killed host's child ended")
            proc, _ = hosts.pop(host)
            killed_at = time.time()
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=30)
            gone_at = self.wait_gone(pid, 5)  # PR_SET_PDEATHSIG: the child dies with its taskd
            self.assertLess(gone_at - killed_at, 1)
            replacement = f"h{trial + 2}"
            hosts[replacement] = self.host(replacement)
        pid, started_at, host, _ = self.wait_for_start(21, FAILOVER_BOUND + 10)
        failovers.append(started_at - killed_at)
        self.assertLessEqual(max(failovers), FAILOVER_BOUND, failovers)
        if os.environ.get("TASKD_TEST_VERBOSE"):
            print("failover seconds:", sorted(round(f, 2) for f in failovers))
        for proc, _ in hosts.values():
            self.assertEqual(self.stop(proc)[0], 0)
        rows = self.run_rows()
        lost = [r for r in rows if r[1] == "lost"]
        self.assertEqual(len(lost), 20)
        starts = self.started()
        for (run_id, _, worker_host, reason, uid), (_, _, host, start_uid) in zip(lost, starts):
            self.assertEqual((worker_host, uid), (host, start_uid))
            self.assertIn(f"on {host} expired", reason)
            self.assertIn("not renewed", reason)
        self.assertGreaterEqual(len(starts), 21)  # and maybe one more as the hosts stopped
        self.assertEqual(len({s[3] for s in starts}), len(starts))  # each attempt its own token

    def test_a_frozen_hosts_watchdog_ends_its_children_before_its_lease_ends_and_it_writes_nothing_stale(self):
        self.frozen_host_case("subreaper")

    def test_a_frozen_hosts_watchdog_ends_its_cgroups_before_its_lease_ends(self):
        if not self.cgroups_allowed():
            self.skipTest("this machine lets taskd make no cgroup")
        self.frozen_host_case("cgroup")

    def frozen_host_case(self, containment):
        escapee = self.unique_sleep()
        self.add_long_task(escapee=f"(setsid sleep {escapee} &); ")
        frozen, frozen_log = self.host("frozen", "--containment", containment)
        pid, _, host, uid = self.wait_for_start(1, 20)
        self.assertEqual(host, "frozen")
        other, _ = self.host("other")
        frozen.send_signal(signal.SIGSTOP)
        stopped_at = time.time()
        try:
            # A frozen taskd cannot end its child: its watchdog does, a quarter
            # lease after taskd's own SIGKILL would have come.
            gone_at = self.wait_gone(pid, LEASE + KILL_GRACE + 1)
            # The frozen host cannot have renewed it since: the lease it had.
            [(lease_expires_at,)] = self.sql("SELECT lease_expires_at FROM runs WHERE attempt_uid = ?", (uid,))
            self.assertIsNotNone(lease_expires_at, "the run was recovered before its child was ended")
            self.assertLess(gone_at, lease_expires_at / 1000, "the frozen host's child outlived the lease of its run")
            self.assertEqual(processes_matching(f"sleep {escapee}"), [], "what left its process group lives on")
            retry_pid, retried_at, retry_host, retry_uid = self.wait_for_start(2, FAILOVER_BOUND + 10)
            self.assertEqual(retry_host, "other")
            self.assertLess(gone_at, retried_at, "the retry started while the frozen host's child ran")
            # The fault itself: the host stays frozen for twice its lease.
            time.sleep(max(0.0, stopped_at + 2 * LEASE - time.time()))
        finally:
            frozen.send_signal(signal.SIGCONT)
        wait_for(lambda: self.events(frozen_log, "run.stale"), 10, "the frozen host to report its run as stale")
        rows = self.run_rows()
        self.assertEqual(rows[0][1:3], ("lost", "frozen"))
        self.assertIn("on frozen expired", rows[0][3])  # the recovery's words, not the late report's
        self.assertEqual((rows[1][1], rows[1][2], rows[1][4]), ("running", "other", retry_uid))
        self.assertEqual(self.task("long")["attempt_uid"], retry_uid)
        self.assertTrue(alive(retry_pid))
        for proc in (frozen, other):
            self.assertEqual(self.stop(proc)[0], 0)

    def test_a_host_cut_off_from_the_server_fences_its_run_before_its_lease_ends(self):
        import pg_server
        self.add_long_task()
        proxy = TcpProxy(os.path.join(pg_server.server().socket_dir, ".s.PGSQL.5432"))
        self.addCleanup(proxy.close)
        database = self.db.split("/")[3].split("?")[0]
        through_proxy = f"postgresql://postgres@127.0.0.1:{proxy.port}/{database}"
        proc, log = self.start("run", "--host-id", "cut", "--lease", f"{LEASE}s", log_name="cut.log",
                               db=through_proxy)
        pid, _, host, _ = self.wait_for_start(1, 20)
        self.assertEqual(host, "cut")
        other, _ = self.host("other")
        proxy.stop_forwarding()
        gone_at = self.wait_gone(pid, LEASE + KILL_GRACE + 1)
        _, retried_at, retry_host, _ = self.wait_for_start(2, FAILOVER_BOUND + 10)
        self.assertEqual(retry_host, "other")
        self.assertLess(gone_at, retried_at)
        rows = self.run_rows()
        expired = parse_time(rows[0][3].split(" expired at ")[1].split()[0]).timestamp()
        self.assertLess(gone_at, expired, "the child outlived its lease")
        proxy.resume_forwarding()
        wait_for(lambda: self.events(log, "database.reachable"), 20, "the cut-off host to reconnect")
        self.assertEqual(len(self.events(log, "database.unreachable")), 1)  # logged once, not per try
        self.assertEqual(self.stop(proc)[0], 0)
        self.assertEqual(self.stop(other)[0], 0)

    def test_hosts_ride_out_a_server_crash_and_record_the_runs_that_ended_meanwhile(self):
        import pg_server
        for i in range(4):
            self.add(f"short{i}", "--every", "1d", "--start-now", "--shell", "--",
                     f'echo "$$ $(date +%s.%N) $TASKD_HOST x" >> {self.starts}; sleep 2')
        hosts = [self.start("run", "--host-id", f"h{i}", "--lease", "10s", "--concurrency", "2",
                            log_name=f"h{i}.log") for i in range(2)]
        self.wait_for_start(4, 20)
        committed = self.sql("SELECT id, status, worker_host, attempt_uid FROM runs ORDER BY id")
        pg_server.server().crash_and_restart(0.5)
        wait_for(lambda: all(self.events(log, "database.reachable") for _, log in hosts), 30, "every host to reconnect")
        wait_for(lambda: [r[0] for r in self.sql("SELECT status FROM runs")] == ["succeeded"] * 4, 20,
                 "the runs in flight to be recorded")
        after = self.sql("SELECT id, status, worker_host, attempt_uid FROM runs ORDER BY id")
        self.assertEqual([(r[0], r[2], r[3]) for r in after], [(r[0], r[2], r[3]) for r in committed])
        self.add("later", "--every", "1d", "--start-now", "--", "true")
        later_runs = "SELECT r.status FROM runs r JOIN tasks t ON t.id = r.task_id WHERE t.name = 'later'"
        wait_for(lambda: self.sql(later_runs) == [("succeeded",)], 20, "a task added after the crash to run")
        for proc, log in hosts:
            self.assertEqual(len(self.events(log, "database.unreachable")), 1)
            self.assertEqual(self.stop(proc)[0], 0)

    def test_a_host_waits_out_a_server_that_takes_no_writes_and_goes_on_once_it_does(self):
        # As on a standby, or a primary demoted by a failover (SQLSTATE
        # 25006): the host keeps trying, on a new connection each time.
        import pg_server
        self.add("often", "--every", "1s", "--", "true")
        proc, log = self.host("h")
        succeeded = "SELECT count(*) FROM runs WHERE status = 'succeeded'"
        wait_for(lambda: self.sql(succeeded)[0][0] >= 1, 20, "a first run")
        database = self.db.split("/")[3].split("?")[0]
        self.sql(f"ALTER DATABASE {database} SET default_transaction_read_only = on")
        self.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                 "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        wait_for(lambda: self.events(log, "database.unreachable"), 20, "the host to find the server read-only")
        writable = self.db + "&options=-c%20default_transaction_read_only%3Doff"
        pg_server.server().psql_uri(writable, f"ALTER DATABASE {database} RESET default_transaction_read_only")
        before = self.sql(succeeded)[0][0]
        wait_for(lambda: self.sql(succeeded)[0][0] > before, 20, "a run once the server takes writes again")
        self.assertIsNone(proc.poll())
        self.assertEqual(len(self.events(log, "database.unreachable")), 1)
        self.assertEqual(self.stop(proc)[0], 0)

    def add_replaceable_task(self, linger):
        """The task "long" with --overlap replace. Told to end, its child
        lingers `linger` seconds; its last act is to write when it ends, so
        that a start after that is after its end (the test's own look at its
        pid comes a poll later, after a start that followed the end at once).
        Returns the file it writes."""
        ended = os.path.join(self.tmp, "ended")
        self.add("long", "--every", "1d", "--start-now", "--timeout", "1h", "--kill-grace", "5s",
                 "--overlap", "replace", "--shell", "--",
                 f'echo "$$ $(date +%s.%N) $TASKD_HOST $TASKD_ATTEMPT_UID" >> {self.starts}; '
                 f'trap "sleep {linger}; date +%s.%N > {ended}; exit 143" TERM; sleep {self.marker} & wait')
        return ended

    def assert_replaced_after_its_end(self, pid, ended):
        triggered = self.json_of("trigger", "long")
        self.assertTrue(triggered["replaced"])
        self.wait_gone(pid, LEASE + 5)
        _, restarted_at, _, _ = self.wait_for_start(2, 10)
        with open(ended) as f:
            ended_at = float(f.read())
        self.assertGreater(restarted_at, ended_at, "the replacing run started while the replaced one ran")
        rows = self.run_rows()
        self.assertEqual(rows[0][1], "failed")
        self.assertIn("replaced by the run of slot", rows[0][3])

    def test_overlap_replace_of_another_hosts_run_waits_for_its_worker_to_end_it(self):
        ended = self.add_replaceable_task(linger=0)
        proc, _ = self.host("a")
        pid, _, _, _ = self.wait_for_start(1, 20)
        self.assert_replaced_after_its_end(pid, ended)  # triggered by this machine's hostname: not host a
        self.assertEqual(self.stop(proc)[0], 0)

    def test_overlap_replace_of_a_run_of_this_host_also_waits_for_its_worker_to_end_it(self):
        # The child lingers a second after SIGTERM; another host may take
        # the replacing run, but only once the replaced one has ended.
        ended = self.add_replaceable_task(linger=1)
        here, _ = self.start("run", "--lease", f"{LEASE}s", log_name="here.log")  # the hostname, as trigger's
        pid, _, _, _ = self.wait_for_start(1, 20)
        other, _ = self.host("other")
        self.assert_replaced_after_its_end(pid, ended)
        for proc in (here, other):
            self.assertEqual(self.stop(proc)[0], 0)

    def test_a_loop_that_replaces_its_own_run_ends_it_at_once_not_at_its_next_renewal(self):
        # Its own tick asks it to stop: it hears its own announcement, and
        # renews within a second rather than a quarter of its 40 s lease.
        self.add("often", "--every", "2s", "--timeout", "1h", "--overlap", "replace", "--shell", "--",
                 f'echo "$$ $(date +%s.%N) $TASKD_HOST $TASKD_ATTEMPT_UID" >> {self.starts}; exec sleep {self.marker}')
        proc, _ = self.start("run", "--host-id", "solo", "--lease", "40s")
        _, first_at, _, _ = self.wait_for_start(1, 20)
        _, second_at, _, _ = self.wait_for_start(2, 20)
        self.assertLess(second_at - first_at, 2 + 4, "the replaced run waited for a renewal a quarter lease away")
        rows = self.run_rows()
        self.assertEqual(rows[0][1], "failed")
        self.assertIn("replaced by the run of slot", rows[0][3])
        self.assertEqual(self.stop(proc)[0], 0)

    def test_a_host_keeps_its_leases_while_it_queues_a_herd_of_due_tasks(self):
        # Queuing 20 000 due tasks takes longer than half a lease (2 s; a
        # batch of 500 has a second to end between two renewals): between
        # its batches the host renews, or it would fence its own run.
        self.add_long_task()
        proc, log = self.start("run", "--host-id", "busy", "--lease", "4s", "--concurrency", "1")
        pid, _, _, _ = self.wait_for_start(1, 20)
        herd = os.path.join(self.tmp, "herd.toml")
        phase = (int(time.time()) + 302400) % 604800  # their next slots half a week away
        with open(herd, "w") as f:
            for i in range(20000):
                f.write(f'[[task]]\nname = "h{i}"\nevery = "1w"\nphase = "{phase}s"\nstart_now = true\n'
                        f'command = ["true"]\n\n')
        self.ok("apply", herd)
        queued = lambda: self.sql("SELECT count(*) FROM runs WHERE status = 'queued'") == [(20000,)]
        wait_for(lambda: queued() or not alive(pid), 120, "the herd to be queued")
        self.assertTrue(alive(pid), "the host fenced its own run while it queued the herd")
        self.assertEqual(self.run_rows()[0][1], "running")
        self.assertEqual(self.events(log, "run.lost") + self.events(log, "database.unreachable"), [])
        self.assertEqual(self.stop(proc)[0], 0)

    @unittest.skipUnless(LIBFAKETIME, "libfaketime is not where Debian puts it")
    def test_a_step_of_a_hosts_clock_between_two_measures_of_the_servers_changes_nothing(self):
        # Its wall clock jumps 20 s ahead. Until its next heartbeat measures
        # the server's clock again it keeps time by its boot-time clock, so it
        # takes no live run of another host for lost; then it knows the offset.
        self.add_long_task()
        other, _ = self.host("other")
        self.wait_for_start(1, 20)
        step = os.path.join(self.tmp, "step")
        with open(step, "w") as f:
            f.write("+0\n")
        env = dict(self.env, LD_PRELOAD=LIBFAKETIME, FAKETIME_TIMESTAMP_FILE=step, FAKETIME_NO_CACHE="1",
                   FAKETIME_DONT_FAKE_MONOTONIC="1")
        log = os.path.join(self.tmp, "stepper.log")
        stepper = self.popen_taskd("run", "--host-id", "stepper", "--lease", f"{LEASE}s", "--log-file", log,
                                   "--log-level", "debug", env=env)
        self.addCleanup(self.reap, stepper)
        wait_for(lambda: self.events(log, "loop.started"), 20, "the stepping host to start")
        with open(step, "w") as f:
            f.write("+20s\n")
        wait_for(lambda: self.events(log, "clock.offset"), 20, "the stepping host to measure its offset")
        self.assertEqual([r[1:3] for r in self.run_rows()], [("running", "other")])
        self.assertEqual(self.events(log, "run.lost"), [])
        for proc in (stepper, other):
            self.assertEqual(self.stop(proc)[0], 0)

    def test_a_host_whose_clock_is_off_keeps_the_servers_time_and_status_shows_its_offset(self):
        slot = int(time.time()) + 8  # the task's next slot, by the server's clock (this machine's)
        self.add("soon", "--every", "1m", "--phase", f"{slot % 60}s", "--", "true")
        self.assertEqual(parse_time(self.task("soon")["next_run_at"]).timestamp(), slot)
        # its slot has passed, by its own clock
        code, out, err = self.run_taskd("tick", "--host-id", "ahead", faketime="+90s", server_clock=True)
        self.assertEqual(code, 0, err)
        self.assertEqual(self.history(), [])
        proc, log = self.start("run", "--host-id", "ahead", "--lease", f"{LEASE}s", faketime="+90s", server_clock=True)
        [offset] = wait_for(lambda: self.events(log, "clock.offset"), 10, "the offset to be logged")
        self.assertEqual(offset["level"], "warn")
        self.assertAlmostEqual(int(offset["offset_ms"]), 90000, delta=2000)
        [worker] = self.json_of("status")["workers"]
        self.assertAlmostEqual(worker["clock_offset_ms"], 90000, delta=2000)
        code, out, err = self.run_taskd("status")
        self.assertIn("the clock of ahead", err)
        self.assertIn("ahead of the database server's", err)
        wait_for(lambda: [r["status"] for r in self.history()] == ["succeeded"], 30, "the run at its slot")
        [run] = self.history()
        self.assertEqual(parse_time(run["scheduled_at"]).timestamp(), slot)
        late = parse_time(run["started_at"]).timestamp() - slot
        self.assertGreaterEqual(late, 0)
        self.assertLess(late, 1)
        # the faketime wrapper waits for taskd, its child, and passes no signal on
        with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as f:
            [taskd] = map(int, f.read().split())
        os.kill(taskd, signal.SIGTERM)
        proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0)
        # TASKD_CLOCK=host: the host's own clock, by which the next slot has come
        code, out, err = self.run_taskd("tick", "--host-id", "ahead", faketime="+90s",
                                        env=dict(self.env, TASKD_CLOCK="host"), server_clock=True)
        self.assertEqual(code, 0, err)
        self.assertEqual([r["status"] for r in self.history()], ["queued", "succeeded"])
        code, out, err = self.run_taskd("status", env=dict(self.env, TASKD_CLOCK="db"))
        self.assertEqual((code, out), (2, ""))
        self.assertOneErrorLine(err, 'TASKD_CLOCK="db"', '"server"', '"host"')


if __name__ == "__main__":
    unittest.main()
