"""kill -USR2 to taskd run or work: it claims nothing new and executes its
binary again in place (the same pid), which logs its version and takes over
the runs in flight, their output and timeboxes, and records each once; a
binary it cannot execute leaves it running as it was; a hand-over it cannot
read is logged, and goes no further."""

import fcntl
import os
import shutil
import signal
import subprocess
import unittest
from unittest import mock

import taskd_test
from loop_helpers import LoopTestCase, parse_logfmt, wait_for
from taskd_test import processes_matching, sleeps_of, watchdogs_of


class UpgradeTest(LoopTestCase):
    def setUp(self):
        super().setUp()
        self.go = os.path.join(self.tmp, "go")
        self.started = os.path.join(self.tmp, "started")

    def add_waiting_task(self):
        """A task that prints, waits for the file `go`, and prints again."""
        script = "echo begun; touch %s; while [ ! -e %s ]; do sleep 0.05; done; echo done" % (self.started, self.go)
        self.add("waits", "--every", "1h", "--start-now", "--shell", "--", script)

    def event_names(self, log):
        return [parse_logfmt(line).get("event") for line in self.log_lines(log)]

    def events_after_second_start(self, log, event):
        fields = [parse_logfmt(line) for line in self.log_lines(log)]
        starts = [i for i, f in enumerate(fields) if f.get("event") == "loop.started"]
        return [f for f in fields[starts[1]:] if f.get("event") == event]

    def starts(self, log):
        return self.events(log, "loop.started")

    def assertRunRecordedOnce(self):
        [run] = self.history("waits")
        self.assertEqual((run["status"], run["reason"], run["attempt_no"]), ("succeeded", "", 1))
        self.assertEqual(self.logs("waits"), "begun\ndone\n")

    def assertServesOnWithNothingHandedOver(self, proc):
        """The same process claims and runs what is queued, whose child gets neither the hand-over's
        variable nor its descriptors, and stops cleanly."""
        ran = os.path.join(self.tmp, "other-ran")
        script = "ls -l /proc/$$/fd > %s.fd; env > %s.env; touch %s" % (ran, ran, ran)
        self.add("other", "--every", "1h", "--start-now", "--shell", "--", script)
        self.wait_for_file(ran)
        with open(ran + ".env") as f:
            self.assertNotIn("TASKD_ADOPT_FD", f.read())
        with open(ran + ".fd") as f:
            self.assertNotIn("memfd:", f.read())
        self.assertKeepsNothingHandedOver(proc.pid)
        self.assertIsNone(proc.poll())
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0, err)

    def upgrade_while_the_run_waits(self, command, *args, before_upgrade=lambda: None):
        """taskd COMMAND ARGS runs the waiting task; SIGUSR2 while it waits (after `before_upgrade`);
        the new image starts, and takes the run over, before the test lets the run go on."""
        self.add_waiting_task()
        if command == "work":
            self.ok("tick")  # queues it: a worker does not
        # On a server, a short lease: the new image must renew it, or it fences the run.
        lease = ("--lease", "2s") if taskd_test.STORE == "postgresql" else ()
        proc, log = self.start(command, *lease, *args)
        self.wait_for_file(self.started)
        before_upgrade()
        proc.send_signal(signal.SIGUSR2)
        wait_for(lambda: len(self.starts(log)) == 2, 30, "the second loop.started")
        if lease:
            wait_for(lambda: len(self.events_after_second_start(log, "loop.wake")) >= 8, 30,
                     "a few renewals of the lease (every half second) by the new image")
        [upgrading] = self.events(log, "loop.upgrading")
        self.assertEqual(upgrading["running"], "1")
        [adopted] = self.events(log, "loop.adopted")
        self.assertEqual(adopted["runs"], "1")
        self.assertEqual(self.starts(log)[1]["command"], command)
        self.assertEqual([run["status"] for run in self.history("waits")], ["running"])
        open(self.go, "w").close()
        wait_for(lambda: self.events(log, "run.finished"), 30, "run.finished")
        self.assertRunRecordedOnce()
        self.assertEqual(len(self.events(log, "run.finished")), 1)
        self.assertEqual(self.events(log, "loop.upgrade_failed"), [])
        self.assertEqual(self.events(log, "loop.adoption_failed"), [])
        return proc, log

    def test_the_cgroup_of_an_adopted_run_contains_the_run_the_new_image_gives_it_next(self):
        """With a cgroup per run, the new image gives the cgroup of the run it adopted, once that run
        has ended, to a later run, whose processes are in it as any run's are."""
        code, _, _ = self.run_taskd("run-once", "--containment", "cgroup", db=os.path.join(self.tmp, "probe.db"))
        if code != 0:
            self.skipTest("this machine lets taskd make no cgroup")
        self.upgrade_while_the_run_waits("run", "--containment", "cgroup")
        where = os.path.join(self.tmp, "where")
        self.add("next", "--every", "1h", "--start-now", "--shell", "--",
                 "cat /proc/self/cgroup > %s.part && mv %s.part %s" % (where, where, where))
        self.wait_for_file(where)
        with open(where) as f:
            [line] = [line for line in f.read().splitlines() if line.startswith("0::")]
        self.assertRegex(line, r"/taskd-\d+-\d+/run-1$")

    def test_a_board_the_new_image_cannot_serve_costs_none_of_the_runs_it_takes_over(self):
        token = os.path.join(self.tmp, "token")
        with open(token, "w") as f:
            f.write("s3cret-token\n")
        os.chmod(token, 0o600)
        proc, log = self.upgrade_while_the_run_waits("run", "--web", "127.0.0.1:0", "--web-token-file", token,
                                                     before_upgrade=lambda: os.unlink(token))
        [failed] = self.events(log, "web.failed")
        self.assertIn(token, failed["error"])
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0, err)

    def test_usr2_executes_the_binary_again_and_the_new_image_adopts_the_run_in_flight(self):
        proc, log = self.upgrade_while_the_run_waits("run")
        [executing] = self.events(log, "loop.executing")
        self.assertEqual(executing["path"], os.path.realpath(taskd_test.TASKD_BIN))
        self.assertEqual(executing["running"], "1")
        version = subprocess.run([taskd_test.TASKD_BIN, "--version"], capture_output=True, text=True).stdout.strip()
        self.assertEqual("taskd " + self.starts(log)[1]["version"], version)
        self.assertServesOnWithNothingHandedOver(proc)

    @unittest.skipUnless(os.geteuid() == 0, "a run as another user needs root")
    def test_a_run_as_another_user_is_not_handed_over_the_upgrade_waits_for_it(self):
        os.chmod(self.tmp, 0o755)
        shared = os.path.join(self.tmp, "nobodys")
        os.mkdir(shared)
        os.chown(shared, 65534, 65534)  # where nobody's run writes
        self.started, self.go = os.path.join(shared, "started"), os.path.join(shared, "go")
        script = "echo begun; touch %s; while [ ! -e %s ]; do sleep 0.05; done; echo done" % (self.started, self.go)
        self.add("waits", "--every", "1h", "--start-now", "--user", "nobody", "--shell", "--", script)
        proc, log = self.start("run")
        self.wait_for_file(self.started)
        proc.send_signal(signal.SIGUSR2)
        wait_for(lambda: self.events(log, "loop.upgrade_waits"), 30, "loop.upgrade_waits")
        self.assertEqual(len(self.starts(log)), 1)  # nothing executed while nobody's run goes on
        with open(self.go, "w"):
            pass
        wait_for(lambda: len(self.starts(log)) == 2, 30, "the second loop.started, once the run ended")
        self.assertRunRecordedOnce()
        self.assertEqual([event["runs"] for event in self.events(log, "loop.adopted")], ["0"])
        # The old image's directory of the users' run files went with it.
        run_files = os.path.join(self.tmp, "tmp")
        self.assertEqual([name for name in os.listdir(run_files) if name.startswith("taskd-users")], [])
        self.stop(proc)

    def test_work_hands_its_run_in_flight_over_too(self):
        proc, log = self.upgrade_while_the_run_waits("work")
        self.assertIsNone(proc.poll())
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0, err)

    def test_the_new_image_ends_an_adopted_run_at_its_timebox(self):
        never = os.path.join(self.tmp, "never")
        script = "touch %s; while [ ! -e %s ]; do sleep 0.05; done" % (self.started, never)
        self.add("stuck", "--every", "1h", "--start-now", "--timeout", "3s", "--kill-grace", "1s", "--retry", "none",
                 "--shell", "--", script)
        proc, log = self.start("run")
        self.wait_for_file(self.started)
        proc.send_signal(signal.SIGUSR2)
        wait_for(lambda: len(self.starts(log)) == 2, 30, "the second loop.started")
        self.assertEqual([run["status"] for run in self.history("stuck")], ["running"])
        wait_for(lambda: self.events(log, "run.finished"), 30, "the timebox's end of the run")
        [run] = self.history("stuck")
        self.assertEqual(run["status"], "timed_out")
        self.assertEqual(run["reason"], "timed out after 3s (SIGTERM sent to its processes)")
        self.assertEqual(run["attempt_no"], 1)

    def test_the_watchdog_goes_on_watching_the_adopted_runs(self):
        marker = self.unique_sleep()
        self.add("escapes", "--every", "1h", "--start-now", "--retry", "none", "--shell", "--",
                 "setsid sleep {m} & (sleep {m} &); sleep {m}".format(m=marker))
        proc, log = self.start("run")
        wait_for(lambda: len(sleeps_of(marker)) == 3, 20, "the run's sleeps")
        watchdog = watchdogs_of(proc.pid)
        self.assertEqual(len(watchdog), 1)
        proc.send_signal(signal.SIGUSR2)
        wait_for(lambda: len(self.starts(log)) == 2, 30, "the second loop.started")
        self.assertEqual(watchdogs_of(proc.pid), watchdog, "the watchdog changed with the binary")
        self.assertEqual(len(sleeps_of(marker)), 3, "the upgrade ended processes of the run")
        proc.kill()
        # Its watchdog ends what left the run's group, as it would have before the upgrade.
        wait_for(lambda: not processes_matching("sleep " + marker), 2, "the run's processes to end")
        wait_for(lambda: not watchdogs_of(proc.pid), 5, "the watchdog to exit")

    ALL_SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE

    def start_handed(self, record, seals=ALL_SEALS):
        """taskd run started as a new image would be, $TASKD_ADOPT_FD naming a memfd with `record`, sealed with `seals`."""
        fd = os.memfd_create("taskd-handover", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        self.addCleanup(os.close, fd)
        os.write(fd, record)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
        log = os.path.join(self.tmp, "taskd.log")
        proc = self.popen_taskd("run", "--log-file", log, "--drain", "0", env={"TASKD_ADOPT_FD": str(fd)},
                                pass_fds=(fd,))
        self.addCleanup(self.reap, proc)
        wait_for(lambda: self.events(log, "loop.started") or proc.poll() is not None, 20, "loop.started")
        self.assertIsNone(proc.poll(), proc.stderr.read() if proc.poll() is not None else "")
        return proc, log

    def test_a_record_of_another_version_is_not_taken_over(self):
        fields = [b"taskd-handover", b"0", b"0", b"", b"", b"99", b"whatever"]
        proc, log = self.start_handed(b"".join(b"%d:%s" % (len(field), field) for field in fields))
        [failed] = self.events(log, "loop.adoption_failed")
        self.assertEqual(failed["error"], "the hand-over record is of format 99, and this taskd reads format 1")
        self.assertEqual(failed["runs"], "0")
        self.assertEqual(self.events(log, "loop.adopted"), [])
        self.assertServesOnWithNothingHandedOver(proc)

    def test_a_malformed_record_is_not_taken_over(self):
        proc, log = self.start_handed(b"14:taskd-handover3:1")
        [failed] = self.events(log, "loop.adoption_failed")
        self.assertEqual(failed["error"], "the hand-over record's count of runs has a bad length")
        self.assertServesOnWithNothingHandedOver(proc)

    def test_a_record_that_could_still_change_is_not_read(self):
        proc, log = self.start_handed(b"14:taskd-handover", seals=fcntl.F_SEAL_WRITE)
        [failed] = self.events(log, "loop.adoption_failed")
        self.assertRegex(failed["error"], r"^\$TASKD_ADOPT_FD=\d+ names no hand-over record: it is not sealed$")
        self.assertServesOnWithNothingHandedOver(proc)

    def test_a_variable_that_names_no_record_is_logged_and_never_reaches_a_child(self):
        log = os.path.join(self.tmp, "taskd.log")
        proc = self.popen_taskd("run", "--log-file", log, "--drain", "0", env={"TASKD_ADOPT_FD": "1"})
        self.addCleanup(self.reap, proc)
        wait_for(lambda: self.events(log, "loop.started") or proc.poll() is not None, 20, "loop.started")
        [failed] = self.events(log, "loop.adoption_failed")
        self.assertEqual(failed["error"], '$TASKD_ADOPT_FD is not a descriptor: "1"')
        self.assertServesOnWithNothingHandedOver(proc)

    def test_a_binary_it_cannot_execute_leaves_it_running_as_it_was(self):
        binary = os.path.join(self.tmp, "bin", "taskd")
        os.makedirs(os.path.dirname(binary))
        shutil.copy2(taskd_test.TASKD_BIN, binary)
        self.add_waiting_task()
        with mock.patch.object(taskd_test, "TASKD_BIN", binary):
            proc, log = self.start("run")
        self.wait_for_file(self.started)
        os.chmod(binary, 0o644)
        proc.send_signal(signal.SIGUSR2)
        wait_for(lambda: self.events(log, "loop.upgrading"), 20, "loop.upgrading")
        open(self.go, "w").close()
        [failed] = wait_for(lambda: self.events(log, "loop.upgrade_failed"), 30, "loop.upgrade_failed")
        self.assertEqual(failed["error"], "cannot execute %s: Permission denied" % binary)
        wait_for(lambda: self.events(log, "run.finished"), 30, "run.finished")
        self.assertEqual(len(self.starts(log)), 1, "the loop went on as it was, without starting again")
        self.assertRunRecordedOnce()
        self.assertServesOnWithNothingHandedOver(proc)

    def start_copied_binary(self, command="run", *args):
        """taskd COMMAND started from a copy of its binary, which the test may then replace."""
        binary = os.path.join(self.tmp, "bin", "taskd")
        os.makedirs(os.path.dirname(binary))
        shutil.copy2(taskd_test.TASKD_BIN, binary)
        with mock.patch.object(taskd_test, "TASKD_BIN", binary):
            proc, log = self.start(command, *args)
        return binary, proc, log

    def replace_binary(self, binary, script):
        """The binary becomes a shell script that ends by executing the real taskd."""
        os.unlink(binary)
        with open(binary, "w") as f:
            f.write("#!/bin/sh\n" + script + "\n")
        os.chmod(binary, 0o755)

    def assertKeepsNothingHandedOver(self, pid):
        """Process `pid` holds no record and no descriptor above 2 that a program it executes would inherit."""
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
                with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                    flags = int(f.read().split("flags:")[1].split()[0], 8)
            except (FileNotFoundError, IndexError):
                continue  # closed meanwhile
            self.assertNotIn("taskd-handover", target)
            if int(fd) > 2:
                self.assertTrue(flags & os.O_CLOEXEC, "fd %s (%s) is not close-on-exec" % (fd, target))

    def test_a_new_image_that_cannot_start_ends_the_runs_as_a_shutdown_and_records_them(self):
        term = os.path.join(self.tmp, "term")
        script = ("trap 'touch %s; exit 143' TERM; touch %s; while [ ! -e %s ]; do sleep 0.05; done"
                  % (term, self.started, self.go))
        self.add("waits", "--every", "1h", "--start-now", "--kill-grace", "30s", "--shell", "--", script)
        binary, proc, log = self.start_copied_binary()
        self.wait_for_file(self.started)
        real = os.path.realpath(taskd_test.TASKD_BIN)
        self.replace_binary(binary, '[ "$1" = --handover-format ] && exec {r} "$@"\nexec {r} "$@" --concurrency 0'
                            .format(r=real))
        proc.send_signal(signal.SIGUSR2)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 2, err)
        self.assertTrue(os.path.exists(term), "the run was not asked to stop (SIGTERM)")
        [failed] = self.events(log, "loop.adoption_failed")
        self.assertEqual(failed["error"], "run: --concurrency must be at least 1")
        self.assertEqual(failed["runs"], "1")
        [run] = self.history("waits")
        self.assertEqual(run["status"], "queued")
        self.assertIn("could not take the run over; queued again for its slot", run["reason"])

    def test_a_record_the_new_image_cannot_read_ends_its_runs_and_keeps_nothing_open(self):
        marker = self.unique_sleep()
        self.add("stranded", "--every", "1h", "--start-now", "--retry", "none", "--shell", "--",
                 "setsid sleep {m} & touch {s}; sleep {m}".format(m=marker, s=self.started))
        binary, proc, log = self.start_copied_binary()
        self.wait_for_file(self.started)
        [watchdog] = watchdogs_of(proc.pid)
        real = os.path.realpath(taskd_test.TASKD_BIN)
        # The new image is given something else than the record: another version's taskd, as it reads it.
        self.replace_binary(binary, 'exec 7</dev/null; TASKD_ADOPT_FD=7 exec %s "$@"' % real)
        proc.send_signal(signal.SIGUSR2)
        wait_for(lambda: len(self.starts(log)) == 2, 30, "the second loop.started")
        [failed] = self.events(log, "loop.adoption_failed")
        self.assertIn("names no hand-over record", failed["error"])
        # loop.started comes before the new image writes its row and then ends the runs it could not take.
        wait_for(lambda: self.history("stranded")[0]["status"] != "running", 10, "the run's end")
        [run] = self.history("stranded")
        self.assertEqual(run["status"], "lost")
        self.assertEqual(run["reason"], "lost: taskd executed its binary again, which could not take the run over")
        wait_for(lambda: not processes_matching("sleep " + marker), 10, "the run's processes to end")
        wait_for(lambda: watchdog not in watchdogs_of(proc.pid), 10, "the old watchdog to exit")
        self.assertKeepsNothingHandedOver(proc.pid)
        self.assertServesOnWithNothingHandedOver(proc)

    def upgrade_while_a_group_lingers(self, *args):
        """taskd run ARGS with the waiting run in flight and a run that ended but left its group lingering (until
        the test creates the file `lingered`); SIGUSR2."""
        self.add_waiting_task()
        self.lingered = os.path.join(self.tmp, "lingered")
        lingers = os.path.join(self.tmp, "lingers")
        # Its shell ends once what it started in its group ignores SIGTERM, until the test lets it go.
        script = ("(trap '' TERM; touch %s; while [ ! -e %s ]; do sleep 0.05; done) & while [ ! -e %s ]; do sleep 0.05; done"
                  % (lingers, self.lingered, lingers))
        self.add("leaves", "--every", "1h", "--start-now", "--kill-grace", "1h", "--shell", "--", script)
        proc, log = self.start("run", *args)
        self.wait_for_file(self.started)
        self.wait_for_file(lingers)
        wait_for(lambda: [r for r in self.history("leaves") if r["status"] == "succeeded"], 30, "the run that lingers")
        proc.send_signal(signal.SIGUSR2)
        wait_for(lambda: self.events(log, "loop.upgrading"), 20, "loop.upgrading")
        return proc, log

    def test_a_lingering_group_delays_the_upgrade_while_the_loop_goes_on(self):
        lease = ("--lease", "2s") if taskd_test.STORE == "postgresql" else ()
        proc, log = self.upgrade_while_a_group_lingers(*lease)
        # The loop goes on meanwhile: it heeds a signal, and (on a server) renews the leases past the 2s lease.
        proc.send_signal(signal.SIGHUP)
        wait_for(lambda: self.events(log, "log.reopened"), 10, "log.reopened while the group lingers")
        if lease:
            wait_for(lambda: len(self.events(log, "loop.wake")) >= 12, 30, "a few seconds of the loop")
        self.assertEqual(self.events(log, "loop.executing"), [])
        open(self.lingered, "w").close()
        wait_for(lambda: len(self.starts(log)) == 2, 30, "the second loop.started")
        [adopted] = self.events(log, "loop.adopted")
        self.assertEqual(adopted["runs"], "1")
        open(self.go, "w").close()
        wait_for(lambda: [r for r in self.history("waits") if r["status"] != "running"], 30, "the run's end")
        self.assertRunRecordedOnce()

    def test_a_binary_that_cannot_take_runs_over_is_executed_once_they_have_finished(self):
        self.add_waiting_task()
        binary, proc, log = self.start_copied_binary()
        self.wait_for_file(self.started)
        real = os.path.realpath(taskd_test.TASKD_BIN)
        # As a taskd from before hand-overs: it knows no --handover-format (and no record).
        self.replace_binary(binary, '[ "$1" = --handover-format ] && exit 2\n'
                            'unset TASKD_ADOPT_FD; exec %s "$@"' % real)
        proc.send_signal(signal.SIGUSR2)
        [waits] = wait_for(lambda: self.events(log, "loop.upgrade_waits"), 20, "loop.upgrade_waits")
        self.assertEqual(waits["running"], "1")
        self.assertEqual(len(self.starts(log)), 1, "executed before its run finished")
        self.assertEqual([run["status"] for run in self.history("waits")], ["running"])
        open(self.go, "w").close()
        wait_for(lambda: len(self.starts(log)) == 2, 30, "the second loop.started")
        self.assertEqual(self.events_after_second_start(log, "loop.adoption_failed"), [])
        self.assertEqual(self.events(log, "loop.adopted"), [])
        self.assertRunRecordedOnce()
        self.assertServesOnWithNothingHandedOver(proc)

    def test_a_sigterm_before_the_upgrade_stops_taskd_as_usual(self):
        proc, log = self.upgrade_while_a_group_lingers()
        proc.send_signal(signal.SIGTERM)
        wait_for(lambda: self.events(log, "loop.stopping"), 20, "loop.stopping")
        open(self.lingered, "w").close()
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(self.events(log, "loop.executing"), [])
        self.assertEqual(len(self.starts(log)), 1)
        [run] = self.history("waits")
        self.assertEqual(run["status"], "queued")
        self.assertIn("stopped as taskd shut down", run["reason"])

    # A wrapper that hands the real taskd the record it was given, its format changed to 99.
    OTHER_FORMAT = """#!/usr/bin/python3
import fcntl, os, sys
real = %r
if sys.argv[1:] == ["--handover-format"]:
    os.execv(real, [real] + sys.argv[1:])
old = int(os.environ["TASKD_ADOPT_FD"])
record = os.pread(old, os.fstat(old).st_size, 0)
def fields(at):
    while at < len(record):
        colon = record.index(b":", at)
        end = colon + 1 + int(record[at:colon])
        yield at, record[colon + 1:end]
        at = end
walk = fields(0)
take = lambda: next(walk)[1]
take()  # the mark
for run in range(int(take())):
    for field in range(12):
        take()
    if take() == b"1":
        take()
for fd in range(int(take())):
    take()
take(), take()  # the cgroup tree and its home
at, version = next(walk)
changed = record[:at] + b"2:99" + record[at + len(str(len(version))) + 1 + len(version):]
new = os.memfd_create("taskd-handover", os.MFD_ALLOW_SEALING)
os.write(new, changed)
fcntl.fcntl(new, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
os.environ["TASKD_ADOPT_FD"] = str(new)
os.execv(real, [real] + sys.argv[1:])
"""

    def test_a_record_of_another_format_ends_its_runs_as_a_shutdown_and_queues_them_again(self):
        term = os.path.join(self.tmp, "term")
        script = ("trap 'touch %s; exit 143' TERM; touch %s; while [ ! -e %s ]; do sleep 0.05; done"
                  % (term, self.started, self.go))
        self.add("waits", "--every", "1h", "--start-now", "--kill-grace", "30s", "--shell", "--", script)
        binary, proc, log = self.start_copied_binary()
        self.wait_for_file(self.started)
        [watchdog] = watchdogs_of(proc.pid)
        os.unlink(binary)
        with open(binary, "w") as f:
            f.write(self.OTHER_FORMAT % os.path.realpath(taskd_test.TASKD_BIN))
        os.chmod(binary, 0o755)
        proc.send_signal(signal.SIGUSR2)
        wait_for(lambda: len(self.starts(log)) == 2, 30, "the second loop.started")
        [failed] = self.events(log, "loop.adoption_failed")
        self.assertEqual(failed["error"], "the hand-over record is of format 99, and this taskd reads format 1")
        self.assertEqual(failed["runs"], "1")
        self.assertTrue(os.path.exists(term), "the run was not asked to stop (SIGTERM)")
        [requeued] = [event for event in self.events(log, "run.queued") if event.get("reason")]
        self.assertEqual((requeued["task"], requeued["status"]), ("waits", "queued"))
        self.assertIn("could not take the run over; queued again for its slot", requeued["reason"])
        self.assertEqual(self.events(log, "loop.adopted"), [])
        self.assertNotIn(watchdog, watchdogs_of(proc.pid), "the old watchdog was left running")
        self.assertKeepsNothingHandedOver(proc.pid)
        self.assertServesOnWithNothingHandedOver(proc)


if __name__ == "__main__":
    unittest.main()
