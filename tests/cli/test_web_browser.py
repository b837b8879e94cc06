"""taskd web in a real browser (Debian's chromium, chromium-driver and
python3-selenium, headless): the board shows the tasks and their strips,
picks up a run without a reload, triggers with the token and not without
it, shows hostile names as text, and fits a phone's width; the timeline
draws a bar per run, page after page, and 10 000 bars without stalling;
a run's page shows its output as text."""

import os
import sys
import tempfile
import time
import unittest

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from test_web import TOKEN, WebTestCase

WAIT_SECONDS = 20
# As root and with no network: without these, chromium waits on lookups and updates.
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1280,900",
]
HOSTILE_NAMES = ['<script>alert(1)</script>', 'quote"\'s', '<img src=x onerror=alert(2)>']


class BrowserTestCase(WebTestCase):
    def open_browser(self):
        """A headless chromium of this test alone (its own profile in self.tmp)."""
        options = Options()
        options.binary_location = "/usr/bin/chromium"
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        options.add_argument("--user-data-dir=" + tempfile.mkdtemp(prefix="chromium-", dir=self.tmp))
        service = Service("/usr/bin/chromedriver", log_path=os.path.join(self.tmp, "chromedriver.log"))
        driver = webdriver.Chrome(service=service, options=options)
        self.addCleanup(driver.quit)
        return driver

    def until(self, driver, condition, what):
        # The board redraws its rows as news comes: an element found before a
        # redraw is gone after it, and the condition is asked again.
        return WebDriverWait(driver, WAIT_SECONDS, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda d: condition(d), "waited for " + what)

    def open_board(self, driver, url, names):
        """Opens the board at `url` and waits for a row for each of `names`."""
        driver.get(url + "/")
        self.until(driver, lambda d: set(self.row_names(d)) == set(names), "the rows of %r" % (names,))

    def row_names(self, driver):
        return [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "#tasks tbody td.name")]

    def row(self, driver, name):
        return next(row for row in driver.find_elements(By.CSS_SELECTOR, "#tasks tbody tr")
                    if row.find_element(By.CSS_SELECTOR, "td.name").text == name)

    def click_in_row(self, driver, name, selector):
        """Clicks the element `selector` finds in task `name`'s row once there
        is one; found again when a redraw (news, the strips' runs) took the
        row away before the click."""
        def clicked(d):
            found = self.row(d, name).find_elements(By.CSS_SELECTOR, selector)
            if found:
                found[0].click()
            return bool(found)
        self.until(driver, clicked, "%s in the row of %s" % (selector, name))

    def marks(self, driver, name):
        """The classes of the strip's marks of task `name`, oldest first."""
        return [mark.get_attribute("class") for mark in self.row(driver, name).find_elements(By.CSS_SELECTOR, ".run")]

    def assertNoAlert(self, driver):
        with self.assertRaises(NoAlertPresentException):
            driver.switch_to.alert.text


