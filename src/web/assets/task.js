// A task's page, /tasks/NAME: its definition, why its latest slot went as
// it did and why its next run comes when it does (explain), its next slots,
// and its runs a page at a time, newest first. Every text goes in as text.
"use strict";

const runsPerPage = 20;
const slotsShown = 5;

function taskName() {
  return decodeURIComponent(location.pathname.slice("/tasks/".length));
}

function taskPath(name) {
  return "/api/v1/tasks/" + encodeURIComponent(name);
}

function element(name, text) {
  const made = document.createElement(name);
  made.textContent = text;
  return made;
}

function showDefinition(task) {
  const facts = [
    ["Schedule", scheduleText(task)],
    ["Command", Array.isArray(task.command) ? task.command.join(" ") : task.command],
    ["State", task.malformed ? "malformed" : condition(task)],
    ["Next run", task.next_run_at ? new Date(task.next_run_at).toLocaleString() + " (" + task.next_run_at + ")" : "-"],
    ["Group", task.group || "-"],
    ["Owner", task.owner || "-"],
    ["Host", task.on_host || "-"],
  ];
  document.getElementById("definition").replaceChildren(...facts.flatMap(([term, value]) => {
    const dd = element("dd", value);
    dd.dataset.fact = term;
    return [element("dt", term), dd];
  }));
}

function showFacts(id, explanation) {
  document.getElementById(id).replaceChildren(...explanation.facts.map((fact) => element("li", fact.text)));
}

function showSlots(starts) {
  const slots = document.getElementById("slots");
  if (starts.length === 0) slots.replaceChildren(element("li", "none planned"));
  else slots.replaceChildren(...starts.map((start) => element("li", new Date(start).toLocaleString() + " (" + start + ")")));
}

function runRow(run) {
  const row = document.createElement("tr");
  row.dataset.run = run.id;
  const link = element("a", String(run.id));
  link.href = "/runs/" + run.id;
  row.insertCell().append(link);
  const cells = [run.scheduled_at, run.status, run.trigger, run.duration === null ? "-" : run.duration.toFixed(3) + " s",
    run.host || "-"];
  for (const text of cells) row.insertCell().textContent = text;
  row.cells[2].className = "status-" + run.status;
  return row;
}

let oldestShown = 0;  // the id of the last run shown; 0: none yet

// The page of runs after the last one shown (the first page when `first`).
async function showRuns(first) {
  let query = "/api/v1/runs?task=" + encodeURIComponent(taskName()) + "&limit=" + runsPerPage;
  if (!first) query += "&before=" + oldestShown;
  const runs = await getJson(query);
  const body = document.querySelector("#runs tbody");
  if (first) body.replaceChildren();
  body.append(...runs.map(runRow));
  if (runs.length > 0) oldestShown = runs[runs.length - 1].id;
  document.getElementById("older").hidden = runs.length < runsPerPage;
}

function say(text) {
  document.getElementById("notice").textContent = text;
}

async function act(action) {
  const name = taskName();
  try {
    const done = await postJson(taskPath(name) + "/" + action);
    say(action === "trigger" ? name + ": run " + done.run + (done.triggered ? " queued" : " already queued or running")
      : name + ": " + action + " done");
    load();
  } catch (error) {
    say("Cannot " + action + " " + name + ": " + error.message);
  }
}

function showActions() {
  const actions = document.getElementById("actions");
  if (actions.childElementCount > 0) return;
  for (const action of ["trigger", "pause", "resume", "enable"]) {
    const button = element("button", action[0].toUpperCase() + action.slice(1));
    button.type = "button";
    button.className = action;
    button.addEventListener("click", () => act(action));
    actions.append(button);
  }
}

async function load() {
  const status = document.getElementById("status");
  try {
    const name = taskName();
    document.getElementById("title").textContent = name;
    document.title = "taskd: " + name;
    const task = await getJson(taskPath(name));
    showDefinition(task);
    showActions();
    const [latest, starts] = await Promise.all([getJson(taskPath(name) + "/explain"),
      getJson(taskPath(name) + "/forecast?count=" + slotsShown), showRuns(true)]);
    showFacts("explain-latest", latest);
    showSlots(starts);
    const next = task.next_run_at ? await getJson(taskPath(name) + "/explain?at=" + encodeURIComponent(task.next_run_at))
      : { facts: [{ text: "No run is planned." }] };
    showFacts("explain-next", next);
    status.textContent = "";
  } catch (error) {
    status.textContent = String(error.message);
  }
}

document.getElementById("older").addEventListener("click", () => showRuns(false).catch((error) => say(error.message)));
keepToken(load);
load();
