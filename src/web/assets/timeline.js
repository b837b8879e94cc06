// The timeline: the runs of the last hour, day or week as a Gantt chart,
// one row per task, or per host when the runs came from more than one. A
// bar goes from a run's start to its end, coloured by outcome; a tick marks
// its slot, and a line joins the slot to a late start. Each task's next slot
// is drawn faintly ahead of now. The view zooms (buttons, the wheel, + and
// -) and pans (buttons, dragging, the arrow keys); the runs of a view not yet
// read are asked for when it settles. The chart is SVG made here, every text
// set as text and every value with setAttribute.
"use strict";

const rowHeight = 20;
const axisHeight = 20;
const barInset = 4;
const pageSize = 1000;  // the API's most
const minute = 60e3;
const hour = 60 * minute;
const day = 24 * hour;
const spans = new Map([["hour", hour], ["day", day], ["week", 7 * day]]);
const narrowest = 5 * minute;
const widest = 28 * day;
const tickSteps = [minute, 2 * minute, 5 * minute, 10 * minute, 15 * minute, 30 * minute, hour, 2 * hour, 3 * hour, 6 * hour, 12 * hour, day];
const svgNs = "http://www.w3.org/2000/svg";

function svgElement(name, attributes) {
  const element = document.createElementNS(svgNs, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  return element;
}

// RFC 3339 to the second, as `history --since` takes it.
function rfc3339(ms) {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

// Every run whose slot is in [since, until), a page at a time.
async function runsBetween(since, until) {
  const runs = [];
  const query = "/api/v1/runs?limit=" + pageSize + "&since=" + encodeURIComponent(rfc3339(since)) +
    "&until=" + encodeURIComponent(rfc3339(until + 1000));
  for (let before = 0; ;) {
    const page = await getJson(query + (before ? "&before=" + before : ""));
    for (const run of page) runs.push(run);
    if (page.length < pageSize) return runs;
    before = page[page.length - 1].id;
  }
}

function ms(text) {
  return text ? Date.parse(text) : null;
}

// A run's row: its task's, or its host's ("-" before it started).
let byHost = false;
function laneOf(run) {
  return byHost ? run.host ?? "-" : run.task;
}

// The tasks (or hosts) with a run or a planned slot in view.
function lanesOf(runs, tasks, view) {
  const names = new Set(runs.map(laneOf));
  if (byHost) return [...names].sort();
  for (const task of tasks) {
    const next = ms(task.next_run_at);
    if (next !== null && next >= view.from && next <= view.to) names.add(task.name);
  }
  return [...names].sort();
}

function tickStep(view, width) {
  const wanted = (view.to - view.from) / Math.max(2, width / 120);
  return tickSteps.find((step) => step >= wanted) || day;
}

function tickLabel(when, step) {
  if (step >= day) return when.toLocaleDateString([], { weekday: "short", day: "numeric" });
  return when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

// The first tick: a whole step of local time (midnight for days).
function firstTick(from, step) {
  const start = new Date(from);
  if (step >= day) start.setHours(0, 0, 0, 0);
  else start.setMinutes(0, 0, 0);
  let tick = start.getTime();
  while (tick < from) tick += step;
  return tick;
}

function drawAxis(chart, view, x, height) {
  const step = tickStep(view, view.width);
  let grid = "";
  for (let tick = firstTick(view.from, step); tick <= view.to; tick += step) {
    const at = x(tick).toFixed(1);
    grid += "M" + at + " " + axisHeight + "V" + height;
    const label = svgElement("text", { x: at, y: axisHeight - 6, class: "tick" });
    label.textContent = tickLabel(new Date(tick), step);
    chart.append(label);
  }
  chart.append(svgElement("path", { d: grid, class: "grid" }));
  const now = x(view.now).toFixed(1);
  chart.append(svgElement("path", { d: "M" + now + " 0V" + height, class: "now" }));
}

// One rect per run (a link to its page); the slots, late starts and planned
// slots each one path, however many runs.
function drawRuns(chart, runs, rowOf, x, view) {
  const bars = document.createDocumentFragment();
  let slots = "";
  const height = rowHeight - 2 * barInset;
  for (const run of runs) {
    const top = axisHeight + rowOf.get(laneOf(run)) * rowHeight + barInset;
    const slot = ms(run.scheduled_at);
    const start = ms(run.started_at) ?? slot;
    const end = ms(run.finished_at) ?? (run.started_at ? view.now : start);
    const left = Math.max(x(start), 0);
    const slotX = x(slot).toFixed(1);
    slots += "M" + slotX + " " + (top - 2) + "v" + (height + 4);
    if (start > slot) slots += "M" + slotX + " " + (top + height / 2) + "H" + left.toFixed(1);
    const link = svgElement("a", { href: "/runs/" + run.id });
    link.append(svgElement("rect", {
      x: left.toFixed(1), y: top, width: Math.max(x(end) - left, 2).toFixed(1), height,
      class: "bar " + run.status, "data-run": run.id,
    }));
    bars.append(link);
  }
  chart.append(svgElement("path", { d: slots, class: "slot" }), bars);
}

function drawPlanned(chart, tasks, rowOf, x) {
  let planned = "";
  for (const task of tasks) {
    if (byHost || !rowOf.has(task.name) || !task.next_run_at) continue;
    const top = axisHeight + rowOf.get(task.name) * rowHeight + barInset;
    planned += "M" + x(ms(task.next_run_at)).toFixed(1) + " " + top + "v" + (rowHeight - 2 * barInset);
  }
  chart.append(svgElement("path", { d: planned, class: "planned" }));
}

function drawLanes(names) {
  const lanes = document.getElementById("lanes");
  lanes.replaceChildren(...names.map((name) => {
    const lane = document.createElement("div");
    lane.className = "lane";
    lane.textContent = name;
    lane.title = name;
    return lane;
  }));
}

function ends(run, view) {
  return ms(run.finished_at) ?? (run.started_at ? view.now : ms(run.scheduled_at));
}

// view: { from, to, now } in ms since the epoch; the runs drawn are those in it.
function draw(allRuns, tasks, view) {
  const runs = allRuns.filter((run) => ms(run.scheduled_at) <= view.to && ends(run, view) >= view.from);
  const names = lanesOf(runs, tasks, view);
  const rowOf = new Map(names.map((name, row) => [name, row]));
  document.getElementById("timeline").hidden = false;
  drawLanes(names);
  const chart = document.getElementById("chart");
  const width = Math.max(chart.parentElement.clientWidth - document.getElementById("lanes").offsetWidth, 200);
  const height = axisHeight + names.length * rowHeight;
  const x = (when) => ((when - view.from) / (view.to - view.from)) * width;
  chart.replaceChildren();
  chart.setAttribute("width", width);
  chart.setAttribute("height", height);
  chart.dataset.from = view.from;
  chart.dataset.to = view.to;
  drawAxis(chart, { ...view, width }, x, height);
  drawRuns(chart, runs, rowOf, x, view);
  drawPlanned(chart, tasks, rowOf, x);
}

// What was read (the runs of [from, to) and the tasks) and the view shown.
let shown = null;

function hostsOf(runs) {
  return new Set(runs.filter((run) => run.host).map((run) => run.host));
}

function show(runs, tasks, view, read) {
  shown = { runs, tasks, view, read };
  readIfNeeded();
  document.getElementById("lanes-by").hidden = hostsOf(runs).size < 2;
  if (document.getElementById("lanes-by").hidden) byHost = false;
  draw(runs, tasks, view);
  document.getElementById("status").textContent = runs.length === 1 ? "1 run" : runs.length + " runs";
}

// Reads the runs of `view` and the tasks, then shows them in the view
// wanted by then (the user may have moved meanwhile).
let wanted = null;
async function load(view) {
  wanted = view;
  try {
    const [runs, tasks] = await Promise.all([runsBetween(view.from, view.to), getJson("/api/v1/tasks")]);
    show(runs, tasks, wanted, { from: view.from, to: view.to });
  } catch (error) {
    document.getElementById("status").textContent = String(error.message);
  }
}

function initialView() {
  const span = spans.get(new URLSearchParams(location.search).get("span")) ?? day;  // an unknown span: a day
  const now = Date.now();
  return { from: now - span, to: now + span / 12, now };
}

// A move drawn at the next frame from what was read; what was not read is
// asked for once the moves stop for a moment.
let frame = null;
let settle = null;
function moveTo(view) {
  if (!shown) return;
  wanted = shown.view = view;
  if (frame === null) frame = requestAnimationFrame(() => {
    frame = null;
    draw(shown.runs, shown.tasks, shown.view);
  });
  readIfNeeded();
}

function readIfNeeded() {
  clearTimeout(settle);
  const { view, read } = shown;
  if (view.from < read.from || view.to > read.to) settle = setTimeout(() => load(shown.view), 300);
}

// Zooms by `factor` (below 1: in) around the instant at `anchor` (0 to 1 of the width).
function zoom(factor, anchor = 0.5) {
  if (!shown) return;
  const { from, to, now } = shown.view;
  const span = Math.min(Math.max((to - from) * factor, narrowest), widest);
  const at = from + (to - from) * anchor;
  moveTo({ from: at - span * anchor, to: at + span * (1 - anchor), now });
}

// Pans by `share` of the span (below 0: earlier).
function pan(share) {
  if (!shown) return;
  const { from, to, now } = shown.view;
  const by = (to - from) * share;
  moveTo({ from: from + by, to: to + by, now });
}

function chartWidth() {
  return Number(document.getElementById("chart").getAttribute("width")) || 1;
}

function listenToPointer(chart) {
  chart.addEventListener("wheel", (event) => {
    event.preventDefault();
    const box = chart.getBoundingClientRect();
    zoom(event.deltaY > 0 ? 1.25 : 0.8, Math.min(Math.max((event.clientX - box.left) / box.width, 0), 1));
  }, { passive: false });
  let drag = null;
  chart.addEventListener("pointerdown", (event) => {
    if (!shown || event.button !== 0) return;
    drag = { x: event.clientX, view: shown.view, moved: false };
  });
  window.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const dx = event.clientX - drag.x;
    if (Math.abs(dx) > 3) drag.moved = true;
    if (!drag.moved) return;
    const by = (-dx / chartWidth()) * (drag.view.to - drag.view.from);
    moveTo({ from: drag.view.from + by, to: drag.view.to + by, now: drag.view.now });
  });
  window.addEventListener("pointerup", () => {
    if (drag && drag.moved) chart.dataset.dragged = "1";
    drag = null;
  });
  // A drag that ends on a bar does not follow its link.
  chart.addEventListener("click", (event) => {
    if (chart.dataset.dragged) event.preventDefault();
    delete chart.dataset.dragged;
  }, true);
}

const keys = new Map([["+", () => zoom(0.5)], ["=", () => zoom(0.5)], ["-", () => zoom(2)],
  ["ArrowLeft", () => pan(-0.25)], ["ArrowRight", () => pan(0.25)]]);

function listenToKeys() {
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, textarea, select") || event.ctrlKey || event.metaKey || event.altKey) return;
    const move = keys.get(event.key);
    if (!move) return;
    event.preventDefault();
    move();
  });
}

for (const button of document.querySelectorAll("#spans button")) {
  button.addEventListener("click", () => {
    history.replaceState(null, "", "?span=" + button.dataset.span);
    load(initialView());
  });
}
document.getElementById("zoom-in").addEventListener("click", () => zoom(0.5));
document.getElementById("zoom-out").addEventListener("click", () => zoom(2));
document.getElementById("earlier").addEventListener("click", () => pan(-0.25));
document.getElementById("later").addEventListener("click", () => pan(0.25));
for (const button of document.querySelectorAll("#lanes-by button")) {
  button.addEventListener("click", () => {
    byHost = button.dataset.by === "host";
    for (const other of document.querySelectorAll("#lanes-by button"))
      other.setAttribute("aria-pressed", String(other === button));
    if (shown) draw(shown.runs, shown.tasks, shown.view);
  });
}
listenToPointer(document.getElementById("chart"));
listenToKeys();
window.addEventListener("resize", () => shown && draw(shown.runs, shown.tasks, shown.view));
keepToken(() => load(shown ? shown.view : initialView()));
load(initialView());
