"""What the child process sees: TASKD_* variables, --env, --cwd, stdin,
file descriptors, the state file kept between runs, and argv without a shell."""

import ctypes
import json
import os
import signal
import subprocess
import time
import unittest

from taskd_test import TaskdTestCase, parse_time

PYTHON = "/usr/bin/python3"

# rt_sigaction's number, by machine.
RT_SIGACTION = {"x86_64": 13, "aarch64": 134}


def ignore_through_the_kernel(sig):
    """Sets SIG_IGN for sig with rt_sigaction itself, as glibc's sigaction
    will not for the signals it keeps for itself."""
    action = (ctypes.c_ulong * 4)(1, 0, 0, 0)  # handler SIG_IGN, flags, restorer, mask
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(RT_SIGACTION[os.uname().machine], sig, ctypes.byref(action), None, 8) != 0:
        raise OSError(ctypes.get_errno(), "rt_sigaction")

# Prints what the child sees as one JSON line.
REPORT = r"""
import json, os, sys, time
print(json.dumps({
    "env": {k: v for k, v in os.environ.items() if k.startswith("TASKD_") or k in ("GREETING", "EMPTY")},
    "cwd": os.getcwd(),
    "stdin": os.readlink("/proc/self/fd/0"),
    "stdin_data": sys.stdin.read(),
    "argv": sys.argv[1:],
    "time": time.time(),
}))
"""

# Lists its open descriptors. os.listdir opens one for the directory it
# reads, and that one is in the listing: it gets the lowest free number,
# which the probe finds just before.
FDS = r"""
import os
probe = os.open("/dev/null", os.O_RDONLY)
os.close(probe)
fds = os.listdir("/proc/self/fd")
print(probe, " ".join(sorted(fds)))
"""


def sched_slice(text):
    """The se.slice line of /proc/PID/sched output."""
    return [line.split(":")[1].strip() for line in text.splitlines() if line.startswith("se.slice")]


