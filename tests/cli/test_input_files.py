"""What apply and import-crontab read: a regular file (and, for
import-crontab, standard input) of at most 16 MiB. Anything else is refused
at once with exit 65, one error line that names it, and nothing written:
nothing waits for a FIFO's writer, and nothing is read past the limit."""

import os
import subprocess
import unittest

from taskd_test import STORE, TaskdTestCase

LIMIT = 16 * 1024 * 1024
# A refusal takes milliseconds; the bound keeps a command that waits (for a
# FIFO's writer) or reads on (/dev/zero) from hanging the suite.
PROMPTLY = 20
COMMANDS = ("apply", "import-crontab")
TASK_FILE = '[[task]]\nname = "x"\ncommand = ["true"]\nevery = "5m"\n'
CRONTAB = "@daily date\n"


class InputFilesTest(TaskdTestCase):
    def assertNothingWritten(self):
        if STORE == "sqlite":
            self.assertFalse(os.path.exists(self.db), "a refused input created the database")
        else:
            self.assertEqual(self.tasks(), [])

    def assertRefused(self, args, *fragments, **kwargs):
        code, out, err = self.run_taskd(*args, timeout=PROMPTLY, **kwargs)
        self.assertEqual(code, 65, "taskd %s\nstdout: %s\nstderr: %s" % (" ".join(args), out, err))
        self.assertEqual(out, "")
        self.assertOneErrorLine(err, *fragments)
        self.assertNothingWritten()

    def assertRefusedByBoth(self, path, why):
        for command in COMMANDS:
            with self.subTest(command=command):
                self.assertRefused([command, path], "cannot read " + path, why)

    def padded(self, name, text, size):
        """A file of `size` bytes: `text`, then a comment line."""
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text + "#" * (size - len(text) - 1) + "\n")
        return path

    def test_a_character_device_is_refused_unread(self):
        self.assertRefusedByBoth("/dev/zero", "it is a character device, not a regular file")

    def test_a_fifo_is_refused_without_waiting_for_a_writer(self):
        fifo = os.path.join(self.tmp, "fifo")
        os.mkfifo(fifo)
        self.assertRefusedByBoth(fifo, "it is a FIFO, not a regular file")

    def test_a_directory_is_refused(self):
        self.assertRefusedByBoth(self.tmp, "it is a directory, not a regular file")

    def test_a_file_that_cannot_be_read_is_bad_input(self):
        self.assertRefusedByBoth("/proc/self/mem", "Input/output error")

    def test_a_file_over_the_limit_is_refused(self):
        for command, text in (("apply", TASK_FILE), ("import-crontab", CRONTAB)):
            with self.subTest(command=command):
                path = self.padded(command, text, LIMIT + 1)
                self.assertRefused([command, path], "cannot read " + path, "larger than 16 MiB")

    def test_a_file_of_exactly_the_limit_is_read(self):
        out = self.ok("apply", "--dry-run", self.padded("tasks.toml", TASK_FILE, LIMIT))
        self.assertIn("1 added", out)
        out = self.ok("import-crontab", "--dry-run", self.padded("crontab", CRONTAB, LIMIT))
        self.assertIn("would import 1 task(s)", out)

    def test_standard_input_over_the_limit_is_refused(self):
        self.assertRefused(["import-crontab", "-"], "cannot read standard input", "larger than 16 MiB",
                           input=CRONTAB + "#" * LIMIT)

    def test_endless_standard_input_is_read_no_further_than_the_limit(self):
        with open("/dev/zero", "rb") as zero:
            proc = subprocess.run(self.command_line(["import-crontab", "-"]), env=self.env, cwd=self.tmp, stdin=zero,
                                  capture_output=True, timeout=PROMPTLY)
        self.assertEqual(proc.returncode, 65, proc.stderr)
        self.assertOneErrorLine(proc.stderr.decode(), "cannot read standard input", "larger than 16 MiB")
        self.assertNothingWritten()


if __name__ == "__main__":
    unittest.main()
