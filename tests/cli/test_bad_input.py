"""Bad input: the documented exit code, one error line on stderr that names
what is wrong, nothing on stdout, and nothing written."""

import os
import unittest

from taskd_test import TaskdTestCase

# (arguments after `taskd --db DB`, exit code, fragments the error line names)
BAD_ADDS = [
    (["add", "x", "--every", "5x", "--", "true"], 65, ["--every", "5x"]),
    (["add", "x", "--every", "0s", "--", "true"], 65, ["--every"]),
    (["add", "x", "--every", "-5s", "--", "true"], 65, ["--every", "-5s"]),
    (["add", "x", "--every", "1h", "--bogus", "--", "true"], 2, ["--bogus"]),
    (["add", "x", "--every", "1h", "--"], 2, ["no program"]),
    (["add", "x", "--every", "1h"], 2, ["no program"]),
    (["add", "x", "--", "true"], 2, ["--every"]),
    (["add", "a b", "--every", "1h", "--", "true"], 65, ["a b"]),
    (["add", "", "--every", "1h", "--", "true"], 65, ["name"]),
    (["add", "a;b", "--every", "1h", "--", "true"], 65, ["a;b"]),
    (["add", "n" * 129, "--every", "1h", "--", "true"], 65, ["128"]),
    (["add", "x", "--every", "1h", "--timeout", "0s", "--", "true"], 65, ["--timeout"]),
    (["add", "x", "--every", "1h", "--timeout", "soon", "--", "true"], 65, ["--timeout", "soon"]),
    (["add", "x", "--every", "1h", "--kill-grace", "5x", "--", "true"], 65, ["--kill-grace", "5x"]),
    (["add", "x", "--every", "1h", "--tolerance", "1h", "--", "true"], 65, ["--tolerance", "1h"]),
    (["add", "x", "--every", "1h", "--tolerance", "2h", "--", "true"], 65, ["--tolerance", "2h"]),
    (["add", "x", "--every", "1h", "--phase", "1h", "--", "true"], 65, ["--phase", "1h"]),
    (["add", "x", "--every", "1h", "--retry", "5m,1m", "--", "true"], 65, ["--retry", "5m,1m"]),
    (["add", "x", "--every", "1h", "--retry", "1m,,5m", "--", "true"], 65, ["--retry"]),
    (["add", "x", "--every", "1h", "--permanent-exit", "0", "--", "true"], 65, ["--permanent-exit", "0"]),
    (["add", "x", "--every", "1h", "--permanent-exit", "256", "--", "true"], 65, ["--permanent-exit", "256"]),
    (["add", "x", "--env", "NOEQUALS", "--every", "1h", "--", "true"], 65, ["--env", "NOEQUALS"]),
    (["add", "x", "--env", "1X=2", "--every", "1h", "--", "true"], 65, ["--env", "1X=2"]),
    (["add", "x", "--every", "1h", "--priority", "high", "--", "true"], 2, ["--priority"]),
    (["--bogus", "list"], 2, ["--bogus"]),
    ([], 2, ["subcommand"]),
]


class BadInputTest(TaskdTestCase):
    def assertRejected(self, args, code, fragments, **kwargs):
        rc, out, err = self.run_taskd(*args, **kwargs)
        self.assertEqual(rc, code, "taskd %s\nstdout: %s\nstderr: %s" % (args, out, err))
        self.assertEqual(out, "")
        self.assertOneErrorLine(err, *fragments)

    def test_bad_add_writes_no_database(self):
        for args, code, fragments in BAD_ADDS:
            with self.subTest(args=args):
                self.assertRejected(args, code, fragments)
                self.assertFalse(os.path.exists(self.db), "taskd %s created the database" % args)

    def test_bad_add_leaves_an_existing_database_unchanged(self):
        self.add("x-existing", "--every", "1h", "--", "true")
        before = self.tasks()
        for args, code, fragments in BAD_ADDS:
            with self.subTest(args=args):
                self.assertRejected(args, code, fragments)
                self.assertEqual(self.tasks(), before)

    def test_duplicate_name_is_refused_and_the_existing_task_unchanged(self):
        self.add("dup", "--every", "1h", "--owner", "first", "--", "echo", "one")
        before = self.tasks()
        self.assertRejected(["add", "dup", "--every", "5m", "--owner", "second", "--", "echo", "two"], 65,
                            ['"dup"', "already exists"])
        self.assertEqual(self.tasks(), before)

    def test_unknown_task_in_show_history_logs(self):
        self.add("known", "--every", "1h", "--start-now", "--", "true")
        self.run_once()
        before = (self.tasks(), self.history())
        for verb in ("show", "history", "logs", "pause", "resume", "rm"):
            with self.subTest(verb=verb):
                self.assertRejected([verb, "unknown-task"], 65, [verb, '"unknown-task"'])
                self.assertEqual((self.tasks(), self.history()), before)

    def test_rm_of_two_names_with_one_unknown_removes_nothing(self):
        self.add("one", "--every", "1h", "--", "true")
        self.add("two", "--every", "1h", "--", "true")
        before = self.tasks()
        self.assertRejected(["rm", "one", "nope", "two"], 65, ['"nope"'])
        self.assertEqual(self.tasks(), before)

    def test_pause_of_two_names_with_one_unknown_pauses_nothing(self):
        self.add("one", "--every", "1h", "--", "true")
        before = self.tasks()
        self.assertRejected(["pause", "one", "nope"], 65, ['"nope"'])
        self.assertEqual(self.tasks(), before)

    def test_rm_and_pause_need_names_or_a_selector(self):
        self.add("one", "--every", "1h", "--", "true")
        before = self.tasks()
        self.assertRejected(["rm"], 2, ["--owner"])
        self.assertRejected(["pause"], 2, ["--group"])
        self.assertRejected(["rm", "one", "--owner", "x"], 2, ["--owner"])
        self.assertEqual(self.tasks(), before)

    def test_logs_of_a_task_that_has_not_run(self):
        self.add("idle", "--every", "1h", "--", "true")
        self.assertRejected(["logs", "idle"], 65, ['"idle"', "not run"])

    def test_history_limit_must_be_positive(self):
        self.add("one", "--every", "1h", "--", "true")
        self.assertRejected(["history", "--limit", "0"], 2, ["--limit"])

    def test_unknown_task_on_a_missing_database_writes_nothing(self):
        for verb in ("show", "history", "logs", "rm"):
            with self.subTest(verb=verb):
                db = os.path.join(self.tmp, "new", verb + ".db")
                self.assertRejected([verb, "unknown-task"], 65, ['"unknown-task"'], db=db)
                self.assertFalse(os.path.exists(db), "taskd %s created the database" % verb)

    def test_unknown_command_is_named(self):
        self.assertRejected(["frobnicate"], 2, ["frobnicate"])

    def test_error_about_a_non_ascii_name_is_valid_utf8(self):
        rc, out, err = self.run_taskd("add", "caf\u00e9", "--every", "1h", "--", "true")
        self.assertEqual(rc, 65)
        err.encode("utf-8")  # raises on the lone byte taskd printed
        self.assertOneErrorLine(err, "caf\u00e9")


if __name__ == "__main__":
    unittest.main()
