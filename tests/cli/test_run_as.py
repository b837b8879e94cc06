"""Tasks as other users (--user NAME[:GROUP]): the child runs as that user
with cron's HOME, USER, LOGNAME and SHELL and its own $TASKD_STATE; a user
that does not exist, or a scheduler that is not root, fails the run before
it starts; a database file that others can write may not grant it."""

import grp
import os
import pwd
import shutil
import subprocess
import sys
import time
import unittest

from loop_helpers import next_slot_half_a_day_away
from taskd_test import STORE, TASKD_BIN, TaskdTestCase, processes_matching

NOBODY = pwd.getpwnam("nobody")
# A group nobody is not in, to give with --user nobody:GROUP.
OTHER_GROUP = grp.getgrnam("daemon")

# What the child says of itself, one fact a line.
REPORT = ('id -u; id -g; id -G; echo "$HOME"; echo "$USER"; echo "$LOGNAME"; echo "$SHELL"; pwd; '
          'stat -c %u "$TASKD_STATE"; cat "$TASKD_STATE"; echo "cursor" > "$TASKD_STATE"')

AS_ROOT = unittest.skipUnless(os.geteuid() == 0, "only root can run a task as another user")


@AS_ROOT
class RunAsTest(TaskdTestCase):
    def setUp(self):
        super().setUp()
        # The run files are in $TMPDIR, which the user must reach (as /tmp).
        for path in (self.tmp, self.env["TMPDIR"]):
            os.chmod(path, 0o711)

    def facts(self, name):
        return self.logs(name).splitlines()

    def test_a_task_runs_as_its_user_with_crons_environment(self):
        self.add("who", "--every", "1h", "--start-now", "--user", "nobody", "--shell", "--", REPORT)
        self.assertEqual(self.task("who")["user"], "nobody")
        self.assertRegex(self.ok("show", "who"), r"\nuser +nobody\n")
        self.run_once()
        self.ok("trigger", "who")
        self.run_once()
        runs = self.history("who")
        self.assertEqual([run["status"] for run in runs], ["succeeded", "succeeded"], runs)
        groups = sorted(set(os.getgrouplist("nobody", NOBODY.pw_gid)))
        home = NOBODY.pw_dir if os.path.isdir(NOBODY.pw_dir) else "/"
        uid, gid, ids, *rest = self.facts("who")
        self.assertEqual((int(uid), int(gid)), (NOBODY.pw_uid, NOBODY.pw_gid))
        self.assertEqual(sorted(int(g) for g in ids.split()), groups)
        self.assertEqual(rest, [NOBODY.pw_dir, "nobody", "nobody", NOBODY.pw_shell, home, str(NOBODY.pw_uid),
                                "cursor"], "the second run reads the state the first one left")

    def test_a_group_in_place_of_the_users_own(self):
        self.add("grouped", "--every", "1h", "--start-now", "--user", "nobody:" + OTHER_GROUP.gr_name, "--shell",
                 "--", REPORT)
        self.run_once()
        uid, gid, ids = self.facts("grouped")[:3]
        self.assertEqual((int(uid), int(gid)), (NOBODY.pw_uid, OTHER_GROUP.gr_gid))
        self.assertIn(OTHER_GROUP.gr_gid, [int(g) for g in ids.split()])

    def test_a_user_that_does_not_exist_fails_the_run_before_it_starts(self):
        marker = os.path.join(self.tmp, "ran")
        self.add("ghost", "--every", "1h", "--start-now", "--user", "no-such-user-here", "--", "touch", marker)
        code, out, _ = self.run_taskd("run-once")
        self.assertEqual(code, 0)
        self.assertIn("cannot run as user no-such-user-here: no such user", out)
        (run,) = self.history("ghost")
        self.assertEqual(run["status"], "failed")
        self.assertEqual(run["reason"], "cannot run as user no-such-user-here: no such user")
        self.assertFalse(os.path.exists(marker))

    def test_taskd_follows_no_link_the_run_leaves_for_its_files(self):
        # The run puts links to a file only root reads in place of its files:
        # taskd neither keeps what they lead to as the state, nor as a reason.
        secret = os.path.join(self.tmp, "secret")
        with open(secret, "w") as f:
            f.write("root only\n")
        os.chmod(secret, 0o600)
        self.add("swap", "--every", "1h", "--start-now", "--user", "nobody", "--retry", "none", "--shell",
                 "--", f'cat "$TASKD_STATE"; rm "$TASKD_STATE"; ln -s {secret} "$TASKD_STATE"; '
                 f'ln -s {secret} "$TASKD_STATUS"; exit 3')
        self.run_once()
        self.ok("trigger", "swap")
        self.run_once()
        runs = self.history("swap")
        self.assertEqual([run["status"] for run in runs], ["failed", "failed"], runs)
        for run in runs:
            self.assertNotIn("root only", run["reason"])
        self.assertNotIn("root only", self.logs("swap"))

    def test_the_timebox_and_containment_end_what_the_user_left_running(self):
        modes = ["subreaper"]
        if self.run_taskd("run-once", "--containment", "cgroup", db=os.path.join(self.tmp, "probe.db"))[0] == 0:
            modes.append("cgroup")
        for mode in modes:
            with self.subTest(mode=mode):
                marker = self.unique_sleep()
                name = "escape-" + mode
                self.add(name, "--every", "1h", "--start-now", "--timeout", "2s", "--kill-grace", "1s", "--retry",
                         "none", "--user", "nobody", "--shell", "--", f"setsid sleep {marker} & sleep {marker}")
                self.run_once("--containment", mode)
                self.assertEqual([run["status"] for run in self.history(name)], ["timed_out"])
                self.assertEqual(processes_matching("sleep " + marker), [], "left running")

    def nobodys_directory(self, name):
        path = os.path.join(self.tmp, name)
        os.mkdir(path, 0o755)
        os.chown(path, NOBODY.pw_uid, NOBODY.pw_gid)
        return path

    def test_the_notify_command_runs_nothing_the_user_wrote(self):
        # The user's --env PATH, its LD_PRELOAD and its --cwd would pick what
        # the notify command, run as root, executes.
        evil = self.nobodys_directory("evil")
        caught = os.path.join(self.tmp, "ran-as-root")
        for name in ("alert", "./alert"):
            script = os.path.join(evil, os.path.basename(name))
            with open(script, "w") as f:
                f.write(f"#!/bin/sh\nid -u > {caught}\n")
            os.chmod(script, 0o755)
            os.chown(script, NOBODY.pw_uid, NOBODY.pw_gid)
        told = os.path.join(self.tmp, "told")
        self.add("n", "--every", "1h", "--start-now", "--user", "nobody", "--retry", "none", "--cwd", evil,
                 "--env", f"PATH={evil}:/usr/bin:/bin", "--env", "LD_PRELOAD=/nonexistent/evil.so",
                 "--notify", f'alert; ./alert; echo "$PATH|$(pwd)|$LD_PRELOAD" > {told}.tmp && mv {told}.tmp {told}',
                 "--", "false")
        self.run_once()
        self.wait_for_file(told)
        with open(told) as f:
            self.assertEqual(f.read(), "/usr/bin:/bin|/|\n")
        self.assertFalse(os.path.exists(caught), "the user's program ran as root")

    def test_a_run_gets_crons_environment_not_the_schedulers(self):
        self.add("env", "--every", "1h", "--start-now", "--user", "nobody", "--env", "CHOSEN=yes", "--", "env")
        self.run_once(env=dict(self.env, FOO_SECRET="xyz", LANG="C.UTF-8", TZ="Europe/Paris",
                               PATH="/root/bin:/usr/local/bin:/usr/bin:/bin"))
        env = dict(line.split("=", 1) for line in self.logs("env").splitlines() if "=" in line)
        self.assertNotIn("FOO_SECRET", env)
        self.assertEqual((env["PATH"], env["LANG"], env["TZ"], env["CHOSEN"]),
                         ("/usr/bin:/bin", "C.UTF-8", "Europe/Paris", "yes"))
        self.assertEqual((env["USER"], env["HOME"]), ("nobody", NOBODY.pw_dir))
        self.assertEqual(sorted(name for name in env if name.startswith("TASKD_") and name != "TASKD_HOST"),
                         ["TASKD_ATTEMPT_NO", "TASKD_ATTEMPT_UID", "TASKD_DEADLINE", "TASKD_RUN_ID",
                          "TASKD_RUN_INDEX", "TASKD_SCHEDULED_AT", "TASKD_STATE", "TASKD_STATUS", "TASKD_TASK"])

    def test_a_user_cannot_read_the_files_of_roots_runs(self):
        # Both run at once: root's task leaves a status others may read in
        # its directory, and says where; the user's task tries to read it.
        shared = self.nobodys_directory("shared")
        where, done = os.path.join(shared, "where"), os.path.join(shared, "done")
        wait = 'i=0; while [ ! -e "{}" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done'
        self.add("root", "--every", "1h", "--start-now", "--shell", "--",
                 f'umask 022; echo ROOTSECRET > "$TASKD_STATUS"; echo "$TASKD_STATUS" > {where}.tmp; '
                 f'mv {where}.tmp {where}; ' + wait.format(done))
        self.add("peek", "--every", "1h", "--start-now", "--user", "nobody", "--shell", "--",
                 wait.format(where) + f'; cat "$(cat {where})"; touch {done}; true')
        self.run_once("--concurrency", "2")
        self.assertTrue(os.path.exists(done), self.logs("peek"))
        self.assertNotIn("ROOTSECRET", self.logs("peek"))

    def test_a_huge_status_or_state_file_is_not_read_whole(self):
        self.add("huge", "--every", "1h", "--start-now", "--user", "nobody", "--shell", "--",
                 'truncate -s 400M "$TASKD_STATUS"; truncate -s 400M "$TASKD_STATE"')
        # taskd's peak memory, as its parent sees it.
        measure = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
                   "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
        proc = subprocess.run([sys.executable, "-c", measure] + self.command_line(("run-once",), db=True),
                              env=self.environment(None, None, False), cwd=self.tmp, capture_output=True, text=True,
                              timeout=120)
        self.assertEqual(self.history("huge")[0]["status"], "succeeded", proc.stderr)
        # Reading either whole takes over 400 MiB; a taskd built with ASan
        # peaks at about 130 MiB of its own.
        self.assertLess(int(proc.stdout), 300 * 1024, "peak memory of run-once, KiB")

    @unittest.skipIf(STORE == "postgresql", "file modes are a SQLite file's; on a server its roles decide")
    def test_copy_db_carries_a_user_only_into_a_private_database_file(self):
        self.add("kept", "--every", "1h", "--user", "nobody", "--", "true")
        destination = os.path.join(self.tmp, "copy.db")
        self.add("there", "--every", "1h", "--", "true", db=destination)
        os.chmod(destination, 0o664)
        code, _, err = self.run_taskd("copy-db", "--from", self.db, "--to", destination, "--merge", db=None)
        self.assertEqual(code, 65, err)
        self.assertIn("run as another user", err)
        self.assertEqual([task["name"] for task in self.tasks(db=destination)], ["there"])
        os.chmod(destination, 0o600)
        self.ok("copy-db", "--from", self.db, "--to", destination, "--merge", db=None)
        self.assertEqual(self.task("kept", db=destination)["user"], "nobody")

    @unittest.skipUnless(shutil.which("setpriv"), "setpriv takes the right to switch users from root")
    def test_a_switch_that_fails_fails_the_run_before_it_starts(self):
        marker = os.path.join(self.tmp, "ran")
        self.add("denied", "--every", "1h", "--start-now", "--user", "nobody", "--retry", "none", "--", "touch",
                 marker)
        argv = ["setpriv", "--bounding-set=-setuid,-setgid", "--"] + self.command_line(("run-once",))
        proc = subprocess.run(argv, env=self.environment(None, None, False), cwd=self.tmp, capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        (run,) = self.history("denied")
        self.assertEqual(run["status"], "failed")
        self.assertIn(f"cannot switch to uid {NOBODY.pw_uid} gid {NOBODY.pw_gid}: Operation not permitted",
                      run["reason"])
        self.assertFalse(os.path.exists(marker))

    def test_export_and_apply_keep_the_user(self):
        self.add("kept", "--every", "1h", "--user", "nobody:" + OTHER_GROUP.gr_name, "--", "true")
        exported = os.path.join(self.tmp, "tasks.toml")
        with open(exported, "w") as f:
            f.write(self.ok("export"))
        with open(exported) as f:
            self.assertIn(f'user = "nobody:{OTHER_GROUP.gr_name}"', f.read())
        self.assertIn("0 added, 0 changed", self.ok("apply", exported))
        self.ok("edit", "kept", "--user", "")
        self.assertEqual(self.task("kept")["user"], "")
        self.assertIn("1 changed", self.ok("apply", exported))
        self.assertEqual(self.task("kept")["user"], "nobody:" + OTHER_GROUP.gr_name)

    def test_a_malformed_user_is_refused(self):
        code, _, err = self.run_taskd("add", "bad", "--every", "1h", "--user", "a b", "--", "true")
        self.assertEqual(code, 65, err)
        self.assertIn("--user", err)
        self.assertEqual(self.tasks(), [])

    @unittest.skipIf(STORE == "postgresql", "file modes are a SQLite file's; on a server its roles decide")
    def test_a_database_file_others_can_write_may_not_grant_a_user(self):
        self.add("plain", "--every", "1h", "--", "true")
        os.chmod(self.db, 0o664)
        code, _, err = self.run_taskd("add", "as-nobody", "--every", "1h", "--user", "nobody", "--", "true")
        self.assertEqual(code, 65, err)
        self.assertIn("as-nobody: --user nobody is refused", err)
        self.assertIn("writable", err)
        code, _, err = self.run_taskd("edit", "plain", "--user", "nobody")
        self.assertEqual(code, 65, err)
        tasks = os.path.join(self.tmp, "tasks.toml")
        with open(tasks, "w") as f:
            f.write('[[task]]\nname = "filed"\nevery = "1h"\ncommand = "true"\nuser = "nobody"\n')
        code, _, err = self.run_taskd("apply", tasks)
        self.assertEqual(code, 65, err)
        code, _, err = self.run_taskd("apply", "--dry-run", tasks)
        self.assertEqual(code, 65, err)
        self.assertIn("filed: --user nobody is refused", err)
        self.assertEqual(self.sql("SELECT name, run_as FROM tasks"), [("plain", "")])
        os.chmod(self.db, 0o600)
        self.ok("apply", tasks)
        self.assertEqual(self.task("filed")["user"], "nobody")


# Stops every new process of its user, as fast as it can: the pids just
# after the newest one, again and again.
STOPPER_C = r"""
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) {
  int fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY);
  pid_t me = getpid();
  char text[32];
  for (;;) {
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    if (n <= 0) continue;
    text[n] = 0;
    for (int pid = atoi(text) - 2, last = pid + 6; pid <= last; ++pid)
      if (pid > 1 && pid != me) kill(pid, SIGSTOP);
  }
}
"""


@AS_ROOT
@unittest.skipUnless(shutil.which("unshare"), "unshare gives taskd password and group files of the test's own")
class UserDatabaseChangesTest(TaskdTestCase):
    """taskd keeps the users it looked up while the password and group files
    (and nsswitch.conf) stay as they were: a user changed or removed between
    two runs of one scheduler is seen at the next run."""

    USER = "taskd-lookup-test"

    def setUp(self):
        super().setUp()
        for path in (self.tmp, self.env["TMPDIR"]):
            os.chmod(path, 0o711)
        # Copies of the files that taskd sees in place of the machine's (a
        # mount namespace of its own), changed in place as the test goes.
        self.files = {}
        for name in ("passwd", "group"):
            self.files[name] = os.path.join(self.tmp, name)
            shutil.copyfile("/etc/" + name, self.files[name])
            os.chmod(self.files[name], 0o644)
        self.files["nsswitch.conf"] = os.path.join(self.tmp, "nsswitch.conf")
        with open(self.files["nsswitch.conf"], "w") as f:
            f.write("passwd: files\ngroup: files\n")
        os.chmod(self.files["nsswitch.conf"], 0o644)
        with open("/etc/passwd") as f:
            self.machines_users = f.read()

    def set_user(self, uid):
        """The test's user with `uid` in the password file, or none (None)."""
        line = f"{self.USER}:x:{uid}:{uid}::/nonexistent:/bin/sh\n" if uid else ""
        with open(self.files["passwd"], "w") as f:  # in place: the mount shows this file
            f.write(self.machines_users + line)

    def scheduler(self):
        mounts = " && ".join(f'mount --bind "{path}" /etc/{name}' for name, path in self.files.items())
        argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", mounts + ' && exec "$@"', "sh",
                *self.command_line(["run"])]
        self.scheduler_log = os.path.join(self.tmp, "scheduler.log")
        with open(self.scheduler_log, "w") as log:
            proc = subprocess.Popen(argv, env=self.env, cwd=self.tmp, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=log)
        self.addCleanup(proc.wait)
        self.addCleanup(proc.terminate)
        return proc

    def wait_for_runs(self, count, proc, seconds=30):
        deadline = time.monotonic() + seconds
        while True:
            runs = [run for run in self.history("who") if run["status"] not in ("queued", "running")]
            if len(runs) >= count:
                return runs
            if proc.poll() is not None:
                with open(self.scheduler_log) as log:
                    self.fail("the scheduler ended: " + log.read())
            self.assertLess(time.monotonic(), deadline, f"{count} runs never ended: {runs}")
            time.sleep(0.05)

    def test_a_user_changed_or_removed_between_runs_is_seen_at_the_next_run(self):
        self.set_user(4242)
        self.add("who", "--every", "1w", "--start-now", "--user", self.USER, "--retry", "none", "--", "id", "-u")
        proc = self.scheduler()
        self.assertEqual(self.wait_for_runs(1, proc)[0]["status"], "succeeded")
        self.assertEqual(self.logs("who").strip(), "4242")
        self.set_user(4243)  # the same size: the file's time tells it changed
        self.ok("trigger", "who")
        self.assertEqual([run["status"] for run in self.wait_for_runs(2, proc)], ["succeeded", "succeeded"])
        self.assertEqual(self.logs("who").strip(), "4243")
        self.set_user(None)
        self.ok("trigger", "who")
        last = self.wait_for_runs(3, proc)[0]
        self.assertEqual(last["status"], "failed")
        self.assertEqual(last["reason"], f"cannot run as user {self.USER}: no such user")


