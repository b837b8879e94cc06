"""taskd web: the HTTP API answers in the shapes of --json, acts only with
the token, keeps to loopback without one, bounds what a client may send or
hold, and sends the board's page, style and script with headers that let no
other script run."""

import datetime
import http.client
import json
import os
import resource
import select
import socket
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from taskd_test import STORE, TaskdTestCase, parse_time, prometheus_samples

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
        self.ok("edit", "gamma", "--on-host", "h1")
        self.assertEqual(names("host=h1"), ["gamma"])
        self.assertEqual(names("state=failing"), ["beta"])
        self.assertEqual(names("limit=2"), ["alpha", "beta"])
        self.assertEqual(names("limit=2&after=beta"), ["gamma"])
        self.assertEqual(names("after=gamma"), [])
        statuses = [r["status"] for r in self.get_json(self.url + "/api/v1/runs?status=failed")]
        self.assertEqual(statuses, ["failed"])
        self.assertEqual(self.get_json(self.url + "/api/v1/runs?trigger=schedule"), [])
        self.assertEqual(len(self.get_json(self.url + "/api/v1/runs?limit=1")), 1)

    def test_recent_runs_give_each_task_of_a_page_its_last_runs(self):
        recent = self.get_json(self.url + "/api/v1/recent-runs?limit=2&runs=1")
        self.assertEqual([entry["task"] for entry in recent], ["alpha", "beta"])
        [alpha_run] = recent[0]["runs"]
        self.assertEqual(alpha_run, self.get_json(self.url + "/api/v1/runs?task=alpha&limit=1")[0])
        self.assertEqual(self.get_json(self.url + "/api/v1/recent-runs?after=beta"), [{"task": "gamma", "runs": []}])
        self.assertEqual(self.get_json(self.url + "/api/v1/recent-runs?owner=bob&runs=20")[0]["task"], "beta")
        for bad in ("runs=0", "runs=101", "runs=x", "state=sleeping"):
            self.assertEqual(self.request(self.url + "/api/v1/recent-runs?" + bad)[0], 400, bad)

    def test_a_page_of_tasks_says_where_it_is_among_those_the_filter_selects(self):
        def place(query):
            code, headers, body = self.request(self.url + "/api/v1/tasks?" + query)
            self.assertEqual(code, 200, body)
            return [t["name"] for t in json.loads(body)], headers["X-Total-Count"], headers["X-Offset"]
        self.assertEqual(place("total=1&limit=2"), (["alpha", "beta"], "3", "0"))
        self.assertEqual(place("total=1&limit=2&after=beta"), (["gamma"], "3", "2"))
        self.assertEqual(place("total=1&limit=1&after=alpha"), (["beta"], "3", "1"))
        self.assertEqual(place("total=1&owner=bob&after=alpha"), (["beta"], "1", "0"))
        self.assertEqual(place("total=1&after=gamma"), ([], "3", "3"))
        self.assertEqual(place("limit=2"), (["alpha", "beta"], None, None))  # not counted unless asked
        code, _, body = self.request(self.url + "/api/v1/tasks?total=yes")
        self.assertEqual((code, json.loads(body)), (400, {"error": 'total="yes": 1 or none'}))

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

    def test_the_page_after_a_pruned_run(self):
        self.ok("trigger", "gamma")
        self.run_once()
        newest, middle, oldest = [run["id"] for run in self.get_json(self.url + "/api/v1/runs")]
        self.sql("DELETE FROM runs WHERE id = ?", (middle,))
        # By id alone the cursor needs no row: the runs older than it.
        self.assertEqual([r["id"] for r in self.get_json(self.url + "/api/v1/runs?before=%d" % middle)], [oldest])
        # In a window the cursor is its run's slot: gone, it is said, not an empty last page.
        error = self.get_json(self.url + "/api/v1/runs?since=1d&before=%d" % middle, status=400)["error"]
        self.assertIn("before=%d" % middle, error)
        self.assertIn("pruned", error)
        self.assertEqual(self.get_json(self.url + "/api/v1/runs?since=1d&before=%d" % oldest), [])

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


