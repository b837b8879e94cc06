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

function runsByTask(recent) {
  return new Map(recent.map((entry) => [entry.task, entry.runs]));
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

// The board's query in the page's URL, so that a link or a reload shows the
// same tasks: the filters of `taskd list` (name glob, group, owner, host as
// --on-host, state)
// and the page, by the API's cursor: `after`, the last name of the page
// before, and `limit`, the page's size. The cursors of the pages before are
// kept in the history's state, for Previous.
const filterNames = ["name", "group", "owner", "host", "state"];
const defaultPageSize = "500";

// The board's keys of `params` (by default the URL's), in one order, none empty.
function boardQuery(params = new URLSearchParams(location.search)) {
  const query = new URLSearchParams();
  for (const key of [...filterNames, "after", "limit"]) {
    if (params.get(key)) query.set(key, params.get(key));
  }
  return query;
}

function pagesBefore() {
  return (history.state && history.state.pagesBefore) || [];
}

function go(query, pagesBefore) {
  const search = boardQuery(query).toString();
  history.pushState({ pagesBefore }, "", search ? "?" + search : location.pathname);
  navigated();
}

// Where the page is: "501–1000 of 12,000", and what can be asked from there.
let lastName = "";

function showPosition(tasks, total, offset) {
  const count = (n) => n.toLocaleString();
  document.getElementById("position").textContent = tasks.length === 0 ? "0 of " + count(total)
    : count(offset + 1) + "–" + count(offset + tasks.length) + " of " + count(total);
  lastName = tasks.length ? tasks[tasks.length - 1].name : "";
  const query = boardQuery();
  document.getElementById("first").disabled = !query.has("after");
  document.getElementById("previous").disabled = !query.has("after");
  document.getElementById("next").disabled = offset + tasks.length >= total;
  document.getElementById("pages").hidden = false;
}

// The form and the page size say what the URL says (not at each poll: a
// filter being typed stays as typed), and the page is read.
function navigated() {
  const query = boardQuery();
  const form = document.getElementById("filters");
  for (const key of filterNames) form.elements[key].value = query.get(key) || "";
  const size = document.getElementById("page-size");
  const limit = query.get("limit") || defaultPageSize;
  if (![...size.options].some((option) => option.value === limit)) size.add(new Option(limit));
  size.value = limit;
  load();
}

function listenToPages() {
  document.getElementById("filters").addEventListener("submit", (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const [key, value] of new FormData(event.target)) if (value) query.set(key, value);
    if (boardQuery().has("limit")) query.set("limit", boardQuery().get("limit"));
    go(query, []);
  });
  document.getElementById("first").addEventListener("click", () => {
    const query = boardQuery();
    query.delete("after");
    go(query, []);
  });
  document.getElementById("previous").addEventListener("click", () => {
    const query = boardQuery();
    const before = pagesBefore().slice();
    const after = before.pop();
    if (after) query.set("after", after);
    else query.delete("after");
    go(query, before);
  });
  document.getElementById("next").addEventListener("click", () => {
    const query = boardQuery();
    const before = [...pagesBefore(), query.get("after") || ""];
    query.set("after", lastName);
    go(query, before);
  });
  document.getElementById("page-size").addEventListener("change", (event) => {
    const query = boardQuery();
    query.set("limit", event.target.value);
    go(query, pagesBefore());
  });
  window.addEventListener("popstate", navigated);
}

// One poll: the next comes after pollMs, or later after failures in a row.
const load = statusPolls(pollMs, async () => {
  const [page, recent] = await Promise.all([
    getOk("/api/v1/tasks?total=1&" + boardQuery()),
    getJson("/api/v1/recent-runs?runs=20&" + boardQuery()),
  ]);
  const tasks = await page.json();
  show(tasks, runsByTask(recent));
  showPosition(tasks, Number(page.headers.get("X-Total-Count")), Number(page.headers.get("X-Offset")));
  document.getElementById("tasks").hidden = false;
  return tasks.length === 1 ? "1 task" : tasks.length + " tasks";
});

// A run dropped before it started: said, with why.
function sayDropped(event) {
  const run = JSON.parse(event.data);
  if (run.status === "dropped") say(run.task + ": run " + run.id + " " + (run.reason || "dropped"));
}

// The server's events, when it sends them (not while reads need the token,
// which an EventSource cannot send): each one asks at once, so a run shows
// up as it starts and ends; the polls go on beside them.
function listen() {
  const events = new EventSource("/api/v1/events");
  for (const name of ["open", "run", "change"]) events.addEventListener(name, () => load());
  events.addEventListener("run", sayDropped);
}

keepToken(load);
listenToPages();
navigated();
listen();