class EnvironmentTest(TaskdTestCase):
    def report_of(self, name):
        out = self.logs(name)
        return json.loads(out.strip().splitlines()[-1])

    def test_child_sees_the_taskd_variables(self):
        self.add("envy", "--every", "1h", "--start-now", "--timeout", "10m", "--", PYTHON, "-c", REPORT)
        before = time.time()
        self.run_once()
        report = self.report_of("envy")
        env = report["env"]
        run = self.history("envy")[0]
        task = self.task("envy")
        self.assertEqual(run["status"], "succeeded")

        self.assertEqual(env["TASKD_TASK"], "envy")
        self.assertEqual(env["TASKD_RUN_ID"], str(run["id"]))
        self.assertEqual(env["TASKD_ATTEMPT_UID"], run["attempt_uid"])
        self.assertRegex(env["TASKD_ATTEMPT_UID"], r"^[0-9a-f]{16,}$")
        self.assertEqual(env["TASKD_ATTEMPT_NO"], "1")
        self.assertEqual(env["TASKD_RUN_INDEX"], str(task["run_index"]))
        self.assertEqual(env["TASKD_RUN_INDEX"], "1")
        self.assertEqual(env["TASKD_SCHEDULED_AT"], run["scheduled_at"])
        parse_time(env["TASKD_SCHEDULED_AT"])  # RFC 3339 UTC

        deadline = int(env["TASKD_DEADLINE"])
        started = parse_time(run["started_at"]).timestamp()
        self.assertGreater(deadline, report["time"])
        # The timebox is 10 minutes from the start (Unix seconds, floored).
        self.assertAlmostEqual(deadline, started + 600, delta=2)
        self.assertGreater(deadline, before)

        for variable in ("TASKD_STATE", "TASKD_STATUS"):
            self.assertTrue(os.path.isabs(env[variable]), env[variable])
        self.assertNotEqual(env["TASKD_STATE"], env["TASKD_STATUS"])
        # The per-run files live under $TMPDIR and are gone after the run.
        run_dir = os.path.dirname(env["TASKD_STATE"])
        self.assertTrue(run_dir.startswith(self.env["TMPDIR"] + os.sep), run_dir)
        self.assertFalse(os.path.exists(run_dir))

    def test_env_option_reaches_the_child(self):
        self.add("envopt", "--env", "GREETING=hello=world", "--env", "EMPTY=", "--every", "1h", "--start-now",
                 "--", PYTHON, "-c", REPORT)
        self.run_once()
        env = self.report_of("envopt")["env"]
        self.assertEqual(env["GREETING"], "hello=world")
        self.assertEqual(env["EMPTY"], "")
        self.assertEqual(self.task("envopt")["env"], {"GREETING": "hello=world", "EMPTY": ""})

    def test_env_as_last_option_before_the_command(self):
        self.add("envlast", "--every", "1h", "--start-now", "--env", "GREETING=hi", "--", PYTHON, "-c", REPORT)
        self.run_once()
        self.assertEqual(self.report_of("envlast")["env"]["GREETING"], "hi")

    def test_command_arguments_after_env_are_not_taskd_options(self):
        code, _, err = self.run_taskd("add", "echo-owner", "--every", "1h", "--env", "A=1", "--",
                                      "echo", "--owner", "x")
        self.assertEqual(code, 0, err)
        task = self.task("echo-owner")
        self.assertEqual((task["command"], task["owner"]), (["echo", "--owner", "x"], ""))

    def test_cwd_is_the_working_directory_and_stdin_is_dev_null(self):
        workdir = os.path.join(self.tmp, "work dir")
        os.mkdir(workdir)
        self.add("where", "--every", "1h", "--start-now", "--cwd", workdir, "--", PYTHON, "-c", REPORT)
        self.assertEqual(self.task("where")["cwd"], workdir)
        # taskd's own stdin is a pipe with data: the child must not get it.
        self.run_once(input="data meant for taskd, not for the task\n")
        report = self.report_of("where")
        self.assertEqual(os.path.realpath(report["cwd"]), os.path.realpath(workdir))
        self.assertEqual(report["stdin"], "/dev/null")
        self.assertEqual(report["stdin_data"], "")

    def test_relative_cwd_is_made_absolute_at_add(self):
        os.mkdir(os.path.join(self.tmp, "rel"))
        self.add("rel", "--every", "1h", "--start-now", "--cwd", "rel", "--", PYTHON, "-c", REPORT)
        self.assertEqual(self.task("rel")["cwd"], os.path.join(self.tmp, "rel"))

    def fds_seen_by_child(self):
        out = self.logs("fds").split()
        probe, fds = int(out[0]), [int(fd) for fd in out[1:]]
        self.assertIn(probe, fds)  # the listing's own descriptor
        return sorted(set(fds) - {probe})

    def test_child_gets_only_stdin_stdout_stderr(self):
        self.add("fds", "--every", "1h", "--start-now", "--", PYTHON, "-c", FDS)
        self.run_once()
        self.assertEqual(self.fds_seen_by_child(), [0, 1, 2])

    def test_child_does_not_inherit_descriptors_taskd_inherited(self):
        self.add("fds", "--every", "1h", "--start-now", "--", PYTHON, "-c", FDS)
        leaked = os.open(os.path.join(self.tmp, "held-open"), os.O_WRONLY | os.O_CREAT, 0o600)
        self.addCleanup(os.close, leaked)
        self.run_once(pass_fds=(leaked,))
        fds = self.fds_seen_by_child()
        self.assertNotIn(leaked, fds)
        self.assertEqual(fds, [0, 1, 2])

    def test_child_gets_default_signal_handling_when_taskd_was_started_ignoring_signals(self):
        # nohup, or a parent that ignores SIGPIPE, starts taskd with signals
        # ignored (and maybe blocked); an ignored signal would stay ignored
        # across execve unless taskd resets it.
        self.add("signals", "--every", "1h", "--start-now", "--", "grep", "-E", "^Sig(Ign|Blk):", "/proc/self/status")

        def ignore_and_block():
            for sig in (signal.SIGHUP, signal.SIGPIPE, signal.SIGUSR1, signal.SIGRTMIN + 3):
                signal.signal(sig, signal.SIG_IGN)
            for sig in (32, 33):  # glibc's own, which its sigaction refuses; GNU make leaves them ignored
                ignore_through_the_kernel(sig)
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2, signal.SIGTERM})

        self.run_once(preexec_fn=ignore_and_block)
        self.assertEqual(self.logs("signals"), "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n")

    def test_child_runs_with_taskd_nice_value_and_the_default_time_slice(self):
        # taskd asks the kernel for short time slices for itself and its
        # children until they execute; the program gets the default back.
        if not os.path.exists("/proc/self/sched"):
            self.skipTest("no /proc/PID/sched (a kernel without CONFIG_SCHED_DEBUG)")
        self.add("sched", "--every", "1h", "--start-now", "--", "cat", "/proc/self/sched", "/proc/self/stat")
        self.run_once(preexec_fn=lambda: os.nice(5))
        out = self.logs("sched")
        own = subprocess.run(["cat", "/proc/self/sched"], capture_output=True, text=True, check=True).stdout
        self.assertEqual(sched_slice(out), sched_slice(own))
        stat = out.strip().splitlines()[-1]
        self.assertEqual(int(stat[stat.rindex(")") + 2:].split()[16]), 5, "nice value (field 19 of /proc/PID/stat)")

    def test_state_file_is_kept_between_runs(self):
        # First run: reads the (empty) state, writes a cursor, fails. With
        # --retry 0s the retry is due at once, so the next run-once runs the
        # task again and it must find the cursor. faketime puts the slots on
        # the hour, so the retry (timebox 1m) is never replaced by the next
        # planned slot.
        self.add("resume", "--every", "1h", "--phase", "0", "--start-now", "--timeout", "1m", "--retry", "0s,0s",
                 "--shell", "--",
                 'echo "attempt $TASKD_ATTEMPT_NO saw [$(cat "$TASKD_STATE")]";'
                 ' echo "cursor-$TASKD_ATTEMPT_NO" > "$TASKD_STATE"; exit 1',
                 faketime="2026-11-21 14:00:00")
        self.run_once(faketime="2026-11-21 14:00:01")
        self.assertEqual(self.logs("resume"), "attempt 1 saw []\n")
        self.run_once(faketime="2026-11-21 14:00:02")
        self.assertEqual(self.logs("resume"), "attempt 2 saw [cursor-1]\n")
        self.run_once(faketime="2026-11-21 14:00:03")
        self.assertEqual(self.logs("resume"), "attempt 3 saw [cursor-2]\n")

    def test_state_over_64_kib_is_refused_and_the_previous_state_kept(self):
        self.add("hoard", "--every", "1h", "--phase", "0", "--start-now", "--timeout", "1m", "--retry", "0s,0s",
                 "--shell", "--",
                 'echo "saw [$(head -c 20 "$TASKD_STATE")]";'
                 ' if [ "$TASKD_ATTEMPT_NO" = 1 ]; then echo small > "$TASKD_STATE";'
                 ' else head -c 70000 /dev/zero | tr "\\0" y > "$TASKD_STATE"; fi; exit 1',
                 faketime="2026-11-21 14:00:00")
        self.run_once(faketime="2026-11-21 14:00:01")
        self.run_once(faketime="2026-11-21 14:00:02")
        self.assertEqual(self.logs("hoard"), "saw [small]\n")
        self.assertIn("TASKD_STATE", self.history("hoard")[0]["reason"])
        self.run_once(faketime="2026-11-21 14:00:03")
        self.assertEqual(self.logs("hoard"), "saw [small]\n")

    def test_command_runs_without_a_shell_unless_shell(self):
        self.add("literal", "--every", "1h", "--start-now", "--", PYTHON, "-c", REPORT,
                 "$HOME", "*", "a b", "`id`;|")
        self.add("shell", "--every", "1h", "--start-now", "--shell", "--", "echo $TASKD_TASK; echo a b | tr a-z A-Z")
        self.run_once()
        self.assertEqual(self.report_of("literal")["argv"], ["$HOME", "*", "a b", "`id`;|"])
        self.assertEqual(self.logs("shell"), "shell\nA B\n")


if __name__ == "__main__":
    unittest.main()