class MetricsAndHostsTest(WebTestCase):
    def setUp(self):
        super().setUp()
        self.add("hourly", "--every", "1h", "--", "echo", "hi")
        self.add("broken", "--manual", "--", "false")
        for name in ("hourly", "broken"):
            self.ok("trigger", name)
        self.run_once()

    def test_metrics_are_those_of_the_command_line_with_each_task_s_series(self):
        url = self.start_web()
        code, headers, body = self.request(url + "/metrics")
        self.assertEqual(code, 200)
        self.assertTrue(headers["Content-Type"].startswith("text/plain; version=0.0.4"))
        self.assertEqual(body.decode(), self.ok("metrics"))
        samples = prometheus_samples(self, body.decode())
        self.assertEqual(samples['taskd_runs_total{status="succeeded"}'], 1)
        self.assertEqual(samples['taskd_runs_total{status="failed"}'], 1)
        self.assertEqual(samples['taskd_task_last_run_succeeded{task="hourly"}'], 1)
        self.assertEqual(samples['taskd_task_last_run_succeeded{task="broken"}'], 0)
        next_run = datetime.datetime.fromisoformat(self.task("hourly")["next_run_at"].replace("Z", "+00:00"))
        self.assertAlmostEqual(samples['taskd_task_next_run_timestamp_seconds{task="hourly"}'], next_run.timestamp(),
                               delta=0.002)
        self.assertNotIn('taskd_task_next_run_timestamp_seconds{task="broken"}', samples)  # manual: none

    def add_many_tasks(self, count):
        with open(os.path.join(self.tmp, "many.toml"), "w") as file:
            for i in range(count):
                file.write('[[task]]\nname = "many-%04d"\nevery = "1h"\ncommand = ["true"]\n\n' % i)
        self.ok("apply", os.path.join(self.tmp, "many.toml"))

    def test_metrics_of_many_tasks_are_sent_as_they_are_written(self):
        self.add_many_tasks(3000)
        code, headers, body = self.request(self.start_web() + "/metrics")
        self.assertEqual(code, 200)
        self.assertGreater(len(body), 128 * 1024)  # more than a piece of 64 KiB
        self.assertEqual(body.decode(), self.ok("metrics"))
        self.assertEqual(headers["Transfer-Encoding"], "chunked")  # never held whole, so its length is not known
        self.assertIsNone(headers["Content-Length"])

    def test_a_client_gone_in_the_middle_of_the_metrics_leaves_the_server_serving(self):
        self.add_many_tasks(3000)
        url = self.start_web()
        connection = http.client.HTTPConnection(urllib.parse.urlsplit(url).netloc, timeout=20)
        connection.request("GET", "/metrics")
        response = connection.getresponse()
        self.assertEqual(response.status, 200)
        self.assertTrue(response.read(1024))
        connection.close()
        self.assertEqual(self.request(url + "/metrics")[2].decode(), self.ok("metrics"))

    def test_each_task_s_last_duration(self):
        self.add("never", "--manual", "--", "true")
        samples = prometheus_samples(self, self.request(self.start_web() + "/metrics")[2].decode())
        for name in ("hourly", "broken"):
            [run] = self.history(name)
            took = parse_time(run["finished_at"]) - parse_time(run["started_at"])
            self.assertAlmostEqual(samples['taskd_task_last_duration_seconds{task="%s"}' % name],
                                   took.total_seconds(), delta=0.05)
        self.assertNotIn('taskd_task_last_duration_seconds{task="never"}', samples)

    def test_a_hostile_name_is_an_escaped_label(self):
        self.sql("UPDATE tasks SET name = ? WHERE name = 'hourly'", ('q"\\\nx',))
        text = self.request(self.start_web() + "/metrics")[2].decode()
        self.assertIn('taskd_task_last_run_succeeded{task="q\\"\\\\\\nx"} 1.000\n', text)

    def test_metrics_need_the_token_when_reads_do(self):
        url = self.start_web("--token-for-reads", token=TOKEN)
        self.assertEqual(self.request(url + "/metrics")[0], 401)
        self.assertEqual(self.request(url + "/metrics", token="wrong")[0], 401)
        self.assertEqual(self.request(url + "/metrics", token=TOKEN)[0], 200)
        self.assertEqual(self.request(url + "/metrics", method="POST", data=b"", token=TOKEN)[0], 405)

    def test_hosts_are_what_status_json_says_of_them(self):
        self.sql("INSERT INTO workers (role, host, pid, boot_id, process_start, concurrency, started_at, "
                 "heartbeat_at) VALUES ('run', 'elsewhere.example', 77, 'b', 1, 4, 1000, 2000)")
        url = self.start_web()
        hosts = self.get_json(url + "/api/v1/hosts")
        status = self.json_of("status")
        self.assertEqual(hosts, {key: status[key] for key in ("workers", "ticks", "running", "pinned")})
        self.assertEqual([worker["host"] for worker in hosts["workers"]], ["elsewhere.example"])
        self.assertEqual([tick["host"] for tick in hosts["ticks"]], [socket.gethostname()])

    def test_hosts_say_which_host_each_run_in_flight_is_on(self):
        self.add("long", "--manual", "--", "sleep", "60")
        self.sql("INSERT INTO runs (task_id, status, trigger, scheduled_at, enqueued_at, not_before, started_at, "
                 "worker_host, worker_pid, worker_boot_id, worker_started_at) "
                 "SELECT id, 'running', 'manual', 1000, 1000, 1000, 1000, 'elsewhere.example', 77, 'b', 1 "
                 "FROM tasks WHERE name = 'long'")
        [running] = self.get_json(self.start_web() + "/api/v1/hosts")["running"]
        self.assertEqual((running["task"], running["host"], running["worker_pid"]), ("long", "elsewhere.example", 77))
        self.assertIn("elsewhere.example", self.ok("status"))