class BoardTest(BrowserTestCase):
    def test_the_board_lists_the_tasks_with_their_strips(self):
        self.add("alpha", "--every", "1h", "--", "echo", "hello")
        self.add("beta", "--manual", "--", "false")
        self.add("gamma", "--manual", "--", "true")
        for name in ("alpha", "beta", "alpha"):
            self.ok("trigger", name)
            self.run_once()
        driver = self.open_browser()
        self.open_board(driver, self.start_web(), ["alpha", "beta", "gamma"])
        self.assertEqual(self.marks(driver, "alpha"), ["run succeeded", "run succeeded"])
        self.assertEqual(self.marks(driver, "beta"), ["run failed"])
        self.assertEqual(self.marks(driver, "gamma"), [])
        self.assertEqual(self.row(driver, "beta").find_element(By.CSS_SELECTOR, ".state-failing").text, "failing")
        self.assertEqual(self.row(driver, "alpha").find_elements(By.TAG_NAME, "td")[1].text, "every 1h")

    def test_a_run_shows_up_without_a_reload(self):
        self.add("late", "--manual", "--", "true")
        driver = self.open_browser()
        self.open_board(driver, self.start_web(), ["late"])
        self.assertEqual(self.marks(driver, "late"), [])
        driver.execute_script("window.sameDocument = true")
        self.ok("trigger", "late")
        self.run_once()
        self.until(driver, lambda d: self.marks(d, "late") == ["run succeeded"], "the run's mark")
        self.assertTrue(driver.execute_script("return window.sameDocument === true"))

    def test_a_run_shows_up_through_the_server_s_events(self):
        self.add("late", "--manual", "--", "true")
        driver = self.open_browser()
        self.open_board(driver, self.start_web(), ["late"])
        # No timed poll from now on: only an event can make the board ask.
        driver.execute_script("for (let id = 0; id < 100000; ++id) clearTimeout(id);"
                              "window.setTimeout = () => 0;")
        self.ok("trigger", "late")
        self.run_once()
        self.until(driver, lambda d: self.marks(d, "late") == ["run succeeded"], "the run's mark")

    def test_one_chain_of_polls_however_often_asked(self):
        self.add("t", "--manual", "--", "true")
        driver = self.open_browser()
        self.open_board(driver, self.start_web(), ["t"])
        driver.execute_script(HOLD_POLLS)
        use = driver.find_element(By.CSS_SELECTOR, "#token-form button")
        for _ in range(3):  # the first asks at once; the others while that one is held
            use.click()
        WebDriverWait(driver, 40).until(lambda d: len(d.execute_script("return window.polls")) >= 5, "5 polls")
        polls = driver.execute_script("return window.polls")
        # After the one asked during the held poll, each comes a poll's wait after the one before.
        gaps = [later - earlier for earlier, later in zip(polls[1:5], polls[2:5])]
        self.assertGreaterEqual(min(gaps), 2900, polls)

    def test_the_trigger_button_needs_the_token(self):
        self.add("t", "--every", "1h", "--", "true")
        driver = self.open_browser()
        self.open_board(driver, self.start_web(token=TOKEN), ["t"])
        notice = driver.find_element(By.ID, "notice")
        self.click_in_row(driver, "t", "button.trigger")
        self.until(driver, lambda d: notice.text != "", "the refusal")
        self.assertEqual(notice.text, "Cannot trigger t: this needs the token")
        self.assertEqual(self.history(), [])
        driver.find_element(By.ID, "token").send_keys(TOKEN)
        driver.find_element(By.CSS_SELECTOR, "#token-form button").click()
        self.click_in_row(driver, "t", "button.trigger")
        self.until(driver, lambda d: notice.text.endswith(" queued"), "the queued run")
        [run] = self.history()
        self.assertEqual((run["task"], run["trigger"], run["status"]), ("t", "manual", "queued"))
        self.assertEqual(notice.text, "t: run %d queued" % run["id"])
        self.until(driver, lambda d: self.marks(d, "t") == ["run queued"], "the queued run's mark")

    def test_hostile_names_are_text_and_run_nothing(self):
        for index, name in enumerate(HOSTILE_NAMES):  # the command line takes no such name: a row holds it
            self.add("t%d" % index, "--manual", "--", "true")
            self.sql("UPDATE tasks SET name = ? WHERE name = ?", (name, "t%d" % index))
        driver = self.open_browser()
        url = self.start_web(token=TOKEN)
        self.open_board(driver, url, HOSTILE_NAMES)
        self.assertNoAlert(driver)
        self.assertEqual(driver.find_elements(By.TAG_NAME, "img"), [])
        scripts = [s.get_attribute("src") for s in driver.find_elements(By.TAG_NAME, "script")]
        self.assertEqual(scripts, [url + "/common.js", url + "/board.js"])
        # Triggered through its button, each name reaches the API intact.
        driver.find_element(By.ID, "token").send_keys(TOKEN)
        driver.find_element(By.CSS_SELECTOR, "#token-form button").click()
        for name in HOSTILE_NAMES:
            self.click_in_row(driver, name, "button.trigger")
            self.until(driver, lambda d: [r["task"] for r in self.history()].count(name) == 1, "a run of " + name)
        self.assertNoAlert(driver)

    def position(self, driver):
        return driver.find_element(By.ID, "position").text

    def on_page(self, driver, names, position):
        self.until(driver, lambda d: self.row_names(d) == names and self.position(d) == position,
                   "%r, %s" % (names, position))

    def test_pages_of_tasks_by_the_url_next_previous_and_a_reload(self):
        names = ["t%d" % i for i in range(1, 8)]
        for name in names:
            self.add(name, "--manual", "--", "true")
        driver = self.open_browser()
        url = self.start_web()
        driver.get(url + "/?limit=3")
        self.on_page(driver, names[0:3], "1–3 of 7")
        driver.find_element(By.ID, "next").click()
        self.on_page(driver, names[3:6], "4–6 of 7")
        self.assertEqual(driver.current_url, url + "/?after=t3&limit=3")
        driver.refresh()  # the same page, and Previous still goes back a page
        self.on_page(driver, names[3:6], "4–6 of 7")
        driver.find_element(By.ID, "next").click()
        self.on_page(driver, names[6:], "7–7 of 7")
        self.assertFalse(driver.find_element(By.ID, "next").is_enabled())
        driver.find_element(By.ID, "previous").click()
        self.on_page(driver, names[3:6], "4–6 of 7")
        driver.find_element(By.ID, "previous").click()
        self.on_page(driver, names[0:3], "1–3 of 7")
        self.assertFalse(driver.find_element(By.ID, "previous").is_enabled())
        Select(driver.find_element(By.ID, "page-size")).select_by_visible_text("100")
        self.on_page(driver, names, "1–7 of 7")
        self.assertEqual(driver.current_url, url + "/?limit=100")

    def test_a_later_page_shows_its_tasks_strips_however_much_others_ran(self):
        self.add("a", "--manual", "--", "true")
        self.add("b", "--manual", "--", "true")
        self.ok("trigger", "b")
        self.run_once()
        # A thousand newer runs of a: the newest runs of all tasks hold none of b's.
        self.sql("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) "
                 "INSERT INTO runs (task_id, status, trigger, scheduled_at, enqueued_at, not_before, started_at, "
                 "finished_at) SELECT (SELECT id FROM tasks WHERE name = 'a'), 'succeeded', 'manual', i, i, i, i, i "
                 "FROM n")
        driver = self.open_browser()
        driver.get(self.start_web() + "/?after=a&limit=1")
        self.on_page(driver, ["b"], "2–2 of 2")
        self.until(driver, lambda d: self.marks(d, "b") == ["run succeeded"], "b's strip")

    def test_filters_in_the_url_page_what_they_select(self):
        for name in ("a1", "b1", "b2", "b3", "c1"):
            self.add(name, "--manual", *(["--group", "g"] if name != "b3" else []), "--", "true")
        driver = self.open_browser()
        url = self.start_web()
        driver.get(url + "/?name=b*&group=g&limit=1")
        self.on_page(driver, ["b1"], "1–1 of 2")
        self.assertEqual(driver.find_element(By.NAME, "name").get_attribute("value"), "b*")
        driver.find_element(By.ID, "next").click()
        self.on_page(driver, ["b2"], "2–2 of 2")
        self.assertEqual(driver.current_url, url + "/?name=b*&group=g&after=b1&limit=1")
        name = driver.find_element(By.NAME, "name")
        name.clear()
        name.send_keys("*1", Keys.ENTER)  # a new filter: from its first page, the page size kept
        self.on_page(driver, ["a1"], "1–1 of 3")
        self.assertEqual(driver.current_url, url + "/?name=*1&group=g&limit=1")
        self.ok("edit", "c1", "--on-host", "h1")
        driver.get(url + "/?host=h1")
        self.on_page(driver, ["c1"], "1–1 of 1")
        self.assertEqual(driver.find_element(By.NAME, "host").get_attribute("value"), "h1")

    def test_a_filter_being_typed_stays_as_typed_while_the_board_reads_again(self):
        self.add("t", "--manual", "--", "true")
        driver = self.open_browser()
        self.open_board(driver, self.start_web(), ["t"])
        driver.find_element(By.NAME, "name").send_keys("x*")
        self.ok("trigger", "t")
        self.run_once()
        self.until(driver, lambda d: self.marks(d, "t") == ["run succeeded"], "the board read again")
        self.assertEqual(driver.find_element(By.NAME, "name").get_attribute("value"), "x*")

    def test_a_queued_run_dropped_is_said_live(self):
        self.add("waiting", "--manual", "--overlap", "replace", "--", "true")
        driver = self.open_browser()
        self.open_board(driver, self.start_web(), ["waiting"])
        self.ok("trigger", "waiting")
        [queued] = self.history()
        self.ok("trigger", "waiting")  # overlap=replace drops the queued run
        notice = driver.find_element(By.ID, "notice")
        self.until(driver, lambda d: notice.text.startswith("waiting: run %d replaced by the run of slot "
                                                            % queued["id"]), "the drop said")

    def test_the_board_fits_a_phone(self):
        self.add("a-task-with-a-rather-long-name-that-a-phone-must-wrap-somewhere", "--every", "1h", "--", "true")
        self.add("short", "--cron", "*/5 * * * *", "--", "true")
        self.ok("backfill", "short", "--from", "3h", "--until", "1m")  # a full strip: 20 marks
        driver = self.open_browser()
        driver.set_window_size(390, 844)
        self.open_board(driver, self.start_web(), ["a-task-with-a-rather-long-name-that-a-phone-must-wrap-somewhere",
                                                   "short"])
        width, overflow = driver.execute_script(
            "return [document.documentElement.clientWidth, document.body.scrollWidth]")
        self.assertLessEqual(width, 390)
        self.assertLessEqual(overflow, width)
        self.until(driver, lambda d: len(self.marks(d, "short")) == 20, "a full strip")
        button = self.row(driver, "short").find_element(By.CSS_SELECTOR, "button.trigger")
        self.assertLessEqual(button.rect["x"] + button.rect["width"], width)


