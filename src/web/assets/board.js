// The board: a client of /api/v1 like any other. Every text a task holds
// goes into the page as text (textContent), never as HTML. It asks again
// every few seconds, and at each event the server sends, updating its rows
// in place, so that a run shows up without a reload and a button is not
// replaced under the pointer.
"use strict";

const pollMs = 3000;

function fillNextRun(td, task, now) {
  td.textContent = "-";
  if (!task.next_run_at) return;
  const when = new Date(task.next_run_at);
  td.textContent = when.toLocaleString() + " ";
  const span = document.createElement("span");
  span.className = "when";
  span.textContent = "(" + relative(when, now) + ")";
  td.append(span);
}

function fillStrip(strip, runs) {
  strip.replaceChildren();
  for (const run of (runs || []).slice(0, 20).reverse()) {
    const mark = document.createElement("a");
    mark.href = "/runs/" + run.id;
    mark.className = "run " + run.status;
    mark.title = "run " + run.id + ": " + run.status + " (slot " + run.scheduled_at + ")";
    strip.append(mark);
  }
}

function runsByTask(runs) {
  const byTask = new Map();
  for (const run of runs) {
    if (!byTask.has(run.task)) byTask.set(run.task, []);
    byTask.get(run.task).push(run);
  }
  return byTask;
}

function say(text) {
  document.getElementById("notice").textContent = text;
}

async function trigger(name) {
  try {
    const queued = await postJson("/api/v1/tasks/" + encodeURIComponent(name) + "/trigger");
    say(name + ": run " + queued.run + (queued.triggered ? " queued" : " already queued or running"));
    load();
  } catch (error) {
    say("Cannot trigger " + name + ": " + error.message);
  }
}

// A task's row, made once: its cells are filled again at every poll.
function newRow(name) {
  const row = document.createElement("tr");
  row.dataset.task = name;
  for (let i = 0; i < 5; ++i) row.insertCell();
  row.cells[0].className = "name";
  const link = document.createElement("a");
  link.href = "/tasks/" + encodeURIComponent(name);
  link.textContent = name;
  row.cells[0].append(link);
  const strip = document.createElement("div");
  strip.className = "strip";
  row.cells[4].append(strip);
  const button = document.createElement("button");
  button.type = "button";
  button.className = "trigger";
  button.textContent = "Trigger";
  button.addEventListener("click", () => trigger(name));
  row.insertCell().append(button);
  return row;
}

const rows = new Map();

function show(tasks, byTask) {
  const now = new Date();
  const body = document.querySelector("#tasks tbody");
  const shown = new Set();
  for (const task of tasks) {
    if (!rows.has(task.name)) rows.set(task.name, newRow(task.name));
    const row = rows.get(task.name);
    shown.add(task.name);
    row.cells[1].textContent = scheduleText(task);
    fillNextRun(row.cells[2], task, now);
    const state = task.malformed ? "malformed" : condition(task);
    row.cells[3].textContent = state;
    row.cells[3].className = "state-" + state;
    fillStrip(row.cells[4].firstChild, byTask.get(task.name));
    body.append(row);  // in the listing's order; an existing row moves
  }
  for (const [name, row] of rows) {
    if (shown.has(name)) continue;
    row.remove();
    rows.delete(name);
  }
}

// One poll: the next comes after pollMs, or later after failures in a row.
const load = statusPolls(pollMs, async () => {
  const [tasks, runs] = await Promise.all([getJson("/api/v1/tasks"), getJson("/api/v1/runs?limit=1000")]);
  show(tasks, runsByTask(runs));
  document.getElementById("tasks").hidden = false;
  return tasks.length === 1 ? "1 task" : tasks.length + " tasks";
});

// The server's events, when it sends them (not while reads need the token,
// which an EventSource cannot send): each one asks at once, so a run shows
// up as it starts and ends; the polls go on beside them.
function listen() {
  const events = new EventSource("/api/v1/events");
  for (const name of ["open", "run", "change"]) events.addEventListener(name, () => load());
}

keepToken(load);
load();
listen();
