"""Resource limits of a task's runs (--memory-max, --cpu-weight, --tasks-max;
task file keys memory_max, cpu_weight, tasks_max; taskd(1), Containment):
they go through show, export, apply and edit; a bad value is refused and
nothing is written; a run that cannot have its limits fails at once, as a
command that cannot start does, and starts nothing. Where this machine lets
taskd make cgroups, the limits reach the run's cgroup when the cgroup taskd
runs in enables their controllers, and the run is refused when it does not
(detected, not assumed: each test is skipped where its case cannot arise)."""

import os
import re
import unittest

from taskd_test import STORE, TaskdTestCase, cgroup2_mount

T0 = "2026-11-21 14:00:00"
T1 = "2026-11-21 14:00:05"

# Per controller: the option and a value, the file in a run's cgroup, what
# taskd writes there, and what the file holds without a limit.
LIMITS = {
    "memory": ("--memory-max", "64M", "memory.max", "67108864", "max"),
    "pids": ("--tasks-max", "32", "pids.max", "32", "max"),
    "cpu": ("--cpu-weight", "300", "cpu.weight", "300", "100"),
}

BAD_VALUES = [
    ("--memory-max", "12Q"),
    ("--memory-max", "0"),
    ("--memory-max", "1.5G"),
    ("--memory-max", "8388608T"),
    ("--cpu-weight", "0"),
    ("--cpu-weight", "10001"),
    ("--cpu-weight", "max"),
    ("--tasks-max", "0"),
    ("--tasks-max", "4194305"),
    ("--tasks-max", "lots"),
]


def own_cgroup():
    """The directory of this process's cgroup (taskd's, as it runs here), or None."""
    mount = cgroup2_mount()
    with open("/proc/self/cgroup") as groups:
        for line in groups:
            if mount and line.startswith("0::"):
                return os.path.join(mount, line[3:].strip().lstrip("/")).rstrip("/")
    return None


def subtree_control(cgroup):
    with open(os.path.join(cgroup, "cgroup.subtree_control")) as f:
        return f.read().split()


def controllers_taskd_could_use():
    """The controllers of LIMITS that a cgroup made in taskd's cgroup gets (its
    cgroup.subtree_control enables them), where taskd may make one there."""
    own = own_cgroup()
    if not own or not os.access(own, os.W_OK):
        return []
    return [c for c in LIMITS if c in subtree_control(own)]


def limits_of(task):
    return task["memory_max"], task["cpu_weight"], task["tasks_max"]