class TaskViewsTest(WebTestCase):
    def setUp(self):
        super().setUp()
        self.add("hourly", "--every", "1h", "--", "true")
        self.add("manual", "--manual", "--", "true")
        self.ok("trigger", "hourly")
        self.run_once()
        self.url = self.start_web(token=TOKEN)

    def test_forecast_is_preview_s_json(self):
        for name in ("hourly", "manual"):
            for count in ("1", "3", "1000"):
                with self.subTest(name=name, count=count):
                    self.assertEqual(self.get_json(self.url + "/api/v1/tasks/%s/forecast?count=%s" % (name, count)),
                                     self.json_of("preview", name, "--count", count))
        self.assertEqual(len(self.get_json(self.url + "/api/v1/tasks/hourly/forecast")), 10)
        for count in ("0", "1001", "x", "-1"):
            with self.subTest(count=count):
                error = self.get_json(self.url + "/api/v1/tasks/hourly/forecast?count=" + count, status=400)
                self.assertIn("count", error["error"])
        self.get_json(self.url + "/api/v1/tasks/nope/forecast", status=404)

    def test_forecast_from_a_time_is_preview_s_from(self):
        start = "2030-01-01T00:30:00Z"
        self.assertEqual(self.get_json(self.url + "/api/v1/tasks/hourly/forecast?count=3&from=" + urllib.parse.quote(start)),
                         self.json_of("preview", "hourly", "--count", "3", "--from", start))
        error = self.get_json(self.url + "/api/v1/tasks/hourly/forecast?from=tomorrow", status=400)
        self.assertIn("from", error["error"])

    def test_explain_is_explain_s_json(self):
        at = self.history("hourly")[0]["scheduled_at"]
        for query, args in (("", []), ("?at=" + urllib.parse.quote(at), ["--at", at]), ("?at=2h", ["--at", "2h"]),
                            ("?at=03:00", ["--at", "03:00"])):
            with self.subTest(query=query):
                web = self.get_json(self.url + "/api/v1/tasks/hourly/explain" + query)
                cli = self.json_of("explain", "hourly", *args)
                # The same facts; their sentences say how long ago, from each one's now.
                self.assertEqual(web["task"], cli["task"])
                self.assertEqual(web["slot"], cli["slot"])
                self.assertEqual([fact["kind"] for fact in web["facts"]], [fact["kind"] for fact in cli["facts"]])
                if args and args[1] != "2h":  # 2h ago is from each one's now
                    self.assertEqual(web["at"], cli["at"])
        self.assertIn("at", self.get_json(self.url + "/api/v1/tasks/hourly/explain?at=whenever", status=400)["error"])
        self.get_json(self.url + "/api/v1/tasks/nope/explain", status=404)

    def test_a_name_with_a_slash(self):
        self.add("a", "--manual", "--", "true")
        self.add("a/explain", "--manual", "--", "true")
        self.add("b/explain", "--manual", "--", "true")
        self.assertEqual(self.get_json(self.url + "/api/v1/tasks/a/explain")["task"], "a")
        self.assertEqual(self.get_json(self.url + "/api/v1/tasks/b/explain")["name"], "b/explain")
        self.assertEqual(self.get_json(self.url + "/api/v1/tasks/a/forecast"), [])

    def test_backfill_needs_the_token_and_queues_what_the_command_line_would(self):
        backfill = self.url + "/api/v1/tasks/hourly/backfill?from=3h1s&until=1s"  # 3 hours: 3 slots
        before = self.history()
        self.assertEqual(self.request(backfill, method="POST", data=b"")[0], 401)
        self.assertEqual(self.request(backfill, method="POST", data=b"", token="wrong")[0], 401)
        self.assertEqual(self.history(), before)
        queued = self.get_json(backfill, method="POST", data=b"", token=TOKEN)
        self.assertEqual(len(queued), 3)
        runs = {run["id"]: run for run in self.history("hourly")}
        for slot in queued:
            run = runs[slot["run_id"]]
            self.assertEqual((run["trigger"], run["status"], run["scheduled_at"]),
                             ("manual", "queued", slot["scheduled_at"]))
        for query in ("", "?from=3h", "?until=1m", "?from=3h&until=1m&max=0", "?from=soon&until=1m",
                      "?from=3h1s&until=1s&max=2"):
            with self.subTest(query=query):
                self.get_json(self.url + "/api/v1/tasks/hourly/backfill" + query, method="POST", data=b"",
                              token=TOKEN, status=400)
        self.get_json(self.url + "/api/v1/tasks/nope/backfill?from=3h&until=1m", method="POST", data=b"",
                      token=TOKEN, status=404)
        self.assertEqual(len(self.history("hourly")), len(runs))

    def test_hostile_names(self):
        for index, name in enumerate(HOSTILE_NAMES):
            self.add("t%d" % index, "--every", "1h", "--", "true")
            self.sql("UPDATE tasks SET name = ? WHERE name = ?", (name, "t%d" % index))
        for name in HOSTILE_NAMES:
            with self.subTest(name=name):
                path = self.url + "/api/v1/tasks/" + self.quoted(name)
                self.assertEqual(self.get_json(path + "/explain")["task"], name)
                self.assertEqual(len(self.get_json(path + "/forecast?count=2")), 2)
                [slot] = self.get_json(path + "/backfill?from=1h1s&until=1s", method="POST", data=b"", token=TOKEN)
                self.assertEqual([run["id"] for run in self.history() if run["task"] == name], [slot["run_id"]])


