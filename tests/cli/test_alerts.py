"""Alerts that leave the machine: --mail-to (a mail through sendmail -t on
the changes --notify is told of), --ping-url (healthchecks.io pings at every
run) and --notify-url (a JSON post on the changes --notify is told of),
posted to a local HTTP server."""

import email.parser
import http.server
import json
import os
import stat
import sys
import threading
import time
import unittest

from loop_helpers import LoopTestCase, wait_for
from taskd_test import parse_time

T0 = "2026-11-21 14:00:00"

# A sendmail that keeps its argv and the mail it reads, one JSON file per
# mail, named in the order they came.
FAKE_SENDMAIL = """#!{python}
import json, os, sys
inbox = {inbox!r}
mail = sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
n = len([name for name in os.listdir(inbox) if name.endswith(".json")])
path = os.path.join(inbox, "%03d.json" % n)
with open(path + ".tmp", "w") as f:
    json.dump({{"argv": sys.argv[1:], "mail": mail}}, f)
os.rename(path + ".tmp", path)
"""


class MailToTest(LoopTestCase):
    def setUp(self):
        super().setUp()
        self.inbox = os.path.join(self.tmp, "inbox")
        bin_dir = os.path.join(self.tmp, "bin")
        os.mkdir(self.inbox)
        os.mkdir(bin_dir)
        sendmail = os.path.join(bin_dir, "sendmail")
        with open(sendmail, "w") as f:
            f.write(FAKE_SENDMAIL.format(python=sys.executable, inbox=self.inbox))
        os.chmod(sendmail, stat.S_IRWXU)
        self.env["PATH"] = bin_dir + ":" + self.env["PATH"]

    def mails(self):
        names = sorted(name for name in os.listdir(self.inbox) if name.endswith(".json"))
        result = []
        for name in names:
            with open(os.path.join(self.inbox, name)) as f:
                result.append(json.load(f))
        return result

    def wait_for_mails(self, count):
        return wait_for(lambda: len(self.mails()) >= count and self.mails(), 20, "%d mails" % count)

    def add_failing(self, name, command, *extra):
        self.add(name, "--every", "1h", "--phase", "0", "--start-now", "--timeout", "1m",
                 "--mail-to", "ops@example.org,root@localhost", *extra, "--shell", "--", command, faketime=T0)

    def test_a_failure_and_its_recovery_are_mailed_with_the_output_tail(self):
        flag = os.path.join(self.tmp, "fail")
        open(flag, "w").close()
        self.add_failing("backup", 'seq 1 3000; echo "disk full" >&2; test ! -e "%s"' % flag)
        self.run_once(faketime="2026-11-21 14:00:01")
        run = self.history("backup")[0]
        [sent] = self.wait_for_mails(1)
        self.assertEqual(sent["argv"], ["-t", "-oi"])
        message = email.parser.Parser().parsestr(sent["mail"])
        self.assertEqual(message["To"], "ops@example.org, root@localhost")
        self.assertEqual(message["Subject"], "taskd: task backup failed on %s" % os.uname().nodename)
        self.assertEqual(message["Auto-Submitted"], "auto-generated")
        body = message.get_payload()
        for line in ("Task:       backup", "Event:      failed", "Status:     failed", "Exit code:  1",
                     "Run:        %d" % run["id"], "Host:       %s" % os.uname().nodename,
                     "Reason:     %s" % run["reason"]):
            self.assertIn(line + "\n", body)
        self.assertIn("The last 4096 bytes of its output:", body)
        self.assertTrue(body.endswith("2999\n3000\ndisk full\n"), body[-200:])
        self.assertNotIn("\n1\n2\n3\n", body, "only the tail")

        os.unlink(flag)
        self.run_once(faketime="2026-11-21 15:00:01")
        mails = self.wait_for_mails(2)
        self.assertEqual(email.parser.Parser().parsestr(mails[1]["mail"])["Subject"],
                         "taskd: task backup recovered on %s" % os.uname().nodename)

    def test_a_newline_in_the_output_or_reason_adds_no_header(self):
        self.add_failing("inject", r"printf 'x\r\nBcc: victim@example.org\r\n\r\nX-Evil: 1\n'; exit 3")
        self.run_once(faketime="2026-11-21 14:00:01")
        [sent] = self.wait_for_mails(1)
        headers = sent["mail"].split("\n\n", 1)[0].split("\n")
        self.assertEqual([h.split(":", 1)[0] for h in headers],
                         ["To", "Subject", "Auto-Submitted", "MIME-Version", "Content-Type",
                          "Content-Transfer-Encoding"])
        self.assertNotIn("\r", sent["mail"])
        self.assertIn("\nBcc: victim@example.org\\x0d\n", sent["mail"].split("\n\n", 1)[1])

    @unittest.skipIf(any(os.path.exists(d + "/sendmail") for d in ("/usr/sbin", "/usr/lib", "/usr/bin", "/bin")),
                     "this machine has a sendmail")
    def test_without_sendmail_the_run_is_unchanged_and_taskd_says_so_once(self):
        self.env["PATH"] = "/usr/bin:/bin"
        self.add_failing("first", "exit 1")
        self.add_failing("second", "exit 2")
        code, _, err = self.run_taskd("run-once", faketime="2026-11-21 14:00:01")
        self.assertEqual(code, 0, err)
        self.assertEqual(sorted(run["status"] for run in self.history()), ["failed", "failed"])
        self.assertEqual(err.count("no sendmail"), 1, err)

    def test_an_address_must_be_one_address(self):
        for bad in ("ops", "ops@", "@example.org", "a b@example.org", "a@example.org,", "x@y\nBcc: z@w",
                    "<a@example.org>", "-oQ@example.org"):
            with self.subTest(bad=bad):
                code, out, err = self.run_taskd("add", "t", "--every", "1h", "--mail-to", bad, "--", "true")
                self.assertEqual((code, out), (65, ""))
                self.assertIn("--mail-to", err)
        self.assertEqual(self.tasks(), [])
        self.add("t", "--every", "1h", "--mail-to", "a@example.org,b@example.org", "--", "true")
        self.assertEqual(self.task("t")["mail_to"], "a@example.org,b@example.org")