class TimelineTest(BrowserTestCase):
    def bars(self, driver):
        """{run id: the bar's class}, of every bar drawn."""
        return {int(bar.get_attribute("data-run")): bar.get_attribute("class")
                for bar in driver.find_elements(By.CSS_SELECTOR, "#chart a rect.bar")}

    def test_a_bar_per_run_in_its_task_s_row_linked_to_the_run(self):
        self.add("alpha", "--manual", "--", "true")
        self.add("beta", "--manual", "--", "false")
        self.add("hourly", "--every", "1h", "--", "true")
        for name in ("alpha", "beta", "alpha"):
            self.ok("trigger", name)
            self.run_once()
        runs = {run["id"]: run for run in self.history()}
        driver = self.open_browser()
        url = self.start_web()
        driver.get(url + "/timeline")
        self.until(driver, lambda d: len(self.bars(d)) == 3, "3 bars")
        self.assertEqual(self.bars(driver), {id: "bar " + run["status"] for id, run in runs.items()})
        # One row per task with a run, or a slot planned in view (hourly's next, faint).
        lanes = [lane.text for lane in driver.find_elements(By.CSS_SELECTOR, "#lanes .lane")]
        self.assertEqual(lanes, ["alpha", "beta", "hourly"])
        self.assertEqual(driver.find_element(By.CSS_SELECTOR, "#chart path.planned").get_attribute("d").count("M"), 1)
        self.assertEqual(driver.find_element(By.CSS_SELECTOR, "#chart path.slot").get_attribute("d").count("v"), 3)
        links = [a.get_dom_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "#chart a")]
        self.assertEqual(sorted(links), sorted("/runs/%d" % id for id in runs))
        for lane, name in zip(driver.find_elements(By.CSS_SELECTOR, "#lanes .lane"), lanes):
            bars = [b for b in driver.find_elements(By.CSS_SELECTOR, "#chart rect.bar")
                    if runs[int(b.get_attribute("data-run"))]["task"] == name]
            for bar in bars:
                self.assertEqual(bar.rect["y"] - lane.rect["y"], 4)  # in its task's row

    def test_more_runs_than_a_page_of_the_api(self):
        self.add("minutely", "--every", "1m", "--", "true")
        self.ok("backfill", "minutely", "--from", "23h", "--until", "1m")
        count = len(self.json_of("history", "--since", "1d", "--limit", "10000"))
        self.assertGreater(count, 1000)
        driver = self.open_browser()
        driver.get(self.start_web() + "/timeline")
        self.until(driver, lambda d: d.find_element(By.ID, "status").text == "%d runs" % count, "%d runs" % count)
        self.assertEqual(len(driver.find_elements(By.CSS_SELECTOR, "#chart rect.bar")), count)

    def test_an_unknown_span_is_the_last_day(self):
        self.add("alpha", "--manual", "--", "true")
        self.ok("trigger", "alpha")
        self.run_once()
        driver = self.open_browser()
        url = self.start_web()
        for span in ("__proto__", "constructor", "toString", "fortnight"):
            with self.subTest(span=span):
                driver.get(url + "/timeline?span=" + span)
                self.until(driver, lambda d: d.find_element(By.ID, "status").text == "1 run", "1 run")
                self.assertEqual(len(self.bars(driver)), 1)
        current = driver.find_elements(By.CSS_SELECTOR, "nav a[aria-current=page]")
        self.assertEqual([link.get_dom_attribute("href") for link in current], ["/timeline"])

    def test_ten_thousand_bars_draw_without_stalling(self):
        driver = self.open_browser()
        driver.get(self.start_web() + "/timeline")
        self.until(driver, lambda d: d.find_element(By.ID, "status").text == "0 runs", "the empty timeline")
        driver.set_script_timeout(WAIT_SECONDS)
        elapsed = driver.execute_async_script(DRAW_10000)
        self.assertEqual(len(driver.find_elements(By.CSS_SELECTOR, "#lanes .lane")), 100)
        self.assertEqual(driver.execute_script("return document.querySelectorAll('#chart rect.bar').length"), 10000)
        print("\n10 000 bars drawn and painted in %.0f ms" % elapsed, file=sys.stderr)
        self.assertLess(elapsed, 2000)


    def span_shown(self, driver):
        chart = driver.find_element(By.ID, "chart")
        return float(chart.get_attribute("data-from")), float(chart.get_attribute("data-to"))

    def shows(self, driver, start, end):
        """Whether the chart shows [start, end], to the millisecond."""
        shown = self.span_shown(driver)
        return abs(shown[0] - start) < 1 and abs(shown[1] - end) < 1

    def test_zoom_pan_and_rows_by_host_over_ten_thousand_runs(self):
        driver = self.open_browser()
        driver.get(self.start_web() + "/timeline")
        self.until(driver, lambda d: d.find_element(By.ID, "status").text == "0 runs", "the empty timeline")
        self.assertFalse(driver.find_element(By.ID, "lanes-by").is_displayed())  # one host or none
        driver.execute_script(SHOW_10000)
        count = "return document.querySelectorAll('#chart rect.bar').length"
        self.assertEqual(driver.execute_script(count), 10000)
        start, end = self.span_shown(driver)
        driver.find_element(By.ID, "zoom-in").click()
        quarter = (end - start) / 4
        self.until(driver, lambda d: self.shows(d, start + quarter, end - quarter), "half, around the middle")
        self.assertLess(driver.execute_script(count), 10000)
        driver.find_element(By.TAG_NAME, "body").send_keys("-")
        self.until(driver, lambda d: self.shows(d, start, end), "the first span again")
        self.assertEqual(driver.execute_script(count), 10000)
        driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_LEFT)
        self.until(driver, lambda d: self.shows(d, start - quarter, end - quarter), "a quarter earlier")
        driver.find_element(By.ID, "later").click()
        self.until(driver, lambda d: self.shows(d, start, end), "back")
        # A drag to the right shows what came before.
        chart = driver.find_element(By.ID, "chart")
        ActionChains(driver).move_to_element(chart).click_and_hold().move_by_offset(100, 0).release().perform()
        self.until(driver, lambda d: self.span_shown(d)[0] < start, "an earlier span")
        self.assertLess(driver.execute_script(count), 10000)  # the newest runs are past the right edge
        driver.set_script_timeout(WAIT_SECONDS)
        elapsed = driver.execute_async_script(ZOOM_OUT_TIMED)
        print("\n10 000 bars drawn after a zoom out in %.0f ms" % elapsed, file=sys.stderr)
        self.assertLess(elapsed, 2000)
        self.assertEqual(driver.execute_script(count), 10000)
        # Runs from two hosts: rows by host, a hostile host name as text.
        toggle = driver.find_element(By.ID, "lanes-by")
        self.assertTrue(toggle.is_displayed())
        toggle.find_element(By.CSS_SELECTOR, "button[data-by=host]").click()
        lanes = lambda d: [lane.text for lane in d.find_elements(By.CSS_SELECTOR, "#lanes .lane")]
        self.until(driver, lambda d: lanes(d) == sorted(["alpha.example", HOSTILE_NAMES[2]]), "a row per host")
        self.assertEqual(driver.execute_script(count), 10000)
        self.assertEqual(driver.find_elements(By.CSS_SELECTOR, "#lanes img"), [])
        toggle.find_element(By.CSS_SELECTOR, "button[data-by=task]").click()
        self.until(driver, lambda d: len(lanes(d)) == 100, "a row per task")
        self.assertNoAlert(driver)

