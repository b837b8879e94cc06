#!/usr/bin/python3
"""A fault campaign against several `taskd run` hosts on one PostgreSQL server.

Four hosts (distinct --host-id, --lease 2s), each reaching a throwaway server
through a TCP proxy of its own, run a mix of tasks (every 2-5 s, children that
sleep and leave grandchildren behind, one overlap=replace task). Faults are
injected one at a time, each kind in turn, for real: kill -9 of a host (started
again four leases later), SIGSTOP for three leases, a proxy that stops forwarding for two
leases, a psql session holding a task's row lock for three leases, and a crash
of the server. A sampler reads /proc every 100 ms for the processes of the runs
(each carries its TASKD_RUN_ID in its environment).

Measured (goal 0 for each):
  slots started twice      two runs of one (task, slot, attempt) that started
  attempts overlapping     two runs of one task whose processes were alive at once
  processes past a lease   a run's process alive over 1 s after its run was
                           recorded ended (LOST, failed, succeeded)
  healthy runs lost        runs on a host with no fault (and no server fault)
                           during the run and a lease before it that did not
                           succeed

Usage: bench/faults.py BUILD_DIR   (FAULTS=N faults of each kind, default 6)
Loopback and Unix sockets only; every loop is bounded.
"""

import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cli"))
import pg_server  # noqa: E402
from tcp_proxy import TcpProxy  # noqa: E402

LEASE = 2.0
HOSTS = 4
KINDS = ("kill9", "stop", "blackhole", "rowlock", "servercrash")


class Sampler:
    """Which runs had processes alive, and when: run id -> (task, first, last seen)."""

    def __init__(self):
        self.seen = {}
        self.alive_together = {}  # task -> set of frozensets of run ids seen alive at one sample
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.stopping.wait(0.1):
            now = time.time()
            alive = {}
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                try:
                    with open(f"/proc/{entry}/environ", "rb") as f:
                        environ = f.read().split(b"\0")
                except OSError:
                    continue
                fields = dict(item.split(b"=", 1) for item in environ if b"=" in item)
                run = fields.get(b"TASKD_RUN_ID")
                task = fields.get(b"TASKD_TASK", b"").decode()
                if run and task.startswith("fc-"):
                    alive.setdefault(task, set()).add(int(run))
                    first = self.seen[int(run)][1] if int(run) in self.seen else now
                    self.seen[int(run)] = (task, first, now)
            for task, runs in alive.items():
                if len(runs) > 1:
                    self.alive_together.setdefault(task, set()).add(frozenset(runs))

    def stop(self):
        self.stopping.set()
        self.thread.join()