class EventsTest(WebTestCase):
    def open_stream(self, url, token=None):
        """(connection, response) of GET /api/v1/events, its headers read."""
        host, port = url.rsplit("/", 1)[1].split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=20)
        self.addCleanup(connection.close)
        connection.request("GET", "/api/v1/events",
                           headers={"Authorization": "Bearer " + token} if token else {})
        return connection, connection.getresponse()

    def events(self, response):
        """Yields (event, data) as the stream sends them, for at most 20 s."""
        name = None
        deadline = time.monotonic() + 20
        while True:
            self.assertLess(time.monotonic(), deadline)
            line = response.readline().decode()
            self.assertNotEqual(line, "", "the stream ended")
            if line.startswith("event: "):
                name = line[len("event: "):].rstrip("\n")
            elif line.startswith("data: "):
                yield name, json.loads(line[len("data: "):])

    def run_event(self, events, condition):
        """The data of the first run event of `events` that `condition` holds for."""
        return next(data for name, data in events if name == "run" and condition(data))

    def queue_more_runs_than_the_stream_compares(self):
        self.add("short", "--every", "1m", "--", "true")
        backfilled = self.json_of("backfill", "short", "--from", "5h", "--until", "1h")
        self.assertGreater(len(backfilled), 200)

    def test_a_run_made_by_the_command_line_is_an_event(self):
        self.add("t", "--manual", "--", "true")
        url = self.start_web()
        _, response = self.open_stream(url)
        self.assertEqual(response.status, 200)
        self.assertEqual(response.headers["Content-Type"], "text/event-stream; charset=utf-8")
        self.assertEqual(response.headers["X-Content-Type-Options"], "nosniff")
        self.assertEqual(response.readline(), b"retry: 3000\n")  # watched from now on
        self.ok("trigger", "t")
        self.run_once()
        [run] = self.history()
        for name, data in self.events(response):
            if name == "run" and data["status"] == "succeeded":
                self.assertEqual(data, run)  # as history --json shows it
                break

    def test_the_end_of_a_run_that_many_later_runs_passed_is_a_run_event(self):
        release = os.path.join(self.tmp, "release")
        self.add("long", "--manual", "--", "sh", "-c", 'while [ ! -e "$0" ]; do sleep 0.05; done', release)
        proc = self.popen_taskd("run", "--web", "127.0.0.1:0", "--tick", "1s")
        self.addCleanup(self.stop, proc)
        _, response = self.open_stream(self.url_served_by(proc))
        self.assertEqual(response.readline(), b"retry: 3000\n")
        self.ok("trigger", "long")
        events = self.events(response)
        long_id = self.run_event(events, lambda run: run["task"] == "long" and run["status"] == "running")["id"]
        self.queue_more_runs_than_the_stream_compares()
        with open(release, "w"):
            pass
        end = self.run_event(events, lambda run: run["id"] == long_id and run["status"] != "running")
        self.assertEqual(end["status"], "succeeded")

    def test_a_queued_run_dropped_after_many_later_runs_is_a_run_event_with_its_reason(self):
        self.add("waiting", "--manual", "--overlap", "replace", "--", "true")
        _, response = self.open_stream(self.start_web())
        self.assertEqual(response.readline(), b"retry: 3000\n")
        self.ok("trigger", "waiting")  # no scheduler: it stays queued
        events = self.events(response)
        queued_id = self.run_event(events, lambda run: run["task"] == "waiting")["id"]
        self.queue_more_runs_than_the_stream_compares()
        self.ok("trigger", "waiting")  # overlap=replace: the queued run is dropped, a new one queued
        [dropped] = [run for run in self.history("waiting") if run["id"] == queued_id]
        self.assertEqual(dropped["status"], "dropped")
        # The reason with it, as history --json shows it.
        self.assertEqual(self.run_event(events, lambda run: run["id"] == queued_id and run["status"] != "queued"),
                         dropped)

    def test_events_need_the_token_when_reads_do(self):
        url = self.start_web("--token-for-reads", token=TOKEN)
        self.assertEqual(self.open_stream(url)[1].status, 401)
        self.assertEqual(self.open_stream(url, token="wrong")[1].status, 401)
        self.assertEqual(self.open_stream(url, token=TOKEN)[1].status, 200)

    def test_streams_are_bounded_and_hold_no_one_else(self):
        self.add("t", "--manual", "--", "true")
        url = self.start_web()
        streams = [self.open_stream(url)[1] for _ in range(32)]
        self.assertEqual({stream.status for stream in streams}, {200})
        refused = self.open_stream(url)[1]
        self.assertEqual(refused.status, 503)
        self.assertIn("event streams", json.loads(refused.read())["error"])
        self.assertEqual(self.get_json(url + "/api/v1/tasks")[0]["name"], "t")
        self.assertEqual(self.request(url + "/api/v1/events", method="POST", data=b"")[0], 405)

    def test_the_server_stops_with_streams_open(self):
        argv = ["web", "--listen", "127.0.0.1:0"]
        proc = self.popen_taskd(*argv)
        line = proc.stdout.readline()
        url = line.split()[-1].rstrip("/")
        streams = [self.open_stream(url)[1] for _ in range(3)]
        self.assertEqual({stream.status for stream in streams}, {200})
        proc.terminate()
        self.assertEqual(proc.wait(timeout=20), 0)
        proc.stdout.close()
        proc.stderr.close()


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

    def test_a_thousand_idle_connections_leave_room_for_others(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < 1100:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 2048), hard))
            self.addCleanup(resource.setrlimit, resource.RLIMIT_NOFILE, (soft, hard))
        idle = []
        self.addCleanup(lambda: [sock.close() for sock in idle])
        for _ in range(1000):
            idle.append(socket.create_connection(("127.0.0.1", self.port), timeout=20))
        started = time.monotonic()
        code, _, _ = self.request(self.url + "/healthz")
        self.assertEqual(code, 200)
        self.assertLess(time.monotonic() - started, 5)  # not after the idle ones were closed (10 s)

    def test_an_idle_connection_is_closed(self):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        sock.sendall(b"GET /api/v1/tasks HTTP/1.1\r\n")
        started = time.monotonic()
        self.assertEqual(sock.recv(100), b"")  # closed by the server, not answered
        self.assertLess(time.monotonic() - started, 25)
        sock.close()


if __name__ == "__main__":
    unittest.main()
