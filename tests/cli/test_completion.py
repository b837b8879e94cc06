"""Bash completion generated from the command-line definition: a valid
script that knows every command, and completes options and task names."""

import re
import subprocess
import unittest

from taskd_test import TASKD_BIN, TaskdTestCase


class CompletionTest(TaskdTestCase):
    def script(self):
        path = self.tmp + "/taskd.bash"
        with open(path, "w") as f:
            f.write(self.ok("completion", "bash", db=None))
        return path

    def complete(self, *words):
        """COMPREPLY of the script for the command line `taskd --db DB WORDS…`, the last word being completed."""
        line = [TASKD_BIN, "--db", self.db, *words]
        program = 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _taskd; printf "%s\\n" "${COMPREPLY[@]}"'
        proc = subprocess.run(["bash", "-c", program, "bash", self.script(), *line], env=self.env, cwd=self.tmp,
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stderr, "")
        return [word for word in proc.stdout.splitlines() if word]

    def test_the_script_is_valid_bash_and_knows_every_command(self):
        path = self.script()
        subprocess.run(["bash", "-n", path], check=True)
        help_text = self.ok("--help", db=None)
        commands = re.findall(r"^  ([a-z][a-z-]*)  ", help_text.split("Subcommands:")[1], re.M)
        self.assertIn("import-crontab", commands)
        self.assertIn("completion", commands)
        self.assertGreater(len(commands), 10)
        with open(path) as f:
            text = f.read()
        for command in commands:
            self.assertRegex(text, r"\n    %s\) words=" % re.escape(command))

    def test_commands_and_options_complete(self):
        self.assertEqual(self.complete("imp"), ["import-crontab"])
        self.assertEqual(self.complete("compl"), ["completion"])
        self.assertEqual(self.complete("list", "--ab"), ["--absolute"])
        self.assertEqual(self.complete("__"), [], "hidden commands are not offered")
        self.assertEqual(self.complete("add", "x", "--every", ""), [], "a value is not guessed")

    def test_task_names_complete_from_the_database(self):
        self.add("backup-home", "--every", "1h", "--", "true")
        self.add("backup-db", "--every", "1h", "--", "true")
        self.add("report", "--every", "1h", "--", "true")
        self.assertEqual(sorted(self.complete("show", "back")), ["backup-db", "backup-home"])
        self.assertEqual(sorted(self.complete("--json", "rm", "report", "")), ["backup-db", "backup-home", "report"])
        self.assertEqual(self.complete("add", "back"), [], "add names a new task")

    def test_only_bash(self):
        code, _, err = self.run_taskd("completion", "fish", db=None)
        self.assertEqual(code, 2)
        self.assertOneErrorLine(err, "only bash")


if __name__ == "__main__":
    unittest.main()
