// The hosts: each scheduler and worker with its heartbeat, clock offset,
// containment and runs in flight; each run in flight and its host; the hosts that pinned tasks wait for; the
// ticks of run-once. From /api/v1/hosts (`status --json`'s hosts), every
// text set as text.
"use strict";

const pollMs = 3000;

function when(text, now) {
  return text ? relative(new Date(text), now) : "-";
}

// "+12 ms", "-1.5 s": how far the host's clock is from the database's.
function offsetText(ms) {
  if (ms === null || ms === undefined) return "-";
  const sign = ms > 0 ? "+" : ms < 0 ? "-" : "";
  const size = Math.abs(ms);
  return sign + (size < 1000 ? size + " ms" : (size / 1000).toFixed(1) + " s");
}

function fillTable(id, rows, cellsOf) {
  const body = document.querySelector("#" + id + " tbody");
  body.replaceChildren(...rows.map((row) => {
    const tr = document.createElement("tr");
    for (const [text, className] of cellsOf(row)) {
      const td = tr.insertCell();
      td.textContent = String(text);
      if (className) td.className = className;
    }
    return tr;
  }));
}

function show(hosts, now) {
  fillTable("workers", hosts.workers, (worker) => [
    [worker.host, "name"], [worker.role ?? "-"], [worker.pid], [worker.state, "state-" + worker.state],
    [when(worker.heartbeat_at, now)], [offsetText(worker.clock_offset_ms)], [worker.containment ?? "-"],
    [worker.runs], [worker.concurrency ?? "-"],
  ]);
  fillTable("running", hosts.running, (run) => [
    [run.id], [run.task, "name"], [run.host, "name"], [run.worker_pid], [when(run.started_at, now)],
  ]);
  fillTable("pinned", hosts.pinned, (pinned) => [
    [pinned.host, "name"], [pinned.queued], [pinned.waiting ? "yes: no live worker" : "no"],
    [when(pinned.last_seen, now)],
  ]);
  fillTable("ticks", hosts.ticks, (tick) => [
    [tick.host, "name"], [when(tick.ticked_at, now)], [tick.every === null ? "-" : tick.every + "s"],
  ]);
}

const load = statusPolls(pollMs, async () => {
  const hosts = await getJson("/api/v1/hosts");
  show(hosts, new Date());
  const count = new Set(hosts.workers.map((worker) => worker.host)).size;
  return count === 1 ? "1 host" : count + " hosts";
});
keepToken(load);
load();
