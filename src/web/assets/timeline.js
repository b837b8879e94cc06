// The timeline: the runs of the last hour, day or week as a Gantt chart,
// one row per task. A bar goes from a run's start to its end, coloured by
// outcome; a tick marks its slot, and a line joins the slot to a late start.
// Each task's next slot is drawn faintly ahead of now. The chart is SVG
// made here, every text set as text and every value with setAttribute.
"use strict";

const rowHeight = 20;
const axisHeight = 20;
const barInset = 4;
const pageSize = 1000;  // the API's most
const minute = 60e3;
const hour = 60 * minute;
const day = 24 * hour;
const spans = new Map([["hour", hour], ["day", day], ["week", 7 * day]]);
const tickSteps = [5 * minute, 10 * minute, 15 * minute, 30 * minute, hour, 2 * hour, 3 * hour, 6 * hour, 12 * hour, day];
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

// Every run whose slot is at or after `since`, a page at a time.
async function runsSince(since) {
  const runs = [];
  const query = "/api/v1/runs?limit=" + pageSize + "&since=" + encodeURIComponent(rfc3339(since));
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

// The tasks with a run or a planned slot in view, by name.
function lanesOf(runs, tasks, view) {
  const names = new Set(runs.map((run) => run.task));
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
    const top = axisHeight + rowOf.get(run.task) * rowHeight + barInset;
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
    if (!rowOf.has(task.name) || !task.next_run_at) continue;
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

// view: { from, to, now } in ms since the epoch.
function draw(runs, tasks, view) {
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
  drawAxis(chart, { ...view, width }, x, height);
  drawRuns(chart, runs.filter((run) => rowOf.has(run.task)), rowOf, x, view);
  drawPlanned(chart, tasks, rowOf, x);
}

let shown = null;

async function load() {
  const status = document.getElementById("status");
  const span = spans.get(new URLSearchParams(location.search).get("span")) ?? day;  // an unknown span: a day
  const now = Date.now();
  const view = { from: now - span, to: now + span / 12, now };
  try {
    const [runs, tasks] = await Promise.all([runsSince(view.from), getJson("/api/v1/tasks")]);
    shown = { runs, tasks, view };
    draw(runs, tasks, view);
    status.textContent = runs.length === 1 ? "1 run" : runs.length + " runs";
  } catch (error) {
    status.textContent = String(error.message);
  }
}

for (const button of document.querySelectorAll("#spans button")) {
  button.addEventListener("click", () => {
    history.replaceState(null, "", "?span=" + button.dataset.span);
    load();
  });
}
window.addEventListener("resize", () => shown && draw(shown.runs, shown.tasks, shown.view));
keepToken(load);
load();
