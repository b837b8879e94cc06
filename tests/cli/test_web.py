"""taskd web: the HTTP API answers in the shapes of --json, acts only with
the token, keeps to loopback without one, bounds what a client may send or
hold, and sends the board's page, style and script with headers that let no
other script run."""

import json
import os
import select
import socket
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from taskd_test import STORE, TaskdTestCase

TOKEN = "s3cret-token-for-tests"
# The headers of every response, whatever its status.
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
HOSTILE_NAMES = ['<script>alert(1)</script>', 'quote"\'s', "esc\x1b]0;owned\x07\x1b[2J"]


class WebTestCase(TaskdTestCase):
    def start_web(self, *args, token=None, mode=0o600):
        """Starts taskd web on a free loopback port; returns its base URL."""
        argv = ["web", "--listen", "127.0.0.1:0", *args]
        if token is not None:
            argv += ["--token-file", self.token_file(token, mode)]
        proc = self.popen_taskd(*argv)
        self.addCleanup(self.stop, proc)
        return self.url_served_by(proc)

    def url_served_by(self, proc):
        """The base URL that `proc` says it serves on."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 0.2)
            if ready:
                line = proc.stdout.readline()
                self.assertTrue(line.startswith("taskd: serving http://127.0.0.1:"), line)
                return line.split()[-1].rstrip("/")
            if proc.poll() is not None:
                self.fail("taskd exited: " + proc.stderr.read())
        self.fail("taskd did not say where it serves")

    def stop(self, proc):
        proc.terminate()
        proc.wait(timeout=20)
        proc.stdout.close()
        proc.stderr.close()

    def token_file(self, token, mode=0o600):
        path = os.path.join(self.tmp, "token")
        with open(path, "w") as out:
            out.write(token + "\n")
        os.chmod(path, mode)
        return path

    def request(self, url, method="GET", token=None, data=None):
        """(status, headers, body as bytes), whatever the status."""
        request = urllib.request.Request(url, method=method, data=data)
        if token is not None:
            request.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read()

    def get_json(self, url, status=200, **kwargs):
        code, headers, body = self.request(url, **kwargs)
        self.assertEqual(code, status, body)
        self.assertEqual(headers["Content-Type"], "application/json")
        return json.loads(body)

    def quoted(self, name):
        return urllib.parse.quote(name, safe="", errors="surrogateescape")


class ApiShapesTest(WebTestCase):
    def setUp(self):
        super().setUp()
        self.add("alpha", "--every", "1h", "--group", "g1", "--owner", "ann", "--", "echo", "hello")
        self.add("beta", "--cron", "0 * * * *", "--owner", "bob", "--", "false")
        self.add("gamma", "--manual", "--", "true")
        self.ok("trigger", "alpha")
        self.ok("trigger", "beta")
        self.run_once()
        self.url = self.start_web()

    def test_tasks_task_runs_and_output_are_what_json_prints(self):
        self.assertEqual(self.get_json(self.url + "/api/v1/tasks"), self.tasks())
        for name in ("alpha", "beta", "gamma"):
            self.assertEqual(self.get_json(self.url + "/api/v1/tasks/" + name), self.task(name))
        runs = self.get_json(self.url + "/api/v1/runs")
        self.assertEqual(runs, self.json_of("history"))
        self.assertEqual(self.get_json(self.url + "/api/v1/runs?task=alpha"), self.json_of("history", "alpha"))
        alpha_run = self.json_of("history", "alpha")[0]["id"]
        output = self.get_json(self.url + "/api/v1/runs/%d/output" % alpha_run)
        self.assertEqual(output, self.json_of("logs", "alpha", "--run", str(alpha_run)))
        self.assertEqual(output["output"], "hello\n")

    def test_filters_are_those_of_list_and_history(self):
        names = lambda query: [t["name"] for t in self.get_json(self.url + "/api/v1/tasks?" + query)]
        self.assertEqual(names("name=a*"), ["alpha"])
        self.assertEqual(names("group=g1"), ["alpha"])
        self.assertEqual(names("owner=bob"), ["beta"])
        self.assertEqual(names("state=failing"), ["beta"])
        self.assertEqual(names("limit=2"), ["alpha", "beta"])
        self.assertEqual(names("limit=2&after=beta"), ["gamma"])
        self.assertEqual(names("after=gamma"), [])
        statuses = [r["status"] for r in self.get_json(self.url + "/api/v1/runs?status=failed")]
        self.assertEqual(statuses, ["failed"])
        self.assertEqual(self.get_json(self.url + "/api/v1/runs?trigger=schedule"), [])
        self.assertEqual(len(self.get_json(self.url + "/api/v1/runs?limit=1")), 1)

    def test_a_run_names_the_host_that_ran_it(self):
        self.ok("trigger", "gamma")
        hosts = {run["task"]: run["host"] for run in self.get_json(self.url + "/api/v1/runs")}
        self.assertEqual(hosts, {"alpha": socket.gethostname(), "beta": socket.gethostname(), "gamma": None})
        self.assertEqual(self.history("alpha")[0]["host"], socket.gethostname())

    def test_runs_come_a_page_at_a_time_after_a_run(self):
        for window in ("", "since=1d&"):
            with self.subTest(window=window):
                runs = self.get_json(self.url + "/api/v1/runs?" + window)
                self.assertEqual(len(runs), 2)
                first = self.get_json(self.url + "/api/v1/runs?%slimit=1" % window)
                self.assertEqual(first, runs[:1])
                second = self.get_json(self.url + "/api/v1/runs?%slimit=1&before=%d" % (window, first[0]["id"]))
                self.assertEqual(second, runs[1:])
                self.assertEqual(self.get_json(self.url + "/api/v1/runs?%sbefore=%d" % (window, runs[1]["id"])), [])
        for query in ("before=0", "before=x", "before=-1"):
            with self.subTest(query=query):
                self.assertIn("before", self.get_json(self.url + "/api/v1/runs?" + query, status=400)["error"])

    def test_bad_queries_unknown_paths_and_methods(self):
        for query in ("limit=0", "limit=x", "limit=5001", "state=sleepy"):
            with self.subTest(query=query):
                self.assertIn("error", self.get_json(self.url + "/api/v1/tasks?" + query, status=400))
        self.get_json(self.url + "/api/v1/runs?status=nope", status=400)
        self.get_json(self.url + "/api/v1/runs?since=yesterday", status=400)
        for path in ("/api/v1/tasks/nope", "/api/v1/runs?task=nope", "/api/v1/runs/999999/output",
                     "/api/v1/runs/1/nothing", "/api/v1/nothing", "/api/v2/tasks", "/nothing"):
            with self.subTest(path=path):
                self.get_json(self.url + path, status=404)
        code, headers, _ = self.request(self.url + "/api/v1/tasks", method="PUT")
        self.assertEqual(code, 405)
        self.assertIn("GET", headers["Allow"])
        code, _, _ = self.request(self.url + "/healthz", method="POST", data=b"")
        self.assertEqual(code, 405)

    def test_healthz(self):
        self.assertEqual(self.get_json(self.url + "/healthz"), {"status": "ok"})


class BoardAssetsTest(WebTestCase):
    def test_page_style_and_script_with_a_strict_policy_on_every_response(self):
        url = self.start_web()
        for path, kind in (("/", "text/html"), ("/board.css", "text/css"), ("/board.js", "text/javascript")):
            with self.subTest(path=path):
                code, headers, body = self.request(url + path)
                self.assertEqual(code, 200)
                self.assertTrue(headers["Content-Type"].startswith(kind))
                self.assertGreater(len(body), 100)
        _, _, page = self.request(url + "/")
        self.assertNotIn(b"<script>", page)  # no inline script: the policy would refuse it
        self.assertNotIn(b"http", page.replace(b'"/board', b""))  # nothing from elsewhere
        for path in ("/", "/api/v1/tasks", "/nothing", "/api/v1/tasks/nope"):
            with self.subTest(path=path):
                _, headers, _ = self.request(url + path)
                for name, value in SECURITY_HEADERS.items():
                    self.assertEqual(headers[name], value)
                policy = headers["Content-Security-Policy"]
                self.assertIn("default-src 'none'", policy)
                self.assertIn("script-src 'self'", policy)
                self.assertNotIn("unsafe", policy)

    def test_no_asset_outside_the_board(self):
        url = self.start_web()
        for path in ("/board.js/..", "/../board.js", "/%2e%2e/board.js", "/..%2fboard.js", "/etc/passwd",
                     "//board.js", "/index.html/../board.js"):
            with self.subTest(path=path):
                sock = socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=20)
                sock.sendall(b"GET " + path.encode() + b" HTTP/1.0\r\n\r\n")
                reply = b""
                while chunk := sock.recv(65536):
                    reply += chunk
                sock.close()
                self.assertTrue(reply.startswith(b"HTTP/1.0 404") or reply.startswith(b"HTTP/1.1 404"), reply[:200])

    def test_the_timeline_and_a_run_s_page_by_their_paths_alone(self):
        url = self.start_web()
        for path, kind in (("/timeline", "text/html"), ("/runs/1", "text/html"), ("/runs/123456789", "text/html"),
                           ("/common.js", "text/javascript"), ("/timeline.js", "text/javascript"),
                           ("/run.js", "text/javascript")):
            with self.subTest(path=path):
                code, headers, body = self.request(url + path)
                self.assertEqual(code, 200)
                self.assertTrue(headers["Content-Type"].startswith(kind))
                self.assertIn("default-src 'none'", headers["Content-Security-Policy"])
                if kind == "text/html":
                    self.assertNotIn(b"<script>", body)
                    self.assertNotIn(b"http", body)
        for path in ("/runs/", "/runs/x", "/runs/1/output", "/runs/-1", "/runs/1.js", "/runs/" + "9" * 19,
                     "/timeline/", "/timeline.html", "/run.html"):
            with self.subTest(path=path):
                self.assertEqual(self.request(url + path)[0], 404)


class TokenTest(WebTestCase):
    def setUp(self):
        super().setUp()
        self.add("t", "--every", "1h", "--", "true")

    def test_actions_need_the_token(self):
        url = self.start_web(token=TOKEN)
        trigger = url + "/api/v1/tasks/t/trigger"
        code, headers, _ = self.request(trigger, method="POST", data=b"")
        self.assertEqual(code, 401)
        self.assertEqual(headers["WWW-Authenticate"], "Bearer")
        for wrong in ("", "s3cret", TOKEN + "x", TOKEN.upper()):
            with self.subTest(token=wrong):
                self.assertEqual(self.request(trigger, method="POST", data=b"", token=wrong)[0], 401)
        self.assertEqual(self.history(), [])
        triggered = self.get_json(trigger, method="POST", data=b"", token=TOKEN)
        self.assertEqual(triggered["task"], "t")
        [run] = self.history()
        self.assertEqual((run["trigger"], run["status"]), ("manual", "queued"))
        paused = self.get_json(url + "/api/v1/tasks/t/pause", method="POST", data=b"", token=TOKEN)
        self.assertEqual(paused, [{"task": "t", "paused": True}])
        self.assertTrue(self.task("t")["paused"])
        self.get_json(url + "/api/v1/tasks/t/resume", method="POST", data=b"", token=TOKEN)
        self.assertFalse(self.task("t")["paused"])
        self.get_json(url + "/api/v1/tasks/nope/pause", method="POST", data=b"", token=TOKEN, status=404)
        self.get_json(url + "/api/v1/tasks/t/explode", method="POST", data=b"", token=TOKEN, status=404)
        # reads need no token unless --token-for-reads
        self.assertEqual(self.get_json(url + "/api/v1/tasks")[0]["name"], "t")

    def test_without_a_token_file_the_api_only_reads(self):
        url = self.start_web()
        for token in (None, TOKEN):
            code, _, body = self.request(url + "/api/v1/tasks/t/trigger", method="POST", data=b"", token=token)
            self.assertEqual(code, 403, body)
        self.assertEqual(self.history(), [])

    def test_token_for_reads(self):
        url = self.start_web("--token-for-reads", token=TOKEN)
        for path in ("/api/v1/tasks", "/api/v1/tasks/t", "/api/v1/runs"):
            with self.subTest(path=path):
                self.assertEqual(self.request(url + path)[0], 401)
                self.assertEqual(self.request(url + path, token="wrong")[0], 401)
                self.assertEqual(self.request(url + path, token=TOKEN)[0], 200)
        self.assertEqual(self.request(url + "/healthz")[0], 200)  # for load balancers
        self.assertEqual(self.request(url + "/board.js")[0], 200)  # the board asks for the token itself

    def test_a_token_file_others_may_read_is_refused(self):
        for mode in (0o644, 0o640, 0o602):
            with self.subTest(mode=oct(mode)):
                code, out, err = self.run_taskd("web", "--listen", "127.0.0.1:0", "--token-file",
                                                self.token_file(TOKEN, mode))
                self.assertEqual(code, 65, err)
                self.assertIn("chmod 600", err)
                self.assertNotIn(TOKEN, err)
        empty = self.token_file("", 0o600)
        code, _, err = self.run_taskd("web", "--listen", "127.0.0.1:0", "--token-file", empty)
        self.assertEqual(code, 65, err)
        code, _, err = self.run_taskd("web", "--listen", "127.0.0.1:0", "--token-file", self.tmp)
        self.assertEqual(code, 65, err)

    def test_an_address_others_reach_needs_a_token_file(self):
        for address in ("0.0.0.0:0", "[::]:0", "192.0.2.1:0"):
            with self.subTest(address=address):
                code, out, err = self.run_taskd("web", "--listen", address, timeout=20)
                self.assertEqual(code, 2, err)
                self.assertIn("give --token-file", err)
                self.assertEqual(out, "")
        code, _, err = self.run_taskd("web", "--token-for-reads")
        self.assertEqual(code, 2, err)
        for address in ("localhost:8080", "127.0.0.1", "127.0.0.1:99999", "[::1:80"):
            with self.subTest(address=address):
                self.assertEqual(self.run_taskd("web", "--listen", address)[0], 2)

    def test_an_address_others_reach_is_served_with_a_token_file(self):
        proc = self.popen_taskd("web", "--listen", "0.0.0.0:0", "--token-file", self.token_file(TOKEN))
        self.addCleanup(self.stop, proc)
        ready, _, _ = select.select([proc.stdout], [], [], 20)
        self.assertTrue(ready)
        self.assertTrue(proc.stdout.readline().startswith("taskd: serving http://0.0.0.0:"))


class ServedByTheLoopTest(WebTestCase):
    def test_run_serves_the_board_beside_its_runs_until_it_stops(self):
        self.add("made", "--every", "1h", "--start-now", "--", "true")
        proc = self.popen_taskd("run", "--web", "127.0.0.1:0", "--tick", "1s")
        self.addCleanup(self.stop, proc)
        url = self.url_served_by(proc)
        deadline = time.monotonic() + 30
        runs = []
        while time.monotonic() < deadline and not runs:
            runs = [run for run in self.get_json(url + "/api/v1/runs?task=made") if run["status"] == "succeeded"]
        self.assertEqual(len(runs), 1, runs)
        self.assertEqual(self.get_json(url + "/api/v1/tasks/made")["name"], "made")
        proc.terminate()
        self.assertEqual(proc.wait(timeout=30), 0, proc.stderr.read())
        with self.assertRaises(OSError):
            urllib.request.urlopen(url + "/healthz", timeout=5)

    def test_run_refuses_a_board_web_would_refuse_naming_its_own_options(self):
        self.add("due", "--every", "1h", "--start-now", "--", "true")
        cases = [(["--web", "0.0.0.0:0"], "run: --web 0.0.0.0:0 is reachable from other machines: give --web-token-file"),
                 (["--web", "localhost:80"], '--web "localhost:80": the address is a numeric'),
                 (["--web", "127.0.0.1:0", "--web-token-for-reads"], "run: --web-token-for-reads needs --web-token-file")]
        for args, message in cases:
            with self.subTest(args=args):
                code, out, err = self.run_taskd("run", *args, timeout=20)
                self.assertEqual(code, 2, err)
                self.assertIn(message, err)
                self.assertEqual(out, "")
        self.assertEqual(self.sql("SELECT count(*) FROM runs")[0][0], 0)


class HostileNamesTest(WebTestCase):
    def test_names_come_back_as_json_prints_them(self):
        for index, name in enumerate(HOSTILE_NAMES):
            self.add("t%d" % index, "--every", "1h", "--owner", "o", "--", "true")
            self.sql("UPDATE tasks SET name = ? WHERE name = ?", (name, "t%d" % index))
        if STORE == "sqlite":  # a server keeps only UTF-8
            self.add("bytes", "--every", "1h", "--", "true")
            self.sql("UPDATE tasks SET name = CAST(X'6261ff64' AS TEXT) WHERE name = 'bytes'")
        url = self.start_web()
        listed = self.get_json(url + "/api/v1/tasks")
        self.assertEqual(listed, self.tasks())
        self.assertTrue(set(HOSTILE_NAMES) <= {task["name"] for task in listed})
        for name in HOSTILE_NAMES:
            with self.subTest(name=name):
                self.assertEqual(self.get_json(url + "/api/v1/tasks/" + self.quoted(name))["name"], name)
        if STORE == "sqlite":
            self.assertIn("ba\ufffdd", [task["name"] for task in listed])
            self.assertEqual(self.get_json(url + "/api/v1/tasks/ba%FFd")["name"], "ba\ufffdd")
        _, headers, body = self.request(url + "/api/v1/tasks")
        self.assertEqual(headers["X-Content-Type-Options"], "nosniff")  # JSON, never read as a page
        self.assertNotIn(b"\x1b", body)  # escaped as \u001b


class LimitsTest(WebTestCase):
    def setUp(self):
        super().setUp()
        self.add("t", "--every", "1h", "--", "true")
        self.url = self.start_web(token=TOKEN)
        self.port = int(self.url.rsplit(":", 1)[1])

    def test_a_body_too_large_is_refused(self):
        code, _, _ = self.request(self.url + "/api/v1/tasks/t/pause", method="POST", data=b"x" * 100000, token=TOKEN)
        self.assertEqual(code, 413)
        self.assertFalse(self.task("t")["paused"])

    def test_headers_too_large_are_refused(self):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=20)
        sock.sendall(b"GET /api/v1/tasks HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100000 + b"\r\n\r\n")
        reply = sock.recv(65536)
        sock.close()
        self.assertTrue(reply.startswith(b"HTTP/1.1 431") or reply.startswith(b"HTTP/1.1 413"), reply[:100])

    def test_idle_connections_do_not_stop_others(self):
        idle = [socket.create_connection(("127.0.0.1", self.port), timeout=20) for _ in range(200)]
        for sock in idle[:100]:
            sock.sendall(b"GET /api/v1/tasks HTTP/1.1\r\nHost: x\r\n")  # never finished
        self.addCleanup(lambda: [sock.close() for sock in idle])
        self.assertEqual(self.get_json(self.url + "/api/v1/tasks")[0]["name"], "t")

    def test_an_idle_connection_is_closed(self):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        sock.sendall(b"GET /api/v1/tasks HTTP/1.1\r\n")
        started = time.monotonic()
        self.assertEqual(sock.recv(100), b"")  # closed by the server, not answered
        self.assertLess(time.monotonic() - started, 25)
        sock.close()


if __name__ == "__main__":
    unittest.main()