@AS_ROOT
@unittest.skipUnless(shutil.which("setpriv") and shutil.which("cc"), "setpriv and a C compiler make the stopper")
class UserStopsItsRunsTest(TaskdTestCase):
    """The user's processes may stop a run of the user's the moment it
    switches, before it executes: taskd is not stopped with it."""

    # A user no other test runs as, since the stopper stops all its processes.
    USER = pwd.getpwnam("games")

    def test_taskd_ends_every_run_and_is_never_stopped(self):
        source, stopper = os.path.join(self.tmp, "stopper.c"), os.path.join(self.tmp, "stopper")
        with open(source, "w") as f:
            f.write(STOPPER_C)
        subprocess.run(["cc", "-O2", "-o", stopper, source], check=True)
        os.chmod(self.tmp, 0o711)
        proc = subprocess.Popen(["setpriv", f"--reuid={self.USER.pw_uid}", f"--regid={self.USER.pw_gid}",
                                 "--clear-groups", "--", stopper])
        self.addCleanup(proc.wait)
        self.addCleanup(proc.kill)
        names = [f"t{i}" for i in range(16)]
        for name in names:
            # The next slot half a day away: one drawn from the name could pass
            # in the half minute all this takes, and leave a SKIPPED row.
            self.add(name, "--every", "1d", "--phase", next_slot_half_a_day_away(), "--start-now", "--user",
                     self.USER.pw_name, "--timeout", "1s", "--kill-grace", "1s", "--retry", "none", "--", "/bin/true")
        # Before: a run stopped before it executed stopped taskd with it, for good. Now
        # taskd waits 2 s at most for each run stopped before it executes: 32 s for all.
        code, _, err = self.run_taskd("run-once", "--concurrency", "8", timeout=120)
        self.assertEqual(code, 0, err)
        statuses = {run["status"] for name in names for run in self.history(name)}
        self.assertLessEqual(statuses, {"succeeded", "timed_out", "failed"})
        self.assertEqual(len([run for name in names for run in self.history(name)]), len(names))


