"""What a run starts outside its own process group ends with the run: a
child that calls setsid, a double fork, `nohup ... &`, and a child that
ignores SIGTERM and keeps forking, after the timebox, within a second of a
SIGKILL of taskd (its watchdog ends them), and, when the watchdog was killed
too, once the next run-once recovered the run. In both modes
(taskd(1), CONTAINMENT): subreaper, where taskd finds them by the
$TASKD_ATTEMPT_UID they inherited, always; cgroup, where the run's cgroup
holds them (a cleared environment too), where this machine lets taskd make
cgroups (detected, not assumed: the cgroup tests are skipped elsewhere)."""

import errno
import itertools
import os
import signal
import unittest

from loop_helpers import LoopTestCase, wait_for
from taskd_test import cgroup2_mount, processes_matching, sleeps_of, watchdogs_of

T0 = "2026-11-21 14:00:00"
T1 = "2026-11-21 14:00:05"

# Each leaves `sleep MARKER` running outside the run's process group, then
# waits in the foreground (the timebox or a SIGKILL of taskd ends that).
ESCAPES = {
    "setsid": 'setsid sh -c "sleep {m}" & sleep 30',
    "double fork": '(sh -c "setsid sleep {m} &" &) ; sleep 30',
    "nohup": 'setsid nohup sleep {m} >/dev/null 2>&1 & sleep 30',
    "ignores TERM and forks": ("trap '' TERM; setsid sh -c 'trap \"\" TERM; sleep {m}' & "
                               "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 1; done; "
                               "setsid sh -c 'trap \"\" TERM; sleep {m}' & sleep 30"),
}
CGROUP_NUMBERS = itertools.count()


def remove_cgroup(path):
    """Removes an emptied cgroup: the processes a test killed leave it once
    their new parent (init) has reaped them, in its own time."""
    def removed():
        try:
            os.rmdir(path)
        except OSError as error:
            if error.errno != errno.EBUSY:
                raise
            return False
        return True
    wait_for(removed, 10, "cgroup %s to empty" % path)


# Only a cgroup holds a process that also cleared its environment.
CLEARED_ENVIRONMENT = 'env -i setsid sh -c "sleep {m}" & sleep 30'

# Three `sleep MARKER` that a SIGKILL of taskd leaves running: one that
# called setsid, one double-forked, and the one the child waits for.
LEFT_BY_SIGKILL = 'setsid sleep {m} & (sleep {m} &); sleep {m}'


