// What every page of the board shares: the token, kept in the tab's
// session storage and sent as a Bearer header (never a cookie), and the
// calls to /api/v1. Each page's script comes after this one.
"use strict";

const tokenKey = "taskd-token";

function headers() {
  const token = sessionStorage.getItem(tokenKey);
  return token ? { Authorization: "Bearer " + token } : {};
}

async function errorOf(response) {
  if (response.status === 401) {
    document.getElementById("token").focus();
    return new Error("this needs the token");
  }
  const body = await response.json().catch(() => ({}));
  const error = new Error(body.error || response.statusText);
  error.status = response.status;
  return error;
}

// The response to GET `path`; one that is not a success is thrown as an Error.
async function getOk(path) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) throw await errorOf(response);
  return response;
}

async function getJson(path) {
  return (await getOk(path)).json();
}

async function postJson(path) {
  const response = await fetch(path, { method: "POST", headers: headers() });
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

// One chain of polls per page, however often it is asked to poll now:
// `step` (async) polls once and returns how long to wait before the next
// poll (null: no more). The returned function polls now: while a poll is in
// flight, once it ends; the timer of the next poll is replaced, never doubled.
function pollChain(step) {
  let timer = null;
  let inFlight = false;
  let again = false;
  async function poll() {
    clearTimeout(timer);
    timer = null;
    if (inFlight) {
      again = true;
      return;
    }
    inFlight = true;
    let delay = null;
    try {
      delay = await step();
    } finally {
      inFlight = false;
    }
    if (again) {
      again = false;
      poll();
    } else if (delay !== null) {
      timer = setTimeout(poll, delay);
    }
  }
  return poll;
}

// The wait after `failures` failed polls in a row: doubled from `pollMs`
// at each, at most a minute.
function backOff(pollMs, failures) {
  return Math.min(pollMs * 2 ** Math.min(failures, 10), 60e3);
}

// A page's chain of polls, one every `pollMs`: `read` (async) asks the API
// and shows what it says, and returns the line for #status; a failure is
// said there instead, and the next poll waits longer (backOff).
function statusPolls(pollMs, read) {
  let failures = 0;
  return pollChain(async () => {
    const status = document.getElementById("status");
    try {
      status.textContent = await read();
      failures = 0;
    } catch (error) {
      failures += 1;
      status.textContent = String(error.message);
    }
    return backOff(pollMs, failures);
  });
}

// "in 3m", "5s ago": `when` from `now`, in the largest unit that fits.
function relative(when, now) {
  const seconds = Math.round((when - now) / 1000);
  const size = Math.abs(seconds);
  const [amount, unit] = size < 60 ? [size, "s"] : size < 3600 ? [Math.round(size / 60), "m"]
    : size < 86400 ? [Math.round(size / 3600), "h"] : [Math.round(size / 86400), "d"];
  return seconds >= 0 ? "in " + amount + unit : amount + unit + " ago";
}

// As `taskd list` words it.
function scheduleText(task) {
  const { kind, spec } = task.schedule;
  let text;
  if (kind === "every") text = "every " + spec + (task.after_finish ? " after finish" : "") + (task.tz ? " (" + task.tz + ")" : "");
  else if (kind === "cron") text = "cron " + spec + " (" + task.tz + ")";
  else if (kind === "rrule") text = "rrule " + spec + " from " + (task.dtstart || "?") + " (" + task.tz + ")";
  else text = kind;
  if (!task.after) return text;
  return kind === "manual" ? "after " + task.after : text + " + after " + task.after;
}

function condition(task) {
  if (task.disabled_until_update) return "disabled";
  if (task.paused) return "paused";
  return ["failed", "timed_out", "lost"].includes(task.last_status) ? "failing" : "active";
}

// The page's link in the navigation says it is the current one.
function markCurrentPage() {
  for (const link of document.querySelectorAll("nav a")) {
    if (link.getAttribute("href") === location.pathname) link.setAttribute("aria-current", "page");
  }
}
markCurrentPage();

// The page's `load` runs again once the token is given.
function keepToken(load) {
  const form = document.getElementById("token-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(tokenKey, document.getElementById("token").value);
    load();
  });
}