# Every poll of the board's tasks is noted (window.polls, in ms) and held
# half a second before it goes out.
HOLD_POLLS = """
window.polls = [];
const realFetch = window.fetch;
window.fetch = (path, options) => {
  if (String(path).startsWith("/api/v1/tasks")) window.polls.push(performance.now());
  return new Promise((resolve) => setTimeout(resolve, 500)).then(() => realFetch(path, options));
};
"""


# 10 000 runs of 100 tasks over the last day, drawn as the timeline draws
# what the API gives, timed to the frame painted after.
DRAW_10000 = """
const done = arguments[arguments.length - 1];
const now = Date.now(), from = now - 86400e3;
const statuses = ["succeeded", "failed", "timed_out", "skipped", "running"];
const runs = [];
for (let i = 0; i < 10000; ++i) {
  const slot = from + (i / 10000) * 86400e3;
  const iso = (ms) => new Date(ms).toISOString();
  runs.push({id: i + 1, task: "task-" + (i % 100), status: statuses[i % 5], scheduled_at: iso(slot),
             started_at: iso(slot + 2000), finished_at: i % 5 === 4 ? null : iso(slot + 60000)});
}
const started = performance.now();
draw(runs, [], {from, to: now + 7200e3, now});
requestAnimationFrame(() => setTimeout(() => done(performance.now() - started)));
"""