class Receiver:
    """An HTTP server on 127.0.0.1 (a port of its own) that keeps each POST
    (path, body, content type) and answers each path's requests with the
    codes of `answers[path]` in turn (the last one from then on; 200 when
    none), or never answers while `hang` is set."""

    def __init__(self, answers=None, hang=False):
        self.answers = answers or {}
        self.requests = []
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.hang = hang
        self.hanging = 0
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.lock:
                    receiver.requests.append((self.path, body.decode("utf-8", "replace"),
                                              self.headers.get("Content-Type")))
                    seen = sum(1 for path, _, _ in receiver.requests if path == self.path)
                    codes = receiver.answers.get(self.path, [200])
                    code = codes[min(seen, len(codes)) - 1]
                    if receiver.hang:
                        receiver.hanging += 1
                if receiver.hang:
                    receiver.release.wait(60)
                    return
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.server.server_address[1], path)

    def paths(self):
        with self.lock:
            return [path for path, _, _ in self.requests]

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


class WebTestCase(LoopTestCase):
    def receiver(self, **kwargs):
        receiver = Receiver(**kwargs)
        self.addCleanup(receiver.close)
        return receiver


class PingUrlTest(WebTestCase):
    def test_each_run_pings_its_start_then_its_success_or_failure_with_its_output(self):
        web = self.receiver()
        flag = os.path.join(self.tmp, "fail")
        self.add("backup", "--every", "1h", "--phase", "0", "--start-now", "--ping-url", web.url("/ping/abc"),
                 "--shell", "--", 'head -c 20000 /dev/zero | tr "\\0" x; echo; echo done; test ! -e "%s"' % flag,
                 faketime=T0)
        self.run_once(faketime="2026-11-21 14:00:01")
        wait_for(lambda: len(web.requests) >= 2, 20, "two pings")
        (start, start_body, _), (end, end_body, content_type) = web.requests
        self.assertEqual((start, start_body), ("/ping/abc/start", ""))
        self.assertEqual((end, content_type), ("/ping/abc", "text/plain; charset=utf-8"))
        self.assertEqual(len(end_body), 10 * 1024)
        self.assertTrue(end_body.endswith("xxx\ndone\n"))

        open(flag, "w").close()
        self.run_once(faketime="2026-11-21 15:00:01")
        wait_for(lambda: len(web.requests) >= 4, 20, "four pings")
        self.assertEqual(web.paths()[2:], ["/ping/abc/start", "/ping/abc/fail"])

    def test_a_failing_server_is_retried_and_each_ping_it_never_takes_is_logged_once(self):
        web = self.receiver(answers={"/p/start": [500], "/p": [500]})
        url = web.url("/p").replace("http://", "http://user:s3cret@")
        self.add("t", "--every", "1h", "--phase", "0", "--start-now", "--ping-url", url, "--", "true", faketime=T0)
        began = time.monotonic()
        code, _, err = self.run_taskd("run-once", faketime="2026-11-21 14:00:01")
        self.assertEqual(code, 0, err)
        self.assertLess(time.monotonic() - began, 25, "run-once waits 10 s for its alerts, and a request's timeout")
        self.assertEqual(self.history("t")[0]["status"], "succeeded")
        self.assertGreaterEqual(web.paths().count("/p/start"), 2, "tried again")
        self.assertGreaterEqual(web.paths().count("/p"), 2, "tried again")
        lines = [line for line in err.splitlines() if "was not delivered" in line]
        self.assertEqual(len(lines), 2, err)
        self.assertIn("the start ping of task \"t\"", lines[0])
        self.assertIn("http://***@127.0.0.1:", lines[0])
        self.assertNotIn("s3cret", err)

    def test_a_server_that_fails_once_takes_the_next_attempt(self):
        web = self.receiver(answers={"/p": [503, 200]})
        self.add("t", "--every", "1h", "--phase", "0", "--start-now", "--ping-url", web.url("/p"), "--", "true",
                 faketime=T0)
        code, _, err = self.run_taskd("run-once", faketime="2026-11-21 14:00:01")
        self.assertEqual(code, 0, err)
        self.assertEqual(web.paths(), ["/p/start", "/p", "/p"])
        self.assertNotIn("was not delivered", err)

    def test_a_server_that_hangs_delays_no_run(self):
        web = self.receiver(hang=True)
        self.add("often", "--every", "1s", "--ping-url", web.url("/h"), "--", "true")
        proc, _ = self.start("run")
        wait_for(lambda: web.hanging >= 1, 20, "a request the server holds")

        def succeeded():
            return [run for run in self.history("often") if run["status"] == "succeeded"]
        runs = wait_for(lambda: len(succeeded()) >= 4 and succeeded(), 20, "four runs while the server hangs")
        for run in runs:
            late = parse_time(run["started_at"]) - parse_time(run["scheduled_at"])
            self.assertLess(late.total_seconds(), 2.0, run)
        began = time.monotonic()
        self.stop(proc)
        self.assertLess(time.monotonic() - began, 25, "the drain is bounded")

    def test_only_http_urls_are_taken_and_their_credentials_are_never_shown(self):
        for bad in ("ftp://example.org/x", "file:///etc/passwd", "example.org/ping", "http://", "http://u:s3cret@",
                    "https://example.org/a b"):
            with self.subTest(bad=bad):
                code, out, err = self.run_taskd("add", "t", "--every", "1h", "--ping-url", bad, "--", "true")
                self.assertEqual((code, out), (65, ""))
                self.assertIn("--ping-url", err)
                self.assertNotIn("s3cret", err)
        code, out, err = self.run_taskd("add", "t", "--every", "1h", "--notify-url", "gopher://x", "--", "true")
        self.assertEqual((code, out), (65, ""))
        self.assertIn("--notify-url", err)
        code, out, err = self.run_taskd("add", "t", "--every", "1h", "--notify-format", "xml", "--", "true")
        self.assertEqual((code, out), (65, ""))
        self.assertIn("--notify-format", err)
        self.assertEqual(self.tasks(), [])


