"""--notify: a command run when a task fails, recovers or is disabled, with
the facts in its environment."""

import os
import signal
import unittest

from loop_helpers import LoopTestCase, wait_for

T0 = "2026-11-21 14:00:00"


class NotifyTest(LoopTestCase):
    def setUp(self):
        super().setUp()
        self.code_file = os.path.join(self.tmp, "exit-code")
        self.inbox = os.path.join(self.tmp, "inbox")
        os.mkdir(self.inbox)
        self.set_exit_code(1)

    def set_exit_code(self, code):
        with open(self.code_file, "w") as f:
            f.write("%d\n" % code)

    def notify_command(self):
        """Writes one file per notification, named after its run, holding its facts."""
        return ('printf "%s|%s|%s|%s|%s|%s|%s\\n" "$TASKD_NOTIFY" "$TASKD_TASK" "$TASKD_RUN_STATUS" '
                '"$TASKD_EXIT_CODE" "$TASKD_ATTEMPT_NO" "$TASKD_REASON" "$HC" > "{}/run-$TASKD_RUN_ID.tmp" && '
                'mv "{}/run-$TASKD_RUN_ID.tmp" "{}/run-$TASKD_RUN_ID"').format(self.inbox, self.inbox, self.inbox)

    def add_flaky(self, *extra):
        self.add("flaky", "--every", "1h", "--phase", "0", "--start-now", "--timeout", "1m", "--retry", "0s,0s",
                 "--env", "HC=check-42", "--notify", self.notify_command(), *extra, "--shell", "--",
                 'echo "went wrong" >&2; exit $(cat "%s")' % self.code_file, faketime=T0)

    def notification(self, run_id):
        path = os.path.join(self.inbox, "run-%d" % run_id)
        # What there is instead says which step went missing: the command, or its mv.
        self.wait_for_file(path, seen=lambda: "the inbox holds %s, the runs are %s" % (
            sorted(os.listdir(self.inbox)), [(r["id"], r["status"]) for r in self.history()]))
        with open(path) as f:
            return f.read().rstrip("\n").split("|")

    def notified_runs(self):
        return sorted(int(name[4:]) for name in os.listdir(self.inbox) if not name.endswith(".tmp"))

    def test_failed_then_silent_retries_then_recovered_then_disabled(self):
        self.add_flaky()
        self.run_once(faketime="2026-11-21 14:00:01")
        first = self.history("flaky")[0]
        self.assertEqual(self.notification(first["id"]),
                         ["failed", "flaky", "failed", "1", "1", "exit code 1: went wrong", "check-42"])

        self.run_once(faketime="2026-11-21 14:00:05")  # the retry fails too: still failing, no news
        self.set_exit_code(0)
        self.run_once(faketime="2026-11-21 14:00:10")
        runs = self.history("flaky")
        self.assertEqual([(r["status"], r["attempt_no"]) for r in runs],
                         [("succeeded", 3), ("failed", 2), ("failed", 1)])
        self.assertEqual(self.notification(runs[0]["id"])[:5], ["recovered", "flaky", "succeeded", "0", "3"])
        self.assertEqual(self.notified_runs(), [runs[2]["id"], runs[0]["id"]],
                         "the failing retry in between was not a change")

        self.set_exit_code(78)
        self.run_once(faketime="2026-11-21 15:00:01")
        last = self.history("flaky")[0]
        self.assertEqual(self.notification(last["id"])[:4], ["disabled", "flaky", "failed", "78"])
        self.assertIs(self.task("flaky")["disabled_until_update"], True)

    def test_an_exhausted_ladder_is_told_once_while_the_task_fails(self):
        self.add_flaky()
        # Two slots, each walking the whole ladder (0s, 0s). Each notification is awaited
        # before the next run-once: a new faketime wrapper removes the files of the last one,
        # which a notify command it started may still be reading as it starts.
        self.run_once(faketime="2026-11-21 14:00:01")
        self.assertEqual(self.notification(self.history("flaky")[0]["id"])[0], "failed")
        for second in ("05", "10"):
            self.run_once(faketime="2026-11-21 14:00:%s" % second)
        self.assertEqual(self.notification(self.history("flaky")[0]["id"])[0], "exhausted")
        for second in ("01", "05", "10"):
            self.run_once(faketime="2026-11-21 15:00:%s" % second)
        runs = self.history("flaky")
        self.assertEqual([(r["status"], r["attempt_no"]) for r in runs],
                         [("failed", 3), ("failed", 2), ("failed", 1)] * 2)
        self.assertIs(self.task("flaky")["disabled_until_update"], False)
        self.assertEqual(self.notification(runs[3]["id"])[:5], ["exhausted", "flaky", "failed", "1", "3"])

        self.set_exit_code(0)
        self.run_once(faketime="2026-11-21 16:00:01")
        recovered = self.history("flaky")[0]
        self.assertEqual(self.notification(recovered["id"])[:3], ["recovered", "flaky", "succeeded"])
        self.assertEqual(self.notified_runs(), [runs[5]["id"], runs[3]["id"], recovered["id"]],
                         "the second ladder that ran out was no news")

    def test_with_disable_when_exhausted_the_ladder_that_runs_out_disables_and_tells_it(self):
        self.add_flaky("--disable-when-exhausted")
        for second in ("01", "05", "10"):
            self.run_once(faketime="2026-11-21 14:00:%s" % second)
        last = self.history("flaky")[0]
        self.assertEqual(self.notification(last["id"])[:5], ["disabled", "flaky", "failed", "1", "3"])
        task = self.task("flaky")
        self.assertIs(task["disabled_until_update"], True)
        self.assertEqual(task["disabled_reason"], "Cannot run flaky after 3 attempt(s): exit code 1: went wrong")

    def test_a_task_without_notify_or_without_a_change_starts_nothing(self):
        self.set_exit_code(0)
        self.add_flaky()
        self.run_once(faketime="2026-11-21 14:00:01")
        self.run_once(faketime="2026-11-21 15:00:01")
        self.assertEqual([r["status"] for r in self.history("flaky")], ["succeeded", "succeeded"])
        self.assertEqual(self.notified_runs(), [])

    def test_edit_sets_and_clears_notify_and_show_lists_it(self):
        self.add("quiet", "--every", "1h", "--", "true")
        self.ok("edit", "quiet", "--notify", "mail -s taskd me")
        self.assertEqual(self.task("quiet")["notify"], "mail -s taskd me")
        self.assertIn("mail -s taskd me", self.ok("show", "quiet"))
        self.ok("edit", "quiet", "--notify", "")
        self.assertEqual(self.task("quiet")["notify"], "")

    def test_the_daemon_reaps_its_notify_commands(self):
        self.add("broken", "--every", "1h", "--start-now", "--retry", "none", "--notify",
                 'echo "$TASKD_NOTIFY" > "%s/broken"' % self.inbox, "--", "false")
        proc, _ = self.start("run", "--tick", "1s")
        self.wait_for_file(os.path.join(self.inbox, "broken"))

        def no_zombie_children():
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open("/proc/%s/stat" % pid) as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if fields[0] == "Z" and int(fields[1]) == proc.pid:
                    return False
            return True

        wait_for(no_zombie_children, 10, "taskd run to reap its notify command")
        proc.send_signal(signal.SIGTERM)
        self.assertEqual(proc.wait(timeout=30), 0)


if __name__ == "__main__":
    unittest.main()