class Campaign:
    def __init__(self, taskd, faults_per_kind):
        self.taskd = taskd
        self.faults_per_kind = faults_per_kind
        self.server = pg_server.server()
        self.database = self.server.new_database()
        self.work = tempfile.mkdtemp(prefix="taskd-faults-")
        self.proxies = [TcpProxy(os.path.join(self.server.socket_dir, ".s.PGSQL.5432")) for _ in range(HOSTS)]
        self.hosts = [None] * HOSTS
        self.host_faults = {h: [] for h in range(HOSTS)}  # host -> [(from, until)]
        self.server_faults = []
        self.counts = {kind: 0 for kind in KINDS}
        self.healthy_lost = []
        self.faults = []  # (kind, host, from, until)

    def uri(self, host=None):
        if host is None:
            return self.server.uri(self.database)
        return f"postgresql://postgres@127.0.0.1:{self.proxies[host].port}/{self.database}"

    def taskd_cli(self, *args):
        subprocess.run([self.taskd, "--db", self.uri(), *args], check=True, capture_output=True, timeout=60)

    def add_tasks(self):
        for i in range(12):
            # half short, half longer than a lease and its kill grace, so that
            # a fault catches some runs in flight
            period = random.choice((2, 3, 4, 5)) if i % 2 else random.choice((15, 20))
            work = round(random.uniform(0.2, period * 0.6), 2)
            # a grandchild in a session of its own, that the run leaves behind
            script = f"setsid sleep {work + 0.5} & sleep {work}"
            self.taskd_cli("add", f"fc-{i}", "--every", f"{period}s", "--timeout", "1m", "--kill-grace", "1s",
                           "--retry", "0s", "--shell", "--", script)
        self.taskd_cli("add", "fc-replace", "--every", "5s", "--overlap", "replace", "--timeout", "1m",
                       "--kill-grace", "1s", "--shell", "--", "sleep 5")

    def start_host(self, host):
        log = open(os.path.join(self.work, f"h{host}.log"), "ab")
        self.hosts[host] = subprocess.Popen(
            [self.taskd, "--db", self.uri(host), "run", "--host-id", f"h{host}", "--lease", f"{LEASE:g}s",
             "--concurrency", "8", "--tick", "1s"], stdout=log, stderr=log)
        log.close()

    def inject(self, kind):
        host = random.randrange(HOSTS)
        start = time.time()
        if kind == "kill9":
            self.hosts[host].kill()
            self.hosts[host].wait()
            # longer than a lease and its recovery: the next taskd on this
            # machine would otherwise find what the dead one left
            time.sleep(4 * LEASE)
            self.start_host(host)
        elif kind == "stop":
            self.hosts[host].send_signal(signal.SIGSTOP)
            time.sleep(3 * LEASE)
            self.hosts[host].send_signal(signal.SIGCONT)
        elif kind == "blackhole":
            self.proxies[host].stop_forwarding()
            time.sleep(2 * LEASE)
            self.proxies[host].resume_forwarding()
        elif kind == "rowlock":
            task = f"fc-{random.randrange(12)}"
            holder = subprocess.Popen(["psql", "-X", "-q", "-At", "-d", self.uri()], stdin=subprocess.PIPE,
                                      stdout=subprocess.DEVNULL, text=True)
            holder.stdin.write(f"BEGIN; SELECT 1 FROM taskd.tasks WHERE name = '{task}' FOR UPDATE;\n"
                               f"SELECT pg_sleep({3 * LEASE}); ROLLBACK;\n")
            holder.stdin.close()
            holder.wait(timeout=60)
            host = None  # a lock held from outside: no host is at fault
        elif kind == "servercrash":
            self.server.crash_and_restart(1)
            host = None
        until = time.time() + LEASE + 1.5  # the recovery after the fault is part of it
        if kind in ("servercrash",):
            self.server_faults.append((start, until))
        elif host is not None:
            self.host_faults[host].append((start, until))
        self.counts[kind] += 1
        self.faults.append((kind, host, start, until))

    def run(self):
        self.add_tasks()
        for host in range(HOSTS):
            self.start_host(host)
        sampler = Sampler()
        time.sleep(5)
        schedule = [kind for kind in KINDS for _ in range(self.faults_per_kind)]
        random.shuffle(schedule)
        for kind in schedule:
            self.inject(kind)
            time.sleep(3)
        time.sleep(2 * LEASE + 2)
        self.shutdown_at = time.time()
        for process in self.hosts:
            process.send_signal(signal.SIGINT)
        for process in self.hosts:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        time.sleep(1.5)  # the sampler sees what outlived the hosts
        sampler.stop()
        return self.judge(sampler)

    def faulted(self, host, start, end):
        windows = self.server_faults + self.host_faults.get(host, [])
        return any(s <= end and start - LEASE <= u for s, u in windows)

    def judge(self, sampler):
        rows = self.server.psql(
            "SELECT r.id, t.name, r.status, r.scheduled_at, r.attempt_no, r.started_at / 1000.0, "
            "r.finished_at / 1000.0, r.worker_host, r.reason, r.trigger "
            "FROM runs r JOIN tasks t ON t.id = r.task_id WHERE t.name LIKE 'fc-%'", self.database)
        runs = {}
        starts = {}
        for rid, task, status, slot, attempt, started, finished, host, reason, trigger in rows:
            runs[int(rid)] = (task, status, float(finished) if finished else None)
            if started:
                key = (task, slot, attempt, trigger)
                starts[key] = starts.get(key, 0) + 1
                host_index = int(host[1:]) if host and host[1:].isdigit() else None
                end = float(finished) if finished else time.time()
                if (status not in ("succeeded", "running") and task != "fc-replace" and host_index is not None
                        and end < self.shutdown_at and not self.faulted(host_index, float(started), end)):
                    near = [f"{kind} h{h}" if h is not None else kind for kind, h, s, u in self.faults
                            if s <= end + 1 and float(started) - LEASE <= u]
                    self.healthy_lost.append((rid, task, status, host, reason[:60], near))
        twice = sum(n - 1 for n in starts.values() if n > 1)
        overlapping = sum(len(groups) for task, groups in sampler.alive_together.items())
        past = []
        for rid, (task, first, last) in sampler.seen.items():
            finished = runs.get(rid, (None, None, None))[2]
            if finished is not None and last > finished + 1.0:
                past.append((rid, task, round(last - finished, 1)))
        return twice, overlapping, past, len(rows)


def main():
    taskd = os.path.realpath(os.path.join(sys.argv[1] if len(sys.argv) > 1 else "build", "taskd"))
    campaign = Campaign(taskd, int(os.environ.get("FAULTS", "6")))
    twice, overlapping, past, count = campaign.run()
    print("faults:", ", ".join(f"{kind} {n}" for kind, n in campaign.counts.items()))
    print(f"runs recorded: {count}")
    print(f"slots started twice:    {twice}")
    print(f"attempts overlapping:   {overlapping}")
    print(f"processes past a lease: {len(past)}" + (f"  {past[:5]}" if past else ""))
    print(f"healthy runs lost:      {len(campaign.healthy_lost)}"
          + (f"  {campaign.healthy_lost[:5]}" if campaign.healthy_lost else ""))
    failed = twice or overlapping or past or campaign.healthy_lost
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
