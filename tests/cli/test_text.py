"""Text a user gives and text taskd shows: bytes that are not UTF-8 are
refused where they come in (exit 65, naming the option and the byte) and,
where a database holds them already, shown escaped instead of breaking a
command; control characters never reach a terminal from human output; and
`preview` prints its start times as it computes them."""

import os
import select
import subprocess
import time
import unittest

from taskd_test import STORE, TaskdTestCase

NOW = "2026-11-21 14:00:00"
# A window title, then a cleared screen: what a hostile owner, env value,
# notify command or status line would do to whoever reads `show`.
HOSTILE = "\x1b]0;owned\x07\x1b[2J"
SHOWN = "\\x1b]0;owned\\x07\\x1b[2J"
# Bytes that are not UTF-8 travel through Python's str as lone surrogates
# (os.fsencode): "\udcff" is the byte 0xff on the command line.
BAD = "\udcff"


class InvalidUtf8RefusedTest(TaskdTestCase):
    # (options before --, command after --, the option named, the bad byte counted from 1)
    BAD_ADDS = [
        (["--owner", "ops" + BAD], ["true"], "--owner", 4),
        (["--notify", "echo " + BAD], ["true"], "--notify", 6),
        (["--group", "g" + BAD], ["true"], "--group", 2),
        (["--cwd", "/tmp/" + BAD], ["true"], "--cwd", 6),
        (["--env", "A=" + BAD], ["true"], "--env", 3),
        (["--env", "A=b", "--env", "C=caf\udce9"], ["true"], "--env", 6),
        ([], ["echo", "caf\udce9"], "command", 4),
        (["--shell"], ["echo caf\udce9"], "command", 9),
    ]

    def assertRefused(self, args, option, byte, **kwargs):
        code, out, err = self.run_taskd(*args, **kwargs)
        self.assertEqual(code, 65, "taskd %r\nstdout: %s\nstderr: %s" % (args, out, err))
        line = self.assertOneErrorLine(err, option, "not valid UTF-8 at byte %d" % byte)
        self.assertNotIn(BAD, line)  # the message shows the byte escaped (\xff), not raw
        return line

    def test_add_refuses_each_text_option_that_is_not_utf8_and_writes_nothing(self):
        for options, command, option, byte in self.BAD_ADDS:
            with self.subTest(option=option, options=options):
                self.assertRefused(["add", "t", "--every", "1h", *options, "--", *command], option, byte)
                self.assertFalse(os.path.exists(self.db), "a refused add created the database")

    def test_edit_refuses_it_and_leaves_the_task_as_it_was(self):
        self.add("t", "--every", "1h", "--owner", "ops", "--", "true")
        before = self.task("t")
        for options, command, option, byte in self.BAD_ADDS:
            with self.subTest(option=option, options=options):
                if command == ["true"]:
                    self.assertRefused(["edit", "t", *options], option, byte)
                else:
                    self.assertRefused(["edit", "t", *options, "--", *command], option, byte)
                self.assertEqual(self.task("t"), before)

    def test_every_command_refuses_it_in_its_options(self):
        self.add("t", "--every", "1h", "--owner", "ops", "--", "true")
        line = self.assertRefused(["list", "--owner", "o" + BAD], "--owner", 2)
        self.assertIn('"o\\xff"', line)
        self.assertRefused(["rm", "--owner", "ops" + BAD], "--owner", 4)
        self.assertRefused(["group", "set", "g" + BAD, "--concurrency", "2"], "group", 2)
        self.assertRefused(["import-crontab", "-", "--owner", BAD], "--owner", 1, input="@hourly true\n")
        self.assertEqual([task["name"] for task in self.tasks()], ["t"])

    def test_a_cwd_made_absolute_from_a_directory_whose_name_is_not_utf8_is_refused(self):
        here = os.path.join(os.fsencode(self.tmp), b"d\xe9")
        os.mkdir(here)
        proc = subprocess.run(self.command_line(["add", "t", "--every", "1h", "--cwd", ".", "--", "true"]),
                              env=self.env, cwd=here, capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
        err = proc.stderr.decode(errors="surrogateescape")
        self.assertEqual(proc.returncode, 65, err)
        bad_byte = len(os.fsencode(os.path.realpath(self.tmp))) + 3  # the é of /…/dé, counted from 1
        self.assertOneErrorLine(err, "--cwd", "d\\xe9", "not valid UTF-8 at byte %d" % bad_byte)
        self.assertEqual(self.tasks(), [])

    def test_a_task_file_whose_path_would_be_the_owner_is_refused_when_the_path_is_not_utf8(self):
        folder = os.path.join(os.fsencode(self.tmp), b"d\xe9")
        os.mkdir(folder)
        path = os.path.join(folder, b"tasks.toml")
        with open(path, "w") as f:
            f.write('[[task]]\nname = "t"\nevery = "1h"\ncommand = ["true"]\n')
        code, _, err = self.run_taskd("apply", os.fsdecode(path))
        self.assertEqual(code, 65, err)
        self.assertOneErrorLine(err, "tasks.toml:1:1", "--owner", "d\\xe9", "not valid UTF-8")
        self.assertEqual(self.tasks(), [])

    def test_a_crontab_line_that_is_not_utf8_is_not_converted_and_skip_bad_skips_it(self):
        crontab = "0 * * * * echo caf\udce9\n5 * * * * true\n"
        code, out, err = self.run_taskd("import-crontab", "-", "--owner", "mine", input=crontab, faketime=NOW)
        self.assertEqual(code, 65, err)
        self.assertIn("<stdin>:1: cannot convert: command", err)
        self.assertIn("not valid UTF-8 at byte", err)
        self.assertNotIn("\udce9", err)
        self.assertEqual(self.tasks(), [])
        self.ok("import-crontab", "-", "--owner", "mine", "--skip-bad", input=crontab, faketime=NOW)
        self.assertEqual([task["command"] for task in self.tasks()], ["true"])


@unittest.skipIf(STORE == "postgresql", "a server refuses text that is not UTF-8: only a file can hold it")
class StoredInvalidUtf8Test(TaskdTestCase):
    """A row written by another program (sqlite3) with bytes that are not UTF-8."""

    def setUp(self):
        super().setUp()
        self.add("t", "--every", "1h", "--retry", "none", "--", "false", faketime=NOW)
        self.run_once(faketime="2026-11-21 15:00:00")
        self.sql("UPDATE tasks SET owner = CAST(X'6f70ff' AS TEXT), notify = CAST(X'6563686f20e9' AS TEXT), "
                 "cwd = CAST(X'2f746d702fe9' AS TEXT) WHERE name = 't'")
        self.sql("UPDATE runs SET reason = CAST(X'657869742033ff' AS TEXT)")

    def test_listings_and_show_print_the_bytes_escaped_and_json_as_u_fffd(self):
        self.assertIn(" t ", self.ok("list", faketime=NOW).replace("\n", " "))
        task = self.tasks(faketime=NOW)[0]
        self.assertEqual((task["owner"], task["notify"], task["cwd"]), ("op\ufffd", "echo \ufffd", "/tmp/\ufffd"))
        shown = self.ok("show", "t", faketime=NOW)
        for line in ("owner             op\\xff", "notify            echo \\xe9", "cwd               /tmp/\\xe9"):
            self.assertIn(line, shown)
        self.assertEqual(self.task("t", faketime=NOW)["owner"], "op\ufffd")
        self.assertIn("exit 3\\xff", self.ok("history"))
        self.assertEqual(self.history()[0]["reason"], "exit 3\ufffd")

    def test_export_writes_u_fffd_with_a_warning_and_apply_reads_the_file_back(self):
        code, out, err = self.run_taskd("export")
        self.assertEqual(code, 0, err)
        self.assertIn("warning: export: task t: --cwd", err)
        self.assertIn('owner = "op\ufffd"', out)
        path = os.path.join(self.tmp, "exported.toml")
        with open(path, "w") as f:
            f.write(out)
        other = os.path.join(self.tmp, "other.db")
        self.ok("apply", path, db=other, faketime=NOW)
        self.assertEqual(self.json_of("show", "t", db=other)["owner"], "op\ufffd")


class RunTextTest(TaskdTestCase):
    def test_a_status_line_that_is_not_utf8_is_kept_with_u_fffd_for_its_bad_bytes(self):
        # Latin-1 "café"; and a line of "x" and 300 "é", which the reason's 500 bytes cut in the 250th "é".
        self.add("latin", "--every", "1h", "--phase", "0", "--retry", "none", "--shell", "--",
                 "printf 'caf\\351\\n' > \"$TASKD_STATUS\"; exit 1", faketime=NOW)
        self.add("long", "--every", "1h", "--phase", "0", "--retry", "none", "--shell", "--",
                 "printf '%%s' 'x%s' >&2; exit 1" % ("\u00e9" * 300), faketime=NOW)
        out = self.run_once(faketime="2026-11-21 15:00:00")
        self.assertRegex(out, "taskd: latin run [0-9]+ failed: exit code 1: caf\ufffd\n")
        reasons = {run["task"]: run["reason"] for run in self.history()}
        self.assertEqual(reasons["latin"], "exit code 1: caf\ufffd")
        self.assertEqual(reasons["long"], "exit code 1: x" + "\u00e9" * 249)


class ControlCharactersTest(TaskdTestCase):
    """ESC sequences in what users and runs wrote reach no terminal, but through `logs`."""

    def setUp(self):
        super().setUp()
        script = 'printf "out %s\\n" "$A"; printf "%s\\n" "$A" > "$TASKD_STATUS"; exit 1'
        self.add("noisy", "--every", "1h", "--phase", "0", "--retry", "none", "--owner", HOSTILE, "--env",
                 "A=" + HOSTILE, "--notify", "true '%s'" % HOSTILE, "--shell", "--", script, faketime=NOW)

    def assertEscaped(self, text, what):
        self.assertNotIn("\x1b", text, what)
        self.assertNotIn("\x07", text, what)

    def test_run_once_show_explain_status_and_check_print_them_escaped(self):
        code, out, err = self.run_taskd("run-once", faketime="2026-11-21 15:00:00")
        self.assertEqual(code, 0, err)
        self.assertEscaped(out + err, "run-once")
        self.assertIn("taskd: noisy run 1 failed: exit code 1: " + SHOWN, out)
        shown = self.ok("show", "noisy", faketime="2026-11-21 15:00:00")
        self.assertEscaped(shown, "show")
        for line in ("owner             " + SHOWN, "env               A=" + SHOWN, "notify            true '%s'" % SHOWN):
            self.assertIn(line, shown)
        explained = self.ok("explain", "noisy", "--at", "2026-11-21T15:00:00Z", faketime="2026-11-21 15:00:10")
        self.assertEscaped(explained, "explain")
        self.assertIn(SHOWN, explained)
        for command in (["status"], ["check"], ["history"], ["list"]):
            code, out, err = self.run_taskd(*command, faketime="2026-11-21 15:00:10")
            self.assertEscaped(out + err, command)
        self.assertEqual(self.task("noisy")["owner"], HOSTILE)  # kept as given; JSON escapes it itself
        # `logs` is the one exception: it prints what the run wrote, as it wrote it.
        self.assertEqual(self.logs("noisy"), "out " + HOSTILE + "\n")

    def test_a_permanent_failure_reason_is_shown_escaped_where_the_task_is_disabled(self):
        self.ok("edit", "noisy", "--permanent-exit", "1", faketime=NOW)
        self.run_once(faketime="2026-11-21 15:00:00")
        shown = self.ok("show", "noisy", faketime="2026-11-21 15:00:10")
        self.assertEscaped(shown, "show")
        self.assertIn("state             disabled: " + SHOWN, shown)
        for command in (["status"], ["check"]):
            code, out, err = self.run_taskd(*command, faketime="2026-11-21 15:00:10")
            self.assertEscaped(out + err, command)
            self.assertIn(SHOWN, out)

    def test_an_error_message_quoting_the_input_shows_it_escaped(self):
        code, out, err = self.run_taskd("show", "no" + HOSTILE)
        self.assertEqual(code, 65, err)
        self.assertEscaped(err, "error")
        self.assertIn("no" + SHOWN, err)


class PreviewStreamsTest(TaskdTestCase):
    LINES = 200_000
    # Above a one-line preview's peak, far more than the lines of one block
    # need; far below what a buffered billion (or the lines read here) takes.
    GROWTH_KIB = 32 * 1024

    def preview_environment(self):
        env = dict(self.env)
        # ASan keeps freed memory in quarantine (256 MB by default): the bound
        # is on what taskd holds, not on what the sanitizer keeps back.
        env["ASAN_OPTIONS"] = env["ASAN_OPTIONS"] + ":quarantine_size_mb=1"
        return env

    def preview_args(self, *args, count):
        return (*args, "preview", "--every", "1s", "--phase", "0", "--from", "2026-11-21T14:00:00Z", "--count", count)

    def peak_rss_bound_kib(self, *args):
        """A one-line preview's peak (what this build needs to start: about
        100 MB under ASan, a few MB without) plus GROWTH_KIB."""
        proc = self.popen_taskd(*self.preview_args(*args, count="1"), db=None, env=self.preview_environment())
        out, err = proc.stdout.read(), proc.stderr.read()  # a line each at most
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stdout.close()
        proc.stderr.close()
        self.assertEqual(proc.returncode, 0, err)
        return usage.ru_maxrss + self.GROWTH_KIB

    def start_preview(self, *args):
        proc = self.popen_taskd(*self.preview_args(*args, count="1000000000"), db=None,
                                env=self.preview_environment())
        self.addCleanup(proc.communicate)  # reaps it and closes its pipes
        self.addCleanup(proc.kill)
        return proc

    def read_lines(self, proc, count, first_within=10, all_within=60):
        """The first `count` lines: the first within `first_within` seconds (a
        buffered billion would print nothing for hours), all within `all_within`."""
        started = time.monotonic()
        data = b""
        while data.count(b"\n") < count:
            within = all_within if data else first_within
            left = started + within - time.monotonic()
            self.assertGreater(left, 0, "%d of %d lines came in %ds" % (data.count(b"\n"), count, within))
            ready, _, _ = select.select([proc.stdout], [], [], left)
            if not ready:
                continue
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            self.assertTrue(chunk, "preview ended after %d lines" % data.count(b"\n"))
            data += chunk
        return data.decode().split("\n")[:count]

    def peak_rss_kib(self, proc):
        with open("/proc/%d/status" % proc.pid) as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))

    def test_a_huge_count_prints_its_first_lines_at_once_in_bounded_memory(self):
        proc = self.start_preview()
        lines = self.read_lines(proc, self.LINES)
        self.assertEqual(lines[:2], ["2026-11-21T14:00:01Z", "2026-11-21T14:00:02Z"])
        self.assertEqual(lines[-1], "2026-11-23T21:33:20Z")  # 200 000 s later
        self.assertLess(self.peak_rss_kib(proc), self.peak_rss_bound_kib())

    def test_json_streams_the_array_too(self):
        proc = self.start_preview("--json")
        lines = self.read_lines(proc, self.LINES)
        self.assertEqual(lines[:3], ["[", '"2026-11-21T14:00:01Z",', '"2026-11-21T14:00:02Z",'])  # into a pipe: compact
        self.assertLess(self.peak_rss_kib(proc), self.peak_rss_bound_kib("--json"))


if __name__ == "__main__":
    unittest.main()
