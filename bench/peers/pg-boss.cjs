// bench/peers-postgresql.sh's pg-boss side.
//   node pg-boss.cjs queue URL COUNT   queues COUNT jobs (ids 1..COUNT)
//   node pg-boss.cjs work URL IDS      runs jobs, 8 children at once, until every
//                                      job of the queue is done (by any worker);
//                                      writes the ids it ran to IDS
// A pg-boss worker waits its polling interval (at least 0.5 s) after each
// fetch, jobs or not; eight workers fetching eight jobs each keep eight
// children busy, which is as fast as pg-boss's workers go.
const PgBoss = require("pg-boss");
const { execFile } = require("node:child_process");
const { writeFileSync } = require("node:fs");

const [mode, connectionString, arg] = process.argv.slice(2);
const name = "child";

async function queue(count) {
  const boss = new PgBoss({ connectionString, supervise: false, schedule: false });
  await boss.start();
  await boss.createQueue(name);
  for (let first = 1; first <= count; first += 1000) {
    const ids = Array.from({ length: Math.min(1000, count - first + 1) }, (_, i) => first + i);
    await boss.insert(ids.map((id) => ({ name, data: { id } })));
  }
  await boss.stop({ graceful: true, wait: true });
}

// At most `limit` of the functions given to it running at once.
function limiter(limit) {
  let running = 0;
  const waiting = [];
  const next = () => {
    if (running >= limit || waiting.length === 0) return;
    running++;
    const { run, resolve, reject } = waiting.shift();
    run().then(resolve, reject).finally(() => {
      running--;
      next();
    });
  };
  const limited = (run) => new Promise((resolve, reject) => (waiting.push({ run, resolve, reject }), next()));
  return limited;
}

async function work(idsFile) {
  const boss = new PgBoss({ connectionString });
  boss.on("error", (error) => console.error(error));
  await boss.start();
  const ran = [];
  const limited = limiter(8);
  const child = (job) =>
    new Promise((resolve, reject) =>
      execFile("/bin/true", (error) => (error ? reject(error) : (ran.push(job.data.id), resolve()))));
  for (let i = 0; i < 8; i++)
    await boss.work(name, { batchSize: 8, pollingIntervalSeconds: 0.5 }, (jobs) =>
      Promise.all(jobs.map((job) => limited(() => child(job)))));
  const notDone = () => boss.getQueueSize(name, { before: "completed" });
  while ((await notDone()) > 0) await new Promise((resolve) => setTimeout(resolve, 100));
  await boss.stop({ graceful: true, wait: true });
  writeFileSync(idsFile, ran.map((id) => `${id}\n`).join(""));
}

(mode === "queue" ? queue(Number(arg)) : work(arg)).catch((error) => {
  console.error(error);
  process.exit(1);
});
