// bench/peers-postgresql.sh's graphile-worker side.
//   node graphile-worker.cjs queue URL COUNT   queues COUNT jobs (ids 1..COUNT)
//   node graphile-worker.cjs work URL IDS      runs jobs, 8 at once, until none is
//                                              left (runOnce), each /bin/true as a
//                                              child; writes the ids it ran to IDS
const { makeWorkerUtils, runOnce, Logger } = require("graphile-worker");
const { execFile } = require("node:child_process");
const { writeFileSync } = require("node:fs");

const [mode, connectionString, arg] = process.argv.slice(2);
const quiet = new Logger(() => () => {});

async function queue(count) {
  const utils = await makeWorkerUtils({ connectionString, logger: quiet });
  await utils.migrate();
  for (let first = 1; first <= count; first += 1000) {
    const ids = Array.from({ length: Math.min(1000, count - first + 1) }, (_, i) => first + i);
    await utils.addJobs(ids.map((id) => ({ identifier: "child", payload: { id } })));
  }
  await utils.release();
}

async function work(idsFile) {
  const ran = [];
  const child = (payload) =>
    new Promise((resolve, reject) =>
      execFile("/bin/true", (error) => (error ? reject(error) : (ran.push(payload.id), resolve()))));
  await runOnce({ connectionString, concurrency: 8, noHandleSignals: true, logger: quiet }, { child });
  writeFileSync(idsFile, ran.map((id) => `${id}\n`).join(""));
}

(mode === "queue" ? queue(Number(arg)) : work(arg)).catch((error) => {
  console.error(error);
  process.exit(1);
});
