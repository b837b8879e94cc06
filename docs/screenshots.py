#!/usr/bin/python3
"""Takes docs/board.png and docs/timeline.png: a day of a few demo tasks in a
throwaway database, served by `taskd web` and shot in headless chromium.

    docs/screenshots.py build/taskd

Run from anywhere (it needs faketime); the database lives in a temporary
directory. The runs are real: `run-once` at past times under faketime."""

import os
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

DOCS = os.path.dirname(os.path.abspath(__file__))
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--hide-scrollbars",
]
# name, schedule, command
TASKS = [
    ("backup-db", ["--cron", "0 */3 * * *"], ["sh", "-c", "sleep 0.4"]),
    ("fetch-rates", ["--every", "30m"], ["sh", "-c", "sleep 0.1; [ $(date +%H) != 14 ]"]),
    ("rotate-logs", ["--cron", "15 * * * *"], ["true"]),
    ("send-digest", ["--cron", "0 8 * * *"], ["sh", "-c", "echo sent"]),
    ("sync-mirror", ["--every", "2h"], ["sh", "-c", "sleep 0.3; exit 1"]),
    ("weekly-report", ["--cron", "0 6 * * 1"], ["true"]),
]
QUARTER = 15 * 60


def taskd(binary, db, at, *args):
    """taskd at time `at` (seconds since the epoch), as faketime shows it."""
    stamp = time.strftime("@%Y-%m-%d %H:%M:%S", time.gmtime(at))
    home = os.path.dirname(db)
    subprocess.run(["faketime", "-f", stamp, binary, "--db", db, *args], check=True, stdout=subprocess.DEVNULL,
                   cwd=home, env={**os.environ, "TZ": "UTC", "TMPDIR": home})


def fill(binary, db):
    """A day of history: the tasks added a day ago, and run-once every quarter
    of an hour since, a little late each time, so that each slot ran in its time."""
    now = time.time()
    start = now - 86400 - now % QUARTER
    for name, schedule, command in TASKS:
        taskd(binary, db, start - 60, "add", name, *schedule, "--", *command)
    for quarter, at in enumerate(range(int(start), int(now), QUARTER)):
        taskd(binary, db, at + 5 + quarter * 7 % 40, "run-once")


def browser(profile):
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for flag in CHROMIUM_FLAGS + ["--user-data-dir=" + profile, "--window-size=1100,520"]:
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def main(binary):
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "taskd.db")
        fill(binary, db)
        web = subprocess.Popen([binary, "--db", db, "web", "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                               text=True)
        try:
            url = web.stdout.readline().split()[-1].rstrip("/")
            driver = browser(os.path.join(tmp, "chromium"))
            try:
                driver.get(url + "/")
                WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#tasks a.run"))
                driver.save_screenshot(os.path.join(DOCS, "board.png"))
                driver.get(url + "/timeline")
                WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#chart rect.bar"))
                driver.save_screenshot(os.path.join(DOCS, "timeline.png"))
            finally:
                driver.quit()
        finally:
            web.terminate()
            web.wait()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: docs/screenshots.py TASKD_BINARY")
    main(os.path.abspath(sys.argv[1]))