class ContainmentTest(LoopTestCase):
    def add_escaping(self, name, script, marker, timeout):
        self.add(name, "--every", "1h", "--phase", "0", "--start-now", "--timeout", timeout, "--kill-grace", "1s",
                 "--retry", "none", "--shell", "--", script.format(m=marker), faketime=T0)

    def modes(self):
        """The containments this machine allows, with their escapes."""
        modes = [("subreaper", ESCAPES)]
        code, _, err = self.run_taskd("run-once", "--containment", "cgroup", db=os.path.join(self.tmp, "probe.db"))
        if code == 0:
            modes.append(("cgroup", dict(ESCAPES, **{"cleared environment": CLEARED_ENVIRONMENT})))
        else:
            self.assertEqual(code, 69, err)
            self.assertIn("--containment cgroup: ", err)
        return modes

    def test_the_timebox_ends_what_left_the_process_group(self):
        for mode, escapes in self.modes():
            for name, script in escapes.items():
                with self.subTest(mode=mode, escape=name):
                    marker = self.unique_sleep()
                    task = "%s-%s" % (mode, name.replace(" ", "-"))
                    self.add_escaping(task, script, marker, "2s")
                    self.run_once("--containment", mode, faketime=T1)
                    self.assertEqual([r["status"] for r in self.history(task)], ["timed_out"])
                    self.assertEqual(processes_matching("sleep " + marker), [], "%s: left running" % name)

    def test_recovery_after_sigkill_ends_what_left_the_process_group(self):
        for mode, escapes in self.modes():
            for name in ("setsid", "double fork") + (("cleared environment",) if mode == "cgroup" else ()):
                with self.subTest(mode=mode, escape=name):
                    self.recover_after_sigkill(mode, name, escapes[name])

    def own_cgroup(self):
        """A cgroup of this test's own, for taskd to start in: the next taskd ends a killed one's
        runs, so that of a test running beside this one must not see them. Returns what puts a
        process there before it executes taskd."""
        home = os.path.join(cgroup2_mount(), "taskd-test-%d-%d" % (os.getpid(), next(CGROUP_NUMBERS)))
        os.mkdir(home)
        self.addCleanup(remove_cgroup, home)

        def enter():
            with open(os.path.join(home, "cgroup.procs"), "w") as procs:
                procs.write("0")
        enter.home = home
        return enter

    def run_once_until(self, mode, escaped, start_in):
        """Starts run-once in `mode` and waits until escaped() is true; returns it and taskd's pid."""
        worker = self.popen_taskd("run-once", "--containment", mode, faketime=T1, **start_in)
        self.addCleanup(worker.kill)
        wait_for(escaped, 20, "the escaped sleeps")
        [taskd] = [w for w in processes_matching("%s run-once" % self.db) if "faketime" not in w[1]]
        return worker, taskd[0]

    def test_a_sigkill_of_taskd_leaves_no_process_of_its_runs_alive_two_seconds_later(self):
        for mode, _ in self.modes():
            with self.subTest(mode=mode):
                marker = self.unique_sleep()
                task = "killed-" + mode
                self.add_escaping(task, LEFT_BY_SIGKILL, marker, "10m")
                start_in = {"preexec_fn": self.own_cgroup()} if mode == "cgroup" else {}
                worker, taskd = self.run_once_until(mode, lambda: len(sleeps_of(marker)) == 3, start_in)
                os.kill(taskd, signal.SIGKILL)
                # No other taskd starts: the killed one's watchdog ends them.
                wait_for(lambda: not processes_matching("sleep " + marker), 2, "the run's processes to end")
                wait_for(lambda: not watchdogs_of(taskd), 5, "the watchdog to exit")
                worker.wait(timeout=10)
                worker.stdout.close()
                worker.stderr.close()
                if mode == "cgroup":  # and taken the tree down, as taskd would have
                    home = start_in["preexec_fn"].home
                    self.assertEqual([e for e in os.listdir(home) if os.path.isdir(os.path.join(home, e))], [])

    def recover_after_sigkill(self, mode, name, script):
        marker = self.unique_sleep()
        task = name.replace(" ", "-")
        self.add_escaping(task, script, marker, "10m")
        start_in = {"preexec_fn": self.own_cgroup()} if mode == "cgroup" else {}
        worker, taskd = self.run_once_until(mode, lambda: sleeps_of(marker), start_in)
        self.kill_watchdog_of(taskd)  # which would end the escapee at once: this is about recovery
        os.kill(taskd, signal.SIGKILL)
        worker.wait(timeout=10)
        worker.stdout.close()
        worker.stderr.close()
        self.assertTrue(sleeps_of(marker), "the escapee outlived taskd")
        self.assertIn("lost", self.run_once("--containment", mode, faketime=T1, **start_in))
        self.assertEqual(processes_matching("sleep " + marker), [], "%s: left running" % name)
        self.ok("rm", task)

    def test_history_and_show_tell_a_runs_cpu_time_and_peak_memory(self):
        # 256 MiB: more than taskd's own peak, under ASan too (about 121 MiB), below which a
        # peak without the memory controller is not known (the child's exec counts taskd's).
        burn = ("import time\nx = bytearray(256 << 20)\nt = time.process_time()\n"
                "while time.process_time() - t < 0.3: pass")
        for mode, _ in self.modes():
            with self.subTest(mode=mode):
                task = "burn-" + mode
                self.add(task, "--every", "1h", "--phase", "0", "--start-now", "--", "/usr/bin/python3", "-c", burn,
                         faketime=T0)
                self.run_once("--containment", mode, faketime=T1)
                [run] = self.history(task)
                self.assertGreaterEqual(run["cpu_seconds"], 0.3)
                self.assertGreaterEqual(run["peak_memory_bytes"], 256 << 20)
                self.assertEqual(self.json_of("show", task)["last_run"]["cpu_seconds"], run["cpu_seconds"])
                self.assertRegex(self.ok("show", task), r"last run used +0\.[3-9]\d\ds [0-9.]+ MiB")

    def test_a_runs_peak_memory_is_its_own_not_taskds(self):
        # /bin/true's peak is well under a MiB; the kernel's account of a child counts, at its
        # exec, the memory of the taskd that started it (over 10 MiB).
        for mode, _ in self.modes():
            with self.subTest(mode=mode):
                task = "small-" + mode
                self.add(task, "--every", "1h", "--phase", "0", "--start-now", "--", "/bin/true", faketime=T0)
                self.run_once("--containment", mode, faketime=T1)
                [run] = self.history(task)
                self.assertEqual(run["status"], "succeeded", run["reason"])
                if run["peak_memory_bytes"] is not None:
                    self.assertLess(run["peak_memory_bytes"], 4 << 20)

    def test_a_cgroup_counts_the_cpu_time_of_what_left_the_process_group(self):
        modes = dict(self.modes())
        if "cgroup" not in modes:
            self.skipTest("this machine lets taskd make no cgroup")
        done = os.path.join(self.tmp, "done")
        burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
        script = ("(setsid sh -c '/usr/bin/python3 -c \"$0\"; touch %s' \"$BURN\" &); "
                  "while [ ! -e %s ]; do sleep 0.05; done" % (done, done))
        self.add("escaped-burn", "--every", "1h", "--phase", "0", "--start-now", "--env", "BURN=" + burn, "--shell",
                 "--", script, faketime=T0)
        self.run_once("--containment", "cgroup", faketime=T1)
        [run] = self.history("escaped-burn")
        self.assertEqual(run["status"], "succeeded", run["reason"])
        self.assertGreaterEqual(run["cpu_seconds"], 0.3)

    def test_out_of_the_root_cgroup_taskd_runs_from_a_leaf_of_its_tree_and_leaves_nothing(self):
        # cgroup v2 lets no controller reach the cgroups in one that holds processes (the root
        # aside): taskd, started in a cgroup of its own here, moves into TREE/taskd while it runs.
        if "cgroup" not in dict(self.modes()):
            self.skipTest("this machine lets taskd make no cgroup")
        enter_home = self.own_cgroup()
        home = enter_home.home
        seen = os.path.join(self.tmp, "seen")
        self.add("where", "--every", "1h", "--phase", "0", "--start-now", "--shell", "--",
                 "cat /proc/self/cgroup /proc/$PPID/cgroup > " + seen, faketime=T0)
        code, out, err = self.run_taskd("run-once", "--containment", "cgroup", faketime=T1, preexec_fn=enter_home)
        self.assertEqual(code, 0, err)
        with open(seen) as lines:
            run, taskd = [line.strip() for line in lines if line.startswith("0::")]
        tree = "0::/%s/taskd-[0-9]+-[0-9]+" % os.path.basename(home)
        self.assertRegex(run, "^%s/run-1$" % tree)
        self.assertRegex(taskd, "^%s/taskd$" % tree)
        self.assertEqual([entry for entry in os.listdir(home) if os.path.isdir(os.path.join(home, entry))], [])
        for emptied in ("cgroup.procs", "cgroup.subtree_control"):
            with open(os.path.join(home, emptied)) as contents:
                self.assertEqual(contents.read().strip(), "", emptied)

    def test_status_says_how_each_worker_contains_its_runs(self):
        self.start("run", "--containment", "subreaper")
        [worker] = self.json_of("status")["workers"]
        self.assertEqual(worker["containment"], "subreaper (--containment subreaper)")
        self.assertIn(" subreaper ", self.ok("status"))

    def test_a_containment_that_is_not_one_is_refused(self):
        code, _, err = self.run_taskd("run-once", "--containment", "jail")
        self.assertEqual(code, 2, err)
        self.assertOneErrorLine(err, "--containment", "jail")
        self.assertFalse(os.path.exists(self.db))


if __name__ == "__main__":
    unittest.main()
