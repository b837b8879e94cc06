"""The clients of bench/web.sh (issue #31), each against a running `taskd web`:

  render URL ROUNDS [PATH] the board (PATH, default /) in headless chromium:
                           ms from navigation start to its rows drawn (the frame
                           after the table is filled) and the rows, one line a
                           round
  walk URL RUN_PAGES       every page a person or a monitor asks for: the board's
                           pages, /api/v1/tasks page after page to the end,
                           RUN_PAGES pages of /api/v1/runs, /metrics, /hosts ...
  latency URL TASKD DB ROUNDS
                           a run's end to the browser seeing its event: the
                           board's page holds an EventSource; each round
                           triggers a run and runs it with run-once; one line a
                           round, ms from the run's finished_at to the event
  board URL                what an open board asks every second, until killed

Chromium and chromedriver are Debian's, as in tests/cli/test_web_browser.py.
"""

import json
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from datetime import datetime

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1280,900",
]
WAIT_SECONDS = 30

# Runs before the board's own script: notes performance.now() (ms since
# navigation start) at the first frame after the table is shown with rows.
DRAWN_OBSERVER = """
new MutationObserver((changes, observer) => {
  const table = document.getElementById("tasks");
  if (!table || table.hidden || !table.querySelector("tbody tr")) return;
  observer.disconnect();
  requestAnimationFrame(() => { window.boardDrawnMs = performance.now(); });
}).observe(document, {subtree: true, childList: true, attributes: true});
"""


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument("--user-data-dir=" + tempfile.mkdtemp(prefix="chromium-"))
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait_for(driver, script, what):
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value is not None:
            return value
        time.sleep(0.02)  # the value is timed in the page; this only asks for it
    raise SystemExit("web.py: waited %d s for %s" % (WAIT_SECONDS, what))


def render(url, rounds, path="/"):
    driver = browser()
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": DRAWN_OBSERVER})
        for _ in range(int(rounds)):
            driver.get("about:blank")
            driver.get(url + path)
            drawn = wait_for(driver, "return window.boardDrawnMs ?? null", "the board's rows")
            rows = driver.execute_script("return document.querySelectorAll('#tasks tbody tr').length")
            print("%.1f %d" % (drawn, rows), flush=True)
    finally:
        driver.quit()


def get(url):
    with urllib.request.urlopen(url, timeout=120) as response:
        return response.read()


def get_json(url):
    return json.loads(get(url))


def walk_tasks(url):
    after, pages, tasks = "", 0, 0
    while True:
        page = get_json(url + "/api/v1/tasks?limit=5000&after=" + urllib.parse.quote(after))
        if not page:
            return pages, tasks
        pages, tasks, after = pages + 1, tasks + len(page), page[-1]["name"]


def walk_runs(url, most_pages, query=""):
    before, pages, runs = "", 0, 0
    while pages < most_pages:
        page = get_json(url + "/api/v1/runs?limit=1000" + query + ("&before=%d" % before if before else ""))
        if not page:
            break
        pages, runs, before = pages + 1, runs + len(page), page[-1]["id"]
    return pages, runs


def walk(url, run_pages):
    for path in ("/", "/timeline", "/hosts", "/board.js", "/common.js", "/board.css", "/healthz",
                 "/api/v1/hosts", "/api/v1/tasks", "/api/v1/runs?limit=1000", "/api/v1/runs?since=1d&limit=1000"):
        get(url + path)
    first = get_json(url + "/api/v1/tasks?limit=1")
    if first:
        name = urllib.parse.quote(first[0]["name"], safe="")
        for view in ("", "/explain", "/forecast?count=1000"):
            get(url + "/api/v1/tasks/" + name + view)
        walk_runs(url, 10, "&task=" + name)
    metrics_bytes = [len(get(url + "/metrics")) for _ in range(3)]
    task_pages, tasks = walk_tasks(url)
    run_pages_read, runs = walk_runs(url, int(run_pages))
    failed_pages, failed = walk_runs(url, max(1, int(run_pages) // 10), "&status=failed")
    print("tasks %d in %d pages; runs %d in %d pages; failed runs %d in %d pages; /metrics %d bytes x 3"
          % (tasks, task_pages, runs, run_pages_read, failed, failed_pages, metrics_bytes[0]))


def unix_ms(rfc3339):
    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp() * 1000


def latency(url, taskd, db, rounds):
    driver = browser()
    try:
        driver.get(url + "/hosts")  # a page of the board's origin; its own polls do not matter
        driver.execute_script("""
          window.ended = [];
          const events = new EventSource("/api/v1/events");
          events.addEventListener("run", (event) => {
            const run = JSON.parse(event.data);
            if (run.finished_at) window.ended.push([run.id, run.finished_at, Date.now()]);
          });""")
        wait_for(driver, "return document.readyState === 'complete' ? true : null", "the page")
        time.sleep(1)  # the stream's first line (it is watched) comes within the feed's 500 ms wait
        for round in range(int(rounds)):
            subprocess.run([taskd, "--db", db, "trigger", "bench-latency"], check=True, stdout=subprocess.DEVNULL)
            subprocess.run([taskd, "--db", db, "run-once"], check=True)
            ended = wait_for(driver, "return window.ended.length > %d ? window.ended[%d] : null" % (round, round),
                             "the end of run %d" % (round + 1))
            print("%.0f" % (ended[2] - unix_ms(ended[1])), flush=True)
    finally:
        driver.quit()


def board(url):
    """The page, its script, and the board's two requests, every second; an event stream read meanwhile."""
    def read_events():
        with urllib.request.urlopen(url + "/api/v1/events") as events:
            while events.readline():
                pass
    threading.Thread(target=read_events, daemon=True).start()
    while True:
        started = time.monotonic()
        for path in ("/", "/board.js", "/common.js", "/board.css", "/api/v1/tasks", "/api/v1/runs?limit=1000"):
            get(url + path)
        time.sleep(max(0.0, 1 - (time.monotonic() - started)))


if __name__ == "__main__":
    commands = {"render": render, "walk": walk, "latency": latency, "board": board}
    commands[sys.argv[1]](*sys.argv[2:])
