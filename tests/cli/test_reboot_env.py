"""--cron @reboot (a task that runs once after each boot of the machine,
told by the kernel's boot id) and --env-file (NAME=VALUE lines each run
reads as it starts, whose values stay out of the database and every
output)."""

import os
import pwd
import socket
import subprocess
import textwrap
import time
import unittest

from taskd_test import STORE, TaskdTestCase

BOOT_ID = "/proc/sys/kernel/random/boot_id"
SECRET = "hunter2-Xq9"
NOBODY = pwd.getpwnam("nobody")
AS_ROOT = unittest.skipUnless(os.geteuid() == 0, "only root owns files as another user")


def can_simulate_boots():
    """Whether this machine lets a test give a process another boot id: a
    file bound over /proc's in a mount namespace of its own (root only)."""
    if os.geteuid() != 0:
        return False
    try:
        proc = subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind /etc/hostname %s" % BOOT_ID],
                              capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


SIMULATED_BOOTS = unittest.skipUnless(can_simulate_boots(), "needs root and mount namespaces to simulate a boot")


class RebootTest(TaskdTestCase):
    def setUp(self):
        super().setUp()
        self.host = socket.gethostname()
        self.marker = os.path.join(self.tmp, "ran")

    def add_at_boot(self, name="at-boot", *args, **kwargs):
        return self.add(name, "--cron", "@reboot", "--on-host", self.host, *args, "--shell", "--",
                        "echo run >> %s" % self.marker, **kwargs)

    def runs(self):
        if not os.path.exists(self.marker):
            return 0
        with open(self.marker) as f:
            return len(f.read().splitlines())

    def boot_argv(self, boot, args):
        """taskd's command line as on a machine whose kernel tells `boot` as
        its boot id: a file bound over /proc's in a mount namespace of its
        own (unshare and sh execute taskd: its pid is the process's)."""
        boot_file = os.path.join(self.tmp, "boot-" + boot)
        with open(boot_file, "w") as f:
            f.write(boot + "\n")
        argv = ["unshare", "-m", "sh", "-c", 'mount --bind "$0" %s && exec "$@"' % BOOT_ID, boot_file]
        return argv + self.command_line(args)

    def under_boot(self, boot, *args):
        proc = subprocess.run(self.boot_argv(boot, args), env=self.environment(None, None, False), cwd=self.tmp,
                              stdin=subprocess.DEVNULL, capture_output=True, encoding="utf-8", timeout=60)
        self.assertEqual(proc.returncode, 0, "stdout: %s\nstderr: %s" % (proc.stdout, proc.stderr))
        return proc.stdout

    def test_a_task_added_after_the_boot_waits_for_the_next_and_a_restart_is_no_boot(self):
        out = self.add_at_boot()
        self.assertIn("added at-boot: cron @reboot (once after each boot), next run at the next boot", out)
        self.assertRegex(self.ok("show", "at-boot"), r"\nnext run +at the next boot\n")
        self.assertIn("Next: at the next boot of the machine", self.ok("explain", "at-boot"))
        self.assertIn("cron @reboot", self.ok("list"))
        self.assertIsNone(self.task("at-boot")["next_run_at"])
        for _ in range(3):  # each run-once or tick is a scheduler started anew on the same boot
            self.run_once()
            self.ok("tick")
        self.assertEqual(self.runs(), 0)
        self.assertEqual(self.history("at-boot"), [])

    def test_trigger_runs_it_as_any_task(self):
        self.add_at_boot()
        self.ok("trigger", "at-boot")
        self.run_once()
        self.assertEqual(self.runs(), 1)
        self.assertEqual([r["trigger"] for r in self.history("at-boot")], ["manual"])

    def test_preview_explain_and_forecast_say_it_runs_after_each_boot(self):
        self.add_at_boot()
        for command in (("preview", "--cron", "@reboot"), ("preview", "at-boot")):
            code, out, err = self.run_taskd(*command)
            self.assertEqual((code, out), (0, ""), err)
            self.assertIn("no start times: it runs once after each boot of the machine", err)
        self.assertEqual(self.json_of("preview", "at-boot"), [])
        self.assertIn("at-boot has no planned slots: it runs once after each boot of the machine",
                      self.ok("explain", "at-boot", "--at", "2026-11-21T10:00:00Z"))
        self.assertIn("peak 0 starts", self.ok("forecast"))

    def test_jitter_does_not_go_with_it(self):
        code, _, err = self.run_taskd("add", "j", "--cron", "@reboot", "--on-host", self.host, "--jitter", "1m",
                                      "--", "true")
        self.assertEqual(code, 65, err)
        self.assertIn("--jitter goes with planned slots, not with --cron @reboot", err)

    @unittest.skipUnless(STORE == "postgresql", "a shared database only")
    def test_a_shared_database_needs_on_host(self):
        code, out, err = self.run_taskd("add", "boot", "--cron", "@reboot", "--", "true")
        self.assertEqual(code, 65, err)
        self.assertIn("--cron @reboot on a shared database needs --on-host", err)
        self.assertEqual(self.tasks(), [])
        path = os.path.join(self.tmp, "tasks.toml")
        with open(path, "w") as f:
            f.write('[[task]]\nname = "boot"\ncommand = "true"\ncron = "@reboot"\n')
        code, out, err = self.run_taskd("apply", path)
        self.assertEqual(code, 65, err)
        self.assertIn("needs --on-host", err)
        self.add("boot", "--every", "1h", "--", "true")
        code, out, err = self.run_taskd("edit", "boot", "--cron", "@reboot")
        self.assertEqual(code, 65, err)
        self.assertIn("needs --on-host", err)

    def test_import_crontab_converts_reboot_lines(self):
        path = os.path.join(self.tmp, "crontab")
        with open(path, "w") as f:
            f.write("@reboot /usr/local/bin/start-things\n")
        out = self.ok("import-crontab", path)
        (task,) = self.tasks()
        self.assertEqual(task["schedule"]["spec"], "@reboot")
        # On a shared database, a crontab's @reboot runs after the boots of the machine it came from.
        self.assertEqual(self.task(task["name"])["on_host"], "" if STORE == "sqlite" else socket.gethostname())
        if STORE == "postgresql":
            self.assertIn("1: note: @reboot: runs after the boots of this host, as --on-host " + socket.gethostname(),
                          out)
        self.run_once()
        self.assertEqual(self.history(task["name"]), [])

    @SIMULATED_BOOTS
    def test_each_boot_runs_it_once_and_a_failed_run_is_retried(self):
        self.under_boot("boot-a", "add", "at-boot", "--cron", "@reboot", "--on-host", self.host, "--retry", "0s",
                        "--shell", "--", "echo run >> %s; [ $(wc -l < %s) -ge 2 ]" % (self.marker, self.marker))
        self.under_boot("boot-a", "run-once")
        self.assertEqual(self.runs(), 0, "the boot it was added under does not run it")
        self.under_boot("boot-b", "run-once")
        self.under_boot("boot-b", "run-once")
        self.assertEqual([r["status"] for r in self.history("at-boot")][::-1], ["failed", "succeeded"],
                         "the boot's run failed, and its retry (at once) ran at the next tick")
        self.under_boot("boot-b", "run-once")
        self.assertEqual(self.runs(), 2, "the same boot does not run it again")
        self.under_boot("boot-c", "run-once")
        self.assertEqual(self.runs(), 3)

    @SIMULATED_BOOTS
    def test_a_task_edited_to_reboot_waits_for_the_next_boot(self):
        self.under_boot("boot-a", "add", "edited", "--manual", "--on-host", self.host, "--shell", "--",
                        "echo run >> %s" % self.marker)
        self.under_boot("boot-a", "edit", "edited", "--cron", "@reboot")
        self.under_boot("boot-a", "run-once")
        self.assertEqual(self.runs(), 0)
        self.under_boot("boot-b", "run-once")
        self.assertEqual(self.runs(), 1)

    @SIMULATED_BOOTS
    def test_a_paused_task_keeps_the_boot_without_running_for_it(self):
        self.under_boot("boot-a", "add", "paused", "--cron", "@reboot", "--on-host", self.host, "--shell", "--",
                        "echo run >> %s" % self.marker)
        self.ok("pause", "paused")
        self.under_boot("boot-b", "run-once")
        self.ok("resume", "paused")
        self.under_boot("boot-b", "run-once")
        self.assertEqual(self.runs(), 0)
        self.under_boot("boot-c", "run-once")
        self.assertEqual(self.runs(), 1)

    @SIMULATED_BOOTS
    def test_two_schedulers_ticking_on_one_boot_start_it_once(self):
        self.under_boot("boot-a", "add", "once", "--cron", "@reboot", "--on-host", self.host, "--shell", "--",
                        "echo run >> %s" % self.marker)
        procs = [subprocess.Popen(self.boot_argv("boot-b", ["run-once"]), env=self.environment(None, None, False),
                                  cwd=self.tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE) for _ in range(4)]
        for proc in procs:
            proc.communicate(timeout=60)
        self.under_boot("boot-b", "run-once")
        self.assertEqual(self.runs(), 1)

    @SIMULATED_BOOTS
    def test_the_loop_runs_it_at_its_first_pass_after_the_boot(self):
        self.under_boot("boot-a", "add", "looped", "--cron", "@reboot", "--on-host", self.host, "--shell", "--",
                        "echo run >> %s" % self.marker)
        loop = subprocess.Popen(self.boot_argv("boot-b", ["run", "--tick", "1s"]),
                                env=self.environment(None, None, False), cwd=self.tmp, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.wait_for_file(self.marker)
            deadline = time.monotonic() + 20
            while [r["status"] for r in self.history("looped")] != ["succeeded"]:
                self.assertLess(time.monotonic(), deadline, "the run never ended")
                time.sleep(0.05)
        finally:
            loop.terminate()
            loop.wait(timeout=60)
        self.under_boot("boot-b", "run-once")
        self.assertEqual(self.runs(), 1)


class EnvFileTest(TaskdTestCase):
    def write_env(self, text, name="app.env", mode=0o600):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        os.chmod(path, mode)
        return path

    def add_reporting(self, name, env_file, *args):
        marker = os.path.join(self.tmp, name + ".ran")
        self.add(name, "--manual", "--env-file", env_file, *args, "--shell", "--",
                 'touch %s; echo "token=$SECRET_TOKEN mode=$MODE task=$TASKD_TASK"' % marker)
        return marker

    def run_fails(self, name, env_file, *reason_fragments):
        """The run of `name`, with --env-file `env_file`, fails before it starts."""
        marker = self.add_reporting(name, env_file)
        self.ok("trigger", name)
        code, out, err = self.run_taskd("run-once", timeout=20)
        self.assertEqual(code, 0, err)
        (run,) = self.history(name)
        self.assertEqual(run["status"], "failed")
        for fragment in reason_fragments:
            self.assertIn(fragment, run["reason"])
        self.assertFalse(os.path.exists(marker), "the command ran")
        self.assertNotIn(SECRET, out + err + run["reason"])
        return run["reason"]

    def test_the_files_variables_reach_the_run_and_env_and_taskd_variables_win(self):
        path = self.write_env("""\
            # the service's keys
            SECRET_TOKEN=%s
            MODE=from-file

            TASKD_TASK=from-file
            """ % SECRET)
        self.add_reporting("app", path, "--env", "MODE=from-env")
        self.ok("trigger", "app")
        self.run_once()
        self.assertEqual(self.logs("app").strip(), "token=%s mode=from-env task=app" % SECRET)

    def test_show_export_and_json_name_the_file_never_its_values(self):
        path = self.write_env("SECRET_TOKEN=%s\n" % SECRET)
        self.add_reporting("app", path)
        shown = self.ok("show", "app")
        self.assertRegex(shown, r"\nenv file +%s\n" % path)
        exported = self.ok("export")
        self.assertIn('env_file = "%s"' % path, exported)
        self.assertEqual(self.task("app")["env_file"], path)
        listed = self.ok("--json", "list")
        for text in (shown, exported, listed):
            self.assertNotIn(SECRET, text)
        self.ok("trigger", "app")
        self.run_once()
        for text in (self.ok("--json", "history", "app"), self.ok("show", "app")):
            self.assertNotIn(SECRET, text)
        # A task file's env_file, and apply of what export wrote.
        self.ok("rm", "app")
        tasks = os.path.join(self.tmp, "tasks.toml")
        with open(tasks, "w") as f:
            f.write(exported)
        self.ok("apply", tasks)
        self.assertEqual(self.task("app")["env_file"], path)

    def test_a_relative_path_is_refused(self):
        code, _, err = self.run_taskd("add", "rel", "--manual", "--env-file", "app.env", "--", "true")
        self.assertEqual(code, 65, err)
        self.assertIn('--env-file: "app.env" is not an absolute path', err)
        self.assertEqual(self.tasks(), [])

    def test_a_file_others_or_its_group_may_write_fails_the_run(self):
        path = self.write_env("SECRET_TOKEN=%s\n" % SECRET, mode=0o620)
        self.run_fails("grp", path, "env file %s: its group or others may write it" % path)

    def test_a_missing_file_fails_the_run(self):
        path = os.path.join(self.tmp, "missing.env")
        self.run_fails("missing", path, "env file %s: cannot open it: No such file or directory" % path)

    def test_a_directory_fails_the_run(self):
        path = os.path.join(self.tmp, "dir.env")
        os.mkdir(path)
        self.run_fails("dir", path, "env file %s: is a directory" % path)

    def test_a_fifo_fails_the_run_without_waiting_for_a_writer(self):
        path = os.path.join(self.tmp, "fifo.env")
        os.mkfifo(path, 0o600)
        self.run_fails("fifo", path, "env file %s: is not a regular file" % path)

    @AS_ROOT
    def test_a_link_to_a_file_of_another_user_fails_the_run(self):
        target = self.write_env("SECRET_TOKEN=%s\n" % SECRET, name="theirs.env")
        os.chown(target, NOBODY.pw_uid, NOBODY.pw_gid)
        link = os.path.join(self.tmp, "link.env")
        os.symlink(target, link)
        self.run_fails("link", link, "env file %s: is a symbolic link" % link)

    @AS_ROOT
    def test_a_file_of_another_user_fails_the_run_unless_it_is_the_tasks_user(self):
        path = self.write_env("SECRET_TOKEN=%s\n" % SECRET, name="nobody.env")
        os.chown(path, NOBODY.pw_uid, NOBODY.pw_gid)
        self.run_fails("theirs", path, "env file %s: it is owned by uid %d" % (path, NOBODY.pw_uid))
        for directory in (self.tmp, self.env["TMPDIR"]):
            os.chmod(directory, 0o711)  # the run files of nobody's run
        self.add("as-nobody", "--manual", "--user", "nobody", "--env-file", path, "--shell", "--",
                 'echo "token=$SECRET_TOKEN"')
        self.ok("trigger", "as-nobody")
        self.run_once()
        self.assertEqual(self.logs("as-nobody").strip(), "token=" + SECRET)

    def test_a_bad_line_names_the_file_and_its_number_not_its_text(self):
        path = self.write_env("A=1\nexport SECRET_TOKEN=%s\n" % SECRET)
        reason = self.run_fails("bad", path, "%s:2: not a line NAME=VALUE" % path)
        self.assertNotIn("export", reason)

    def test_a_file_over_64_kib_fails_the_run(self):
        path = self.write_env("A=%s\n" % ("x" * (64 * 1024)))
        self.run_fails("big", path, "env file %s: it is larger than 64 KiB" % path)


if __name__ == "__main__":
    unittest.main()
