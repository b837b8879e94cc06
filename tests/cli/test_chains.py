"""Chains: --after TASK[:finished] (taskd(1), "Chains"): a task that runs when
another's run has reached its final outcome, with TASKD_UPSTREAM_RUN_ID."""

import os
import unittest

from taskd_test import TaskdTestCase

ADDED = "2026-11-21 07:30:00"
T1 = "2026-11-21 08:00:01"  # the upstream's first hourly slot (08:00) has come
T2 = "2026-11-21 08:00:02"


class ChainTest(TaskdTestCase):
    def add_at(self, name, *args):
        return self.add(name, *args, faketime=ADDED)

    def add_upstream(self, name, *command, retry="0s"):
        self.add_at(name, "--every", "1h", "--phase", "0", "--retry", retry, "--shell", "--", *command)

    def recording(self, name):
        """A follower's command that appends its TASKD_UPSTREAM_RUN_ID (or '-') to a file."""
        path = os.path.join(self.tmp, name + ".runs")
        return path, 'echo "${TASKD_UPSTREAM_RUN_ID:--}" >> ' + path

    def lines(self, path):
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return f.read().split()

    def runs(self, name):
        return list(reversed(self.history(name)))

    def refused(self, *args, fragments=()):
        code, out, err = self.run_taskd(*args, faketime=ADDED)
        self.assertEqual(code, 65, "stdout: %s\nstderr: %s" % (out, err))
        return self.assertOneErrorLine(err, *fragments)

    def test_a_success_runs_the_follower_with_the_upstream_run_id(self):
        self.add_upstream("a", "true")
        out, command = self.recording("b")
        self.add_at("b", "--after", "a", "--shell", "--", command)
        self.run_once(faketime=T1)
        [a_run] = self.runs("a")
        [b_run] = self.runs("b")
        self.assertEqual((a_run["status"], b_run["status"]), ("succeeded", "succeeded"))
        self.assertEqual(self.lines(out), [str(a_run["id"])])
        self.assertEqual((b_run["upstream_run_id"], b_run["trigger"]), (a_run["id"], "manual"))
        self.assertIsNone(a_run["upstream_run_id"])
        # Run by hand, the follower has no upstream run.
        self.ok("trigger", "b", faketime=T2)
        self.run_once(faketime=T2)
        self.assertEqual(self.lines(out), [str(a_run["id"]), "-"])

    def test_each_step_keeps_its_own_retries_with_the_same_upstream_run(self):
        self.add_upstream("a", "true")
        marker = os.path.join(self.tmp, "b-failed-once")
        out, command = self.recording("b")
        self.add_at("b", "--after", "a", "--retry", "1m", "--shell", "--",
                    "%s; test -e %s || { touch %s; exit 1; }" % (command, marker, marker))
        after, after_command = self.recording("c")
        self.add_at("c", "--after", "b", "--shell", "--", after_command)
        self.run_once(faketime=T1)
        [a_run] = self.runs("a")
        failed, queued = self.runs("b")
        self.assertEqual((failed["status"], failed["attempt_no"]), ("failed", 1))
        self.assertEqual((queued["status"], queued["upstream_run_id"]), ("queued", a_run["id"]))
        self.assertEqual(self.lines(after), [])  # b's retry is pending: c waits
        self.run_once(faketime="2026-11-21 08:00:30")  # the ladder's 1m has not passed
        self.assertEqual([r["status"] for r in self.runs("b")], ["failed", "queued"])
        self.run_once(faketime="2026-11-21 08:01:05")
        first, retry = self.runs("b")
        self.assertEqual((retry["status"], retry["attempt_no"], retry["trigger"]), ("succeeded", 2, "manual"))
        self.assertEqual(retry["upstream_run_id"], a_run["id"])
        self.assertEqual(retry["scheduled_at"], first["scheduled_at"])
        self.assertEqual(self.lines(out), [str(a_run["id"])] * 2)
        self.assertEqual(self.lines(after), [str(retry["id"])])

    def test_a_final_failure_runs_only_the_finished_follower(self):
        self.add_upstream("a", "exit 3", retry="none")
        on_success, success_command = self.recording("on-success")
        finished, finished_command = self.recording("finished")
        self.add_at("on-success", "--after", "a", "--shell", "--", success_command)
        self.add_at("finished", "--after", "a:finished", "--shell", "--", finished_command)
        self.run_once(faketime=T1)
        [a_run] = self.runs("a")
        self.assertEqual(a_run["status"], "failed")
        self.assertEqual(self.lines(on_success), [])
        self.assertEqual(self.history("on-success"), [])
        self.assertEqual(self.lines(finished), [str(a_run["id"])])

    def test_an_attempt_that_is_retried_fires_nothing_and_its_successful_retry_fires_once(self):
        marker = os.path.join(self.tmp, "failed-once")
        self.add_upstream("a", "test -e %s || { touch %s; exit 1; }" % (marker, marker))
        on_success, success_command = self.recording("on-success")
        finished, finished_command = self.recording("finished")
        self.add_at("on-success", "--after", "a", "--shell", "--", success_command)
        self.add_at("finished", "--after", "a:finished", "--shell", "--", finished_command)
        self.run_once(faketime=T1)
        self.assertEqual([r["status"] for r in self.runs("a")], ["failed"])
        self.assertEqual((self.lines(on_success), self.lines(finished)), ([], []))
        self.run_once(faketime=T2)  # the ladder's 0s retry
        first, retry = self.runs("a")
        self.assertEqual((retry["status"], retry["trigger"]), ("succeeded", "retry"))
        self.assertEqual(self.lines(on_success), [str(retry["id"])])
        self.assertEqual(self.lines(finished), [str(retry["id"])])
        self.run_once(faketime=T2)
        self.assertEqual(len(self.history("on-success")), 1)

    def test_a_three_step_chain_runs_in_order_in_one_run_once(self):
        order = os.path.join(self.tmp, "order")
        self.add_upstream("extract", "echo extract >> " + order)
        self.add_at("transform", "--after", "extract", "--shell", "--", "echo transform >> " + order)
        self.add_at("load", "--after", "transform", "--shell", "--", "echo load >> " + order)
        self.run_once(faketime=T1)
        self.assertEqual(self.lines(order), ["extract", "transform", "load"])
        [transform] = self.runs("transform")
        [load] = self.runs("load")
        self.assertEqual(load["upstream_run_id"], transform["id"])

    def test_a_paused_followers_skipped_rows_stay_within_its_keep_runs(self):
        self.add_upstream("a", "true")
        self.add_at("paused", "--after", "a", "--keep-runs", "2", "--", "true")
        self.ok("pause", "paused", faketime=ADDED)
        for hour in range(8, 13):
            self.run_once(faketime="2026-11-21 %02d:00:01" % hour)
        self.assertEqual(len(self.runs("a")), 5)
        kept = self.runs("paused")
        self.assertEqual([run["status"] for run in kept], ["skipped", "skipped"])
        self.assertEqual([run["upstream_run_id"] for run in kept], [run["id"] for run in self.runs("a")[-2:]])

    def test_a_follower_that_cannot_run_gets_a_skipped_row_naming_the_upstream_run(self):
        self.add_upstream("a", "true")
        # Its runs stay queued here: they are for another host.
        self.add_at("busy", "--after", "a", "--on-host", "elsewhere", "--", "true")
        self.add_at("paused", "--after", "a", "--", "true")
        self.ok("trigger", "busy", faketime=ADDED)
        self.ok("pause", "paused", faketime=ADDED)
        self.run_once(faketime=T1)
        [a_run] = self.runs("a")
        queued, skipped = self.runs("busy")
        self.assertEqual((queued["status"], queued["upstream_run_id"]), ("queued", None))
        self.assertEqual((skipped["status"], skipped["upstream_run_id"]), ("skipped", a_run["id"]))
        self.assertIn("not run after a run %d" % a_run["id"], skipped["reason"])
        self.assertIn("overlap=skip", skipped["reason"])
        [paused] = self.runs("paused")
        self.assertEqual(paused["status"], "skipped")
        self.assertIn("paused", paused["reason"])

    def test_cycles_are_refused_at_add_and_edit_naming_them(self):
        self.add_at("a", "--every", "1h", "--", "true")
        self.add_at("b", "--after", "a", "--", "true")
        self.add_at("c", "--after", "b", "--", "true")
        self.refused("add", "d", "--after", "d", "--", "true", fragments=("--after: a cycle: d -> d",))
        self.refused("edit", "a", "--after", "c:finished", fragments=("--after: a cycle: a -> b -> c -> a",))
        self.assertEqual([t["name"] for t in self.tasks()], ["a", "b", "c"])
        self.assertIsNone(self.task("a")["after"])

    def test_an_upstream_that_does_not_exist_is_refused(self):
        self.refused("add", "b", "--after", "nope", "--", "true", fragments=("--after", '"nope"'))
        self.refused("add", "b", "--after", "bad name", "--", "true", fragments=("--after", "bad name"))
        self.assertEqual(self.tasks(), [])

    def test_removing_an_upstream_is_refused_unless_its_followers_go_too(self):
        self.add_at("a", "--every", "1h", "--", "true")
        self.add_at("b", "--after", "a", "--", "true")
        self.add_at("c", "--after", "a:finished", "--", "true")
        self.refused("rm", "a", fragments=("rm: a is the upstream (--after) of b, c",))
        self.refused("rm", "a", "b", fragments=("of c",))
        self.assertEqual([t["name"] for t in self.tasks()], ["a", "b", "c"])
        self.ok("edit", "c", "--after", "")
        self.assertIsNone(self.task("c")["after"])
        self.assertEqual(self.task("c")["schedule"]["kind"], "manual")
        self.ok("rm", "a", "b")
        self.assertEqual([t["name"] for t in self.tasks()], ["c"])

    def test_list_and_show_show_the_chain(self):
        self.add_at("a", "--cron", "0 3 * * *", "--tz", "UTC", "--", "true")
        self.add_at("b", "--after", "a", "--", "true")
        self.add_at("c", "--every", "1h", "--after", "a:finished", "--", "true")
        listed = self.ok("list", faketime=ADDED)
        self.assertRegex(listed, r"\nb +after a +")
        self.assertRegex(listed, r"\nc +every 1h \+ after a:finished +")
        self.assertEqual({t["name"]: t["after"] for t in self.tasks()}, {"a": None, "b": "a", "c": "a:finished"})
        self.assertIn("after a", self.ok("show", "b"))

    def test_apply_takes_an_upstream_from_the_same_file_and_refuses_cycles_and_pruned_upstreams(self):
        path = os.path.join(self.tmp, "tasks.toml")

        def write(report_after, backup_after=None, with_backup=True):
            """A file with report (after report_after) and, unless left out, backup."""
            text = '[defaults]\nowner = "me"\n\n[[task]]\nname = "report"\ncommand = ["true"]\n'
            text += 'after = "%s"\n' % report_after
            if with_backup:
                text += '\n[[task]]\nname = "backup"\ncommand = ["true"]\ncron = "0 3 * * *"\n'
                if backup_after:
                    text += 'after = "%s"\n' % backup_after
            with open(path, "w") as f:
                f.write(text)

        write("backup:finished")  # an upstream listed after its follower
        self.ok("apply", path)
        self.assertEqual(self.task("report")["after"], "backup:finished")
        self.assertEqual(self.task("report")["schedule"]["kind"], "manual")
        write("backup", backup_after="report")
        self.refused("apply", path, fragments=("after: a cycle: backup -> report -> backup",))
        self.assertEqual(self.task("report")["after"], "backup:finished")
        write("backup:finished", with_backup=False)
        self.refused("apply", "--prune", path, fragments=("apply --prune: backup is the upstream", "report"))
        self.assertEqual(sorted(t["name"] for t in self.tasks()), ["backup", "report"])

if __name__ == "__main__":
    unittest.main()