# The same runs from two hosts shown as if the API gave them, read over a
# month around them (no move reads the API again).
SHOW_10000 = """
const now = Date.now(), from = now - 86400e3;
const runs = [];
for (let i = 0; i < 10000; ++i) {
  const slot = from + (i / 10000) * 86400e3;
  const iso = (ms) => new Date(ms).toISOString();
  runs.push({id: i + 1, task: "task-" + (i % 100), status: "succeeded", scheduled_at: iso(slot),
             started_at: iso(slot + 2000), finished_at: iso(slot + 60000),
             host: i % 2 ? "alpha.example" : "<img src=x onerror=alert(2)>"});
}
show(runs, [], {from, to: now + 7200e3, now}, {from: from - 30 * 86400e3, to: now + 30 * 86400e3});
"""

# A zoom out, timed to the frame painted after it is drawn.
ZOOM_OUT_TIMED = """
const done = arguments[arguments.length - 1];
const started = performance.now();
document.getElementById("zoom-out").click();
requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => done(performance.now() - started))));
"""


class TaskPageTest(BrowserTestCase):
    def rows(self, driver):
        return [int(row.get_attribute("data-run")) for row in driver.find_elements(By.CSS_SELECTOR, "#runs tbody tr")]

    def test_a_task_s_definition_runs_page_by_page_explain_and_next_slots(self):
        self.add("alpha", "--every", "1h", "--group", "g", "--", "echo", "hi")
        self.ok("backfill", "alpha", "--from", "25h", "--until", "1m")
        runs = [run["id"] for run in self.history("alpha")]
        self.assertGreater(len(runs), 20)
        driver = self.open_browser()
        driver.get(self.start_web() + "/tasks/alpha")
        self.until(driver, lambda d: self.rows(d) == runs[:20], "the first page of runs")
        older = driver.find_element(By.ID, "older")
        self.until(driver, lambda d: d.find_element(By.ID, "explain-next").text != "", "the explain of the next run")
        self.assertEqual(driver.find_element(By.ID, "title").text, "alpha")
        fact = lambda name: driver.find_element(By.CSS_SELECTOR, "dd[data-fact='%s']" % name).text
        self.assertEqual((fact("Schedule"), fact("Command"), fact("Group")), ("every 1h", "echo hi", "g"))
        self.assertNotEqual(driver.find_element(By.ID, "explain-latest").text, "")
        self.assertEqual(len(driver.find_elements(By.CSS_SELECTOR, "#slots li")), 5)
        older.click()
        self.until(driver, lambda d: self.rows(d) == runs, "every run")
        self.assertFalse(older.is_displayed())

    def test_a_hostile_name_from_the_board_is_text(self):
        name = HOSTILE_NAMES[2]
        self.add("t", "--manual", "--", "true")
        self.sql("UPDATE tasks SET name = ? WHERE name = 't'", (name,))
        driver = self.open_browser()
        url = self.start_web(token=TOKEN)
        self.open_board(driver, url, [name])
        self.click_in_row(driver, name, "td.name a")
        self.until(driver, lambda d: d.find_elements(By.ID, "title") and d.find_element(By.ID, "title").text == name
                   and d.find_element(By.ID, "status").text == "", "the task's page")
        self.assertEqual(driver.find_elements(By.TAG_NAME, "img"), [])
        scripts = [s.get_attribute("src") for s in driver.find_elements(By.TAG_NAME, "script")]
        self.assertEqual(scripts, [url + "/common.js", url + "/task.js"])
        driver.find_element(By.ID, "token").send_keys(TOKEN)
        driver.find_element(By.CSS_SELECTOR, "#token-form button").click()
        driver.find_element(By.CSS_SELECTOR, "#actions button.trigger").click()
        self.until(driver, lambda d: [run["task"] for run in self.history()] == [name], "its run")
        self.until(driver, lambda d: len(self.rows(d)) == 1, "its run on the page")
        self.assertNoAlert(driver)