class LimitsTest(TaskdTestCase):
    def cgroups_possible(self):
        code, _, err = self.run_taskd("run-once", "--containment", "cgroup", db=os.path.join(self.tmp, "probe.db"))
        self.assertIn(code, (0, 69), err)
        return code == 0

    def add_toucher(self, name, created, *limits):
        self.add(name, "--every", "1h", "--phase", "0", "--start-now", *limits, "--", "touch", created, faketime=T0)

    def test_the_limits_go_through_show_export_apply_and_edit(self):
        self.add("batch", "--every", "1h", "--memory-max", "512M", "--cpu-weight", "200", "--tasks-max", "64", "--",
                 "true")
        self.assertEqual(limits_of(self.task("batch")), (512 << 20, 200, 64))
        self.assertRegex(self.ok("show", "batch"), r"\nlimits +--memory-max 512M --cpu-weight 200 --tasks-max 64\n")
        exported = self.ok("export")
        for line in ('memory_max = "512M"', "cpu_weight = 200", "tasks_max = 64"):
            self.assertIn("\n" + line + "\n", exported)
        path = os.path.join(self.tmp, "tasks.toml")
        with open(path, "w") as f:
            f.write(exported)
        self.ok("rm", "batch")
        self.ok("apply", path)
        self.assertEqual(limits_of(self.task("batch")), (512 << 20, 200, 64))
        self.assertEqual(self.ok("export"), exported)

        with open(path, "w") as f:
            f.write(exported.replace('memory_max = "512M"', "memory_max = 1073741824"))
        self.assertIn("~ batch: memory_max\n", self.ok("apply", path))
        self.assertEqual(self.task("batch")["memory_max"], 1 << 30)

        self.ok("edit", "batch", "--memory-max", "max", "--cpu-weight", "", "--tasks-max", "max")
        self.assertEqual(limits_of(self.task("batch")), (None, None, None))
        self.assertNotIn("limits", self.ok("show", "batch"))
        self.assertNotRegex(self.ok("export"), r"memory_max|cpu_weight|tasks_max")
        self.ok("edit", "batch", "--tasks-max", "5")
        self.assertEqual(limits_of(self.task("batch")), (None, None, 5))

    def test_a_bad_limit_is_refused_naming_the_option_and_nothing_is_written(self):
        for option, value in BAD_VALUES:
            with self.subTest(option=option, value=value):
                code, out, err = self.run_taskd("add", "x", "--every", "1h", option, value, "--", "true")
                self.assertEqual((code, out), (65, ""), err)
                self.assertOneErrorLine(err, option, '"%s"' % value)
                if STORE == "sqlite":
                    self.assertFalse(os.path.exists(self.db))
        self.add("kept", "--every", "1h", "--tasks-max", "7", "--", "true")
        before = self.tasks()
        for option, value in BAD_VALUES:
            with self.subTest(edit=option, value=value):
                code, out, err = self.run_taskd("edit", "kept", option, value)
                self.assertEqual((code, out), (65, ""), err)
                self.assertOneErrorLine(err, option, '"%s"' % value)
                self.assertEqual(self.tasks(), before)

    def test_a_bad_limit_in_a_task_file_is_pointed_at_and_nothing_is_applied(self):
        path = os.path.join(self.tmp, "tasks.toml")
        with open(path, "w") as f:
            f.write('[[task]]\nname = "good"\nevery = "1h"\ncommand = ["true"]\n\n'
                    '[[task]]\nname = "bad"\nevery = "1h"\ncommand = ["true"]\ncpu_weight = 0\n')
        code, out, err = self.run_taskd("apply", path)
        self.assertEqual((code, out), (65, ""), err)
        self.assertOneErrorLine(err, path + ":10:14:", 'task "bad"', '--cpu-weight "0"')
        with open(path, "w") as f:
            f.write('[[task]]\nname = "bad"\nevery = "1h"\ncommand = ["true"]\nmemory_max = true\n')
        code, out, err = self.run_taskd("apply", path)
        self.assertEqual((code, out), (65, ""), err)
        self.assertOneErrorLine(err, path + ":5:14:", "memory_max", "a whole number or a string")
        self.assertEqual(self.tasks(), [])

    def test_add_warns_where_taskd_could_not_apply_the_limits_and_stores_the_task(self):
        code, _, err = self.run_taskd("add", "limited", "--every", "1h", "--memory-max", "64M", "--", "true")
        self.assertEqual(code, 0, err)
        self.assertEqual(self.task("limited")["memory_max"], 64 << 20)
        if "memory" in controllers_taskd_could_use():
            self.assertEqual(err, "")
        else:
            self.assertOneErrorLine(err, "taskd: warning: limited: --memory-max 64M needs ", "memory controller",
                                    "its runs fail where taskd cannot apply its limits")
        code, _, err = self.run_taskd("add", "free", "--every", "1h", "--", "true")
        self.assertEqual((code, err), (0, ""))

    def test_a_run_whose_limits_cannot_be_applied_fails_as_a_start_failure_and_starts_nothing(self):
        created = os.path.join(self.tmp, "created")
        self.add_toucher("limited", created, "--tasks-max", "8")
        self.add("unstartable", "--every", "1h", "--phase", "0", "--start-now", "--", "/nonexistent/program",
                 faketime=T0)
        code, out, err = self.run_taskd("run-once", "--containment", "subreaper", faketime=T1)
        self.assertEqual(code, 0, err)
        reason = ("--tasks-max 8 needs a cgroup with the pids controller: this worker contains its runs by "
                  "subreaper (--containment subreaper)")
        self.assertRegex(out, r"\blimited run \d+ failed: %s\n" % re.escape(reason))
        [run] = self.history("limited")
        self.assertEqual(run["reason"], reason)
        self.assertFalse(os.path.exists(created), "the command ran")
        [unstartable] = self.history("unstartable")
        same = ("status", "exit_code", "signal", "attempt_no", "trigger", "cpu_seconds", "peak_memory_bytes")
        self.assertEqual({k: run[k] for k in same}, {k: unstartable[k] for k in same})
        self.assertEqual(run["status"], "failed")
        limited, other = self.task("limited"), self.task("unstartable")
        for field in ("last_status", "attempt_no", "next_run_at", "disabled_until_update"):
            self.assertEqual(limited[field], other[field], field)

    def test_a_run_is_refused_where_taskds_cgroups_lack_the_controller(self):
        if not self.cgroups_possible():
            self.skipTest("this machine lets taskd make no cgroup")
        missing = [c for c in LIMITS if c not in controllers_taskd_could_use()]
        if not missing:
            self.skipTest("taskd's cgroup enables memory, pids and cpu for the cgroups in it")
        option, value = LIMITS[missing[0]][:2]
        created = os.path.join(self.tmp, "created")
        self.add_toucher("limited", created, option, value)
        self.run_once("--containment", "cgroup", faketime=T1)
        [run] = self.history("limited")
        self.assertEqual(run["status"], "failed")
        self.assertRegex(run["reason"], r"^%s %s needs the cgroup %s controller, which \S+/taskd-\d+-\d+ does not "
                                        r"enable for the cgroups in it \(" % (option, value, missing[0]))
        self.assertFalse(os.path.exists(created), "the command ran")

    def test_the_limits_reach_the_runs_cgroup_and_leave_with_its_run(self):
        if not self.cgroups_possible():
            self.skipTest("this machine lets taskd make no cgroup")
        usable = controllers_taskd_could_use()
        if not usable:
            own = own_cgroup()
            self.skipTest("taskd's cgroup %s enables none of %s for the cgroups in it (cgroup.subtree_control: %r)"
                          % (own, ", ".join(LIMITS), " ".join(subtree_control(own))))
        files = " ".join('"$g/%s"' % LIMITS[c][2] for c in usable)
        options = [word for c in usable for word in LIMITS[c][:2]]
        for name, priority, limits in (("limited", "2", options), ("free", "1", [])):
            script = 'g="%s$(sed -n "s/^0:://p" /proc/self/cgroup)"; cat %s > %s' % (
                cgroup2_mount(), files, os.path.join(self.tmp, name))
            self.add(name, "--every", "1h", "--phase", "0", "--start-now", "--priority", priority, *limits, "--shell",
                     "--", script, faketime=T0)
        self.run_once("--containment", "cgroup", "--concurrency", "1", faketime=T1)
        self.assertEqual([r["status"] for r in self.history()], ["succeeded", "succeeded"])
        for name, column in (("limited", 3), ("free", 4)):
            with open(os.path.join(self.tmp, name)) as f:
                self.assertEqual(f.read().split(), [LIMITS[c][column] for c in usable], name)


if __name__ == "__main__":
    unittest.main()
