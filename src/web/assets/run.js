// A run's page, /runs/ID: its times, attempt, outcome and output, from
// /api/v1/runs/ID/output. The output is set as text: whatever bytes a
// command wrote stay characters on the page. While the run is queued or
// running the page asks again, so the output grows as taskd saves it
// (once a second).
"use strict";

const livePollMs = 1000;

function localTime(text) {
  return text ? new Date(text).toLocaleString() + " (" + text + ")" : "-";
}

function seconds(value) {
  return value === null ? "-" : value.toFixed(3) + " s";
}

function facts(run) {
  return [
    ["Task", run.task],
    ["Status", run.status],
    ["Trigger", run.trigger],
    ["Slot", localTime(run.scheduled_at)],
    ["Queued", localTime(run.enqueued_at)],
    ["Started", localTime(run.started_at)],
    ["Finished", localTime(run.finished_at)],
    ["Duration", seconds(run.duration)],
    ["Host", run.host || "-"],
    ["Attempt", String(run.attempt_no)],
    ["Exit code", run.exit_code === null ? "-" : String(run.exit_code)],
    ["Signal", run.signal === null ? "-" : String(run.signal)],
    ["Reason", run.reason || "-"],
    ["CPU", seconds(run.cpu_seconds)],
    ["Peak memory", run.peak_memory_bytes === null ? "-" : run.peak_memory_bytes + " bytes"],
    ["Output", run.output_bytes + " bytes" + (run.output_truncated ? ", truncated" : "")],
  ];
}

function showFacts(run) {
  const list = document.getElementById("facts");
  list.replaceChildren();
  for (const [term, value] of facts(run)) {
    const dt = document.createElement("dt");
    dt.textContent = term;
    const dd = document.createElement("dd");
    dd.textContent = value;
    dd.dataset.fact = term;
    list.append(dt, dd);
  }
}

let failures = 0;

// One poll: while the run is queued or running the next comes after
// livePollMs; after a failed one, later at each failure in a row, saying
// why. A run that is not there ends the polls.
async function poll() {
  const status = document.getElementById("status");
  const id = location.pathname.split("/").pop();
  try {
    const run = await getJson("/api/v1/runs/" + encodeURIComponent(id) + "/output");
    failures = 0;
    document.getElementById("title").textContent = "Run " + run.id + " of " + run.task;
    document.title = "taskd: run " + run.id;
    showFacts(run);
    document.getElementById("output").textContent = run.output;
    const live = run.status === "queued" || run.status === "running";
    status.textContent = live ? "Following the run as it goes" : "";
    return live ? livePollMs : null;
  } catch (error) {
    if (error.status === 404) {  // no such run: asking again changes nothing
      status.textContent = error.message;
      return null;
    }
    failures += 1;
    const wait = backOff(livePollMs, failures);
    status.textContent = String(error.message) + " (asking again in " + Math.round(wait / 1000) + " s)";
    return wait;
  }
}

const load = pollChain(poll);
keepToken(load);
load();