class RunPageTest(BrowserTestCase):
    def test_a_run_s_facts_and_its_hostile_output_as_text(self):
        self.add("noisy", "--manual", "--", "sh", "-c",
                 "printf '<script>alert(1)</script>\\n<img src=x onerror=alert(2)>\\n\\377\\033[31mred'; exit 3")
        self.ok("trigger", "noisy")
        self.run_once()
        [run] = self.history()
        driver = self.open_browser()
        url = self.start_web()
        driver.get(url + "/runs/%d" % run["id"])
        title = driver.find_element(By.ID, "title")
        self.until(driver, lambda d: title.text == "Run %d of noisy" % run["id"], "the run's title")
        output = driver.find_element(By.ID, "output").get_attribute("textContent")
        self.assertEqual(output, "<script>alert(1)</script>\n<img src=x onerror=alert(2)>\n\ufffd\x1b[31mred")
        fact = lambda name: driver.find_element(By.CSS_SELECTOR, "dd[data-fact='%s']" % name).text
        self.assertEqual((fact("Status"), fact("Exit code"), fact("Attempt")), ("failed", "3", str(run["attempt_no"])))
        self.assertEqual(fact("Host"), run["host"])
        self.assertEqual(driver.find_elements(By.TAG_NAME, "img"), [])
        scripts = [s.get_attribute("src") for s in driver.find_elements(By.TAG_NAME, "script")]
        self.assertEqual(scripts, [url + "/common.js", url + "/run.js"])
        self.assertNoAlert(driver)

    def test_a_running_run_s_output_grows_on_its_page(self):
        go = os.path.join(self.tmp, "go")
        self.add("slow", "--manual", "--", "sh", "-c",
                 "echo first; while [ ! -e %s ]; do sleep 0.1; done; echo second" % go)
        self.ok("trigger", "slow")
        [run] = self.history()
        worker = self.popen_taskd("run-once")

        def release():  # whatever happened: the run ends, run-once with it
            open(go, "w").close()
            worker.communicate(timeout=60)
        self.addCleanup(release)
        driver = self.open_browser()
        driver.get(self.start_web() + "/runs/%d" % run["id"])
        output = driver.find_element(By.ID, "output")
        status = lambda: driver.find_element(By.CSS_SELECTOR, "dd[data-fact='Status']").text
        self.until(driver, lambda d: output.text == "first" and status() == "running", "the first line, running")
        driver.execute_script("window.sameDocument = true")
        open(go, "w").close()
        self.until(driver, lambda d: output.text == "first\nsecond" and status() == "succeeded", "the second line")
        self.assertTrue(driver.execute_script("return window.sameDocument === true"))

    def test_a_failed_poll_is_said_and_the_page_polls_on(self):
        self.add("t", "--manual", "--", "echo", "done")
        self.ok("trigger", "t")
        [run] = self.history()
        driver = self.open_browser()
        driver.get(self.start_web() + "/runs/%d" % run["id"])
        status = driver.find_element(By.ID, "status")
        fact = lambda: driver.find_element(By.CSS_SELECTOR, "dd[data-fact='Status']").text
        self.until(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "dd") and fact() == "queued", "the queued run")
        driver.execute_script("window.realFetch = window.fetch;"
                              "window.fetch = () => Promise.reject(new TypeError('the network is down'))")
        self.until(driver, lambda d: status.text.startswith("the network is down (asking again in "), "the error")
        driver.execute_script("window.fetch = window.realFetch")
        self.run_once()
        self.until(driver, lambda d: fact() == "succeeded" and d.find_element(By.ID, "output").text == "done",
                   "the run's end")
        self.assertEqual(status.text, "")

    def test_the_strip_leads_to_the_run(self):
        self.add("alpha", "--manual", "--", "echo", "hello")
        self.ok("trigger", "alpha")
        self.run_once()
        [run] = self.history()
        driver = self.open_browser()
        self.open_board(driver, self.start_web(), ["alpha"])
        self.click_in_row(driver, "alpha", "a.run")
        self.until(driver, lambda d: d.find_elements(By.ID, "output")
                   and d.find_element(By.ID, "output").text == "hello", "the run's output")
        self.assertTrue(driver.current_url.endswith("/runs/%d" % run["id"]))

    def test_a_run_that_is_not_there(self):
        driver = self.open_browser()
        driver.get(self.start_web() + "/runs/999")
        self.until(driver, lambda d: d.find_element(By.ID, "status").text == "no run 999", "the error")


