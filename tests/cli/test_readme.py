"""The README's "Use" section, run as written, in the environment cron gives a job.

Each shell block's commands run one by one under /bin/sh with cron's
environment (HOME, LOGNAME, SHELL, PATH=/usr/bin:/bin and nothing else; the
directory of a `taskd` link goes first, where the package's /usr/bin/taskd
would be), in the home directory as cron runs them. The crontab block's line
runs after each shell block, as cron's next minute would. Every command must
succeed; `check` is a monitoring plugin whose exit status is its verdict.
"""

import os
import re
import subprocess
import unittest

from taskd_test import TASKD_BIN, TaskdTestCase

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")

# What `crontab -l` prints for the import examples.
USER_CRONTAB = """MAILTO=me@example.com
*/10 * * * * /usr/bin/true
30 4 * * 1 echo weekly
"""


def use_section():
    with open(README) as f:
        text = f.read()
    start = text.index("\n## Use")
    # Up to its first subsection ("On a server" installs a package).
    end = min(text.index(mark, start + 1) for mark in ("\n## ", "\n### "))
    return text[start:end]


def blocks(section):
    """(language, lines) of each fenced block, in order."""
    return [(lang, body.splitlines()) for lang, body in re.findall(r"```(\w*)\n(.*?)```", section, re.S)]


def commands(lines):
    """The command lines of a shell block: what is not a comment or a continued comment."""
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


class ReadmeUseSectionTest(TaskdTestCase):
    def setUp(self):
        super().setUp()
        self.home = self.env["HOME"]
        bin_dir = os.path.join(self.tmp, "bin")
        os.mkdir(bin_dir)
        os.symlink(TASKD_BIN, os.path.join(bin_dir, "taskd"))
        self.write_executable(os.path.join(bin_dir, "crontab"), '#!/bin/sh\n[ "$1" = -l ] && cat "$HOME/my-crontab"\n')
        with open(os.path.join(self.home, "my-crontab"), "w") as f:
            f.write(USER_CRONTAB)
        os.mkdir(os.path.join(self.home, "billing"))
        self.write_executable(os.path.join(self.home, "billing", "send-invoices"), "#!/bin/sh\necho invoices sent\n")
        self.cron_env = {"HOME": self.home, "LOGNAME": "root", "SHELL": "/bin/sh", "PATH": bin_dir + ":/usr/bin:/bin"}
        for sanitizer in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
            if sanitizer in os.environ:
                self.cron_env[sanitizer] = os.environ[sanitizer]

    @staticmethod
    def write_executable(path, text):
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)

    def sh(self, command):
        proc = subprocess.run(["/bin/sh", "-c", command], env=self.cron_env, cwd=self.home, capture_output=True,
                              encoding="utf-8", errors="surrogateescape", stdin=subprocess.DEVNULL, timeout=120)
        return proc.returncode, proc.stdout, proc.stderr

    def test_every_command_of_the_use_section_works_from_cron(self):
        found = blocks(use_section())
        cron_lines = [line for lang, lines in found if lang == "" for line in lines if line.startswith("* * * * * ")]
        self.assertEqual(len(cron_lines), 1, found)
        tick = cron_lines[0][len("* * * * * "):].replace("/usr/bin/taskd", "taskd")
        ran = []
        for lang, lines in found:
            if lang != "sh":
                continue
            for command in commands(lines):
                code, out, err = self.sh(command)
                allowed = (0, 1, 2) if re.match(r"taskd check\b", command) else (0,)
                self.assertIn(code, allowed, f"{command}\nexit {code}\nstdout: {out}\nstderr: {err}")
                ran.append(command)
            self.assertEqual(self.sh(tick)[0], 0, tick)
        self.assertGreaterEqual(len(ran), 20, ran)

        code, status, _ = self.sh("taskd status")
        self.assertIn("Ticked by run-once", status)
        code, names, _ = self.sh("taskd list")
        for name in ("backup", "digest", "invoices"):
            self.assertIn(name, names)
        self.assertNotIn("crontab", self.sh("taskd --json list")[1])  # undone by rm --owner
        self.assertIn("backup", self.sh("taskd history backup")[1])
        # The relative program of the example runs from its --cwd under cron.
        self.assertEqual(self.sh("taskd trigger invoices")[0], 0)
        self.assertEqual(self.sh(tick), (0, "", ""))
        self.assertEqual(self.sh("taskd logs invoices")[1], "invoices sent\n")


if __name__ == "__main__":
    unittest.main()
