// The board: a client of /api/v1 like any other. Every text a task holds
// goes into the page as text (textContent), never as HTML.
"use strict";

const tokenKey = "taskd-token";

function headers() {
  const token = sessionStorage.getItem(tokenKey);
  return token ? { Authorization: "Bearer " + token } : {};
}

async function getJson(path) {
  const response = await fetch(path, { headers: headers() });
  if (response.status === 401) {
    document.getElementById("token-form").hidden = false;
    throw new Error("this board needs the token");
  }
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw new Error(body.error || response.statusText);
  }
  return response.json();
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

function relative(when, now) {
  const seconds = Math.round((when - now) / 1000);
  const size = Math.abs(seconds);
  const [amount, unit] = size < 60 ? [size, "s"] : size < 3600 ? [Math.round(size / 60), "m"]
    : size < 86400 ? [Math.round(size / 3600), "h"] : [Math.round(size / 86400), "d"];
  return seconds >= 0 ? "in " + amount + unit : amount + unit + " ago";
}

function cell(row, text, className) {
  const td = row.insertCell();
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function nextRunCell(row, task, now) {
  const td = cell(row, "-");
  if (!task.next_run_at) return;
  const when = new Date(task.next_run_at);
  td.textContent = when.toLocaleString() + " ";
  const span = document.createElement("span");
  span.className = "when";
  span.textContent = "(" + relative(when, now) + ")";
  td.append(span);
}

function stripCell(row, runs) {
  const strip = document.createElement("div");
  strip.className = "strip";
  for (const run of (runs || []).slice(0, 20).reverse()) {
    const mark = document.createElement("span");
    mark.className = "run " + run.status;
    mark.title = "run " + run.id + ": " + run.status + " (slot " + run.scheduled_at + ")";
    strip.append(mark);
  }
  row.insertCell().append(strip);
}

function runsByTask(runs) {
  const byTask = new Map();
  for (const run of runs) {
    if (!byTask.has(run.task)) byTask.set(run.task, []);
    byTask.get(run.task).push(run);
  }
  return byTask;
}

async function load() {
  const status = document.getElementById("status");
  try {
    const [tasks, runs] = await Promise.all([getJson("/api/v1/tasks"), getJson("/api/v1/runs?limit=1000")]);
    const byTask = runsByTask(runs);
    const now = new Date();
    const body = document.querySelector("#tasks tbody");
    body.replaceChildren();
    for (const task of tasks) {
      const row = body.insertRow();
      row.dataset.task = task.name;
      cell(row, task.name, "name");
      cell(row, scheduleText(task));
      nextRunCell(row, task, now);
      const state = task.malformed ? "malformed" : condition(task);
      cell(row, state, "state-" + state);
      stripCell(row, byTask.get(task.name));
    }
    document.getElementById("tasks").hidden = false;
    status.textContent = tasks.length === 1 ? "1 task" : tasks.length + " tasks";
  } catch (error) {
    status.textContent = String(error.message);
  }
}

document.getElementById("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  sessionStorage.setItem(tokenKey, document.getElementById("token").value);
  document.getElementById("token-form").hidden = true;
  load();
});
load();