class HostsPageTest(BrowserTestCase):
    def test_each_host_s_heartbeat_offset_containment_and_runs_as_text(self):
        self.add("pinned", "--manual", "--on-host", "faraway.example", "--", "true")
        now_ms = int(time.time() * 1000)
        for host, pid, offset in ((HOSTILE_NAMES[2], 77, 1500), ("elsewhere.example", 78, -12)):
            self.sql("INSERT INTO workers (role, host, pid, boot_id, process_start, concurrency, started_at, "
                     "heartbeat_at, clock_offset_ms, containment) VALUES ('run', ?, ?, 'b', 1, 4, ?, ?, ?, 'cgroup')",
                     (host, pid, now_ms - 60000, now_ms - 5000, offset))
        self.ok("trigger", "pinned")
        self.add("long", "--manual", "--", "sleep", "60")
        self.sql("INSERT INTO runs (task_id, status, trigger, scheduled_at, enqueued_at, not_before, started_at, "
                 "worker_host, worker_pid, worker_boot_id, worker_started_at) "
                 "SELECT id, 'running', 'manual', ?, ?, ?, ?, 'elsewhere.example', 78, 'b', 1 FROM tasks "
                 "WHERE name = 'long'", (now_ms,) * 4)
        driver = self.open_browser()
        driver.get(self.start_web() + "/")
        driver.find_element(By.CSS_SELECTOR, "nav a[href='/hosts']").click()
        self.until(driver, lambda d: d.find_element(By.ID, "status").text == "2 hosts", "2 hosts")
        rows = {cells[0]: cells for cells in (
            [td.text for td in row.find_elements(By.TAG_NAME, "td")]
            for row in driver.find_elements(By.CSS_SELECTOR, "#workers tbody tr"))}
        self.assertEqual(set(rows), {HOSTILE_NAMES[2], "elsewhere.example"})
        hostile = rows[HOSTILE_NAMES[2]]
        self.assertEqual(hostile[1:3], ["run", "77"])
        self.assertRegex(hostile[4], r"^\d+s ago$")
        self.assertEqual(hostile[5:], ["+1.5 s", "cgroup", "0", "4"])
        self.assertEqual(rows["elsewhere.example"][5], "-12 ms")
        pinned = [[td.text for td in row.find_elements(By.TAG_NAME, "td")]
                  for row in driver.find_elements(By.CSS_SELECTOR, "#pinned tbody tr")]
        self.assertEqual([row[:3] for row in pinned], [["faraway.example", "1", "yes: no live worker"]])
        running = [[td.text for td in row.find_elements(By.TAG_NAME, "td")]
                   for row in driver.find_elements(By.CSS_SELECTOR, "#running tbody tr")]
        self.assertEqual([row[1:4] for row in running], [["long", "elsewhere.example", "78"]])
        self.assertEqual(driver.find_elements(By.CSS_SELECTOR, "main img"), [])
        self.assertNoAlert(driver)


if __name__ == "__main__":
    unittest.main()