@AS_ROOT
@unittest.skipUnless(shutil.which("setpriv"), "setpriv runs taskd as another user")
class SchedulerNotRootTest(TaskdTestCase):
    """A taskd that is not root adds a task with --user (a warning) and runs
    it (a failed run that never started)."""

    def setUp(self):
        super().setUp()
        self.home = os.path.join(self.tmp, "nobody")
        os.chmod(self.tmp, 0o711)
        os.makedirs(self.home, mode=0o700)
        os.chown(self.home, NOBODY.pw_uid, NOBODY.pw_gid)
        self.env.update(HOME=self.home, TMPDIR=self.home, XDG_STATE_HOME=self.home)
        if STORE == "sqlite":
            self.db = os.path.join(self.home, "taskd.db")

    def as_nobody(self, *args):
        argv = ["setpriv", f"--reuid={NOBODY.pw_uid}", f"--regid={NOBODY.pw_gid}", "--clear-groups", "--",
                TASKD_BIN, "--utc", "--db", self.db] + list(args)
        proc = subprocess.run(argv, env=self.env, cwd=self.home, capture_output=True, text=True, timeout=60)
        return proc.returncode, proc.stdout, proc.stderr

    def test_the_run_fails_before_it_starts_and_add_warns(self):
        marker = os.path.join(self.home, "ran")
        code, _, err = self.as_nobody("add", "switch", "--every", "1h", "--start-now", "--user", "daemon", "--",
                                      "touch", marker)
        self.assertEqual(code, 0, err)
        self.assertIn(f"only a scheduler running as root can run it as daemon, and you are not root (uid "
                      f"{NOBODY.pw_uid})", err)
        code, out, err = self.as_nobody("run-once")
        self.assertEqual(code, 0, err)
        reason = (f"cannot run as user daemon: only a scheduler running as root can switch users, and this one runs "
                  f"as uid {NOBODY.pw_uid}; the task did not run")
        self.assertIn(reason, out)
        (run,) = self.history("switch")
        self.assertEqual((run["status"], run["reason"]), ("failed", reason))
        self.assertFalse(os.path.exists(marker))

    @unittest.skipUnless(STORE == "postgresql", "a SQLite file that says whom tasks run as is root's alone: a "
                         "scheduler there that is not root cannot open it")
    def test_add_as_root_warns_when_the_databases_scheduler_is_not_root(self):
        code, _, err = self.as_nobody("run-once", "--host-id", "box")
        self.assertEqual(code, 0, err)
        code, _, err = self.run_taskd("add", "switch", "--every", "1h", "--user", "daemon", "--", "true")
        self.assertEqual(code, 0, err)
        self.assertIn(f"only a scheduler running as root can run it as daemon, and the database's scheduler on box "
                      f"(uid {NOBODY.pw_uid}) is not root; its runs fail there", err)
        root_state = dict(self.env, HOME=self.tmp, TMPDIR=self.tmp, XDG_STATE_HOME=self.tmp)
        self.ok("run-once", "--host-id", "box", env=root_state)  # now root ticks there
        code, _, err = self.run_taskd("edit", "switch", "--user", "daemon:daemon")
        self.assertEqual(code, 0, err)
        self.assertNotIn("warning", err)

    def test_import_crontab_warns_of_the_users_it_keeps(self):
        crontab = os.path.join(self.home, "crontab")
        with open(crontab, "w") as f:
            f.write("0 3 * * * daemon true\n")
        os.chown(crontab, NOBODY.pw_uid, NOBODY.pw_gid)
        code, _, err = self.as_nobody("import-crontab", "--system", crontab)
        self.assertEqual(code, 0, err)
        self.assertIn(f"only a scheduler running as root can run it as daemon, and you are not root (uid "
                      f"{NOBODY.pw_uid})", err)


if __name__ == "__main__":
    unittest.main()