class NotifyUrlTest(WebTestCase):
    def test_a_failure_is_posted_as_json_and_as_a_chat_message(self):
        web = self.receiver()
        for name, form in (("plain", "json"), ("chat", "slack")):
            self.add(name, "--every", "1h", "--phase", "0", "--start-now", "--timeout", "1m",
                     "--notify-url", web.url("/hook/" + name), "--notify-format", form, "--shell", "--",
                     'echo "disk full"; exit 3', faketime=T0)
        self.run_once(faketime="2026-11-21 14:00:01")
        wait_for(lambda: len(web.requests) >= 2, 20, "two posts")
        posts = {path: (json.loads(body), content_type) for path, body, content_type in web.requests}
        plain, content_type = posts["/hook/plain"]
        run = self.history("plain")[0]
        self.assertEqual(content_type, "application/json")
        self.assertEqual(plain, {
            "task": "plain", "run_id": run["id"], "status": "failed", "event": "failed",
            "reason": run["reason"], "exit_code": 3, "signal": None, "disabled_reason": "", "attempt_no": 1,
            "started_at": run["started_at"], "finished_at": run["finished_at"], "host": os.uname().nodename,
            "output_tail": "disk full\n"})
        chat, _ = posts["/hook/chat"]
        self.assertEqual(list(chat), ["text"])
        self.assertTrue(chat["text"].startswith("taskd: task chat failed on %s (run %d): "
                                                % (os.uname().nodename, self.history("chat")[0]["id"])), chat)
        self.assertIn("disk full", chat["text"])

    def test_a_success_after_success_posts_nothing(self):
        web = self.receiver()
        self.add("fine", "--every", "1h", "--phase", "0", "--start-now", "--notify-url", web.url("/hook"), "--",
                 "true", faketime=T0)
        self.run_once(faketime="2026-11-21 14:00:01")
        self.assertEqual(self.history("fine")[0]["status"], "succeeded")
        self.assertEqual(web.requests, [])


if __name__ == "__main__":
    unittest.main()
