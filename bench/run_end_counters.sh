#!/usr/bin/env bash
# What each task's counters (the per-task series of `metrics`) cost a run's
# end on SQLite: the CPU time of ending 5 000 runs, 8 to a transaction as
# `run-once --concurrency 8` commits them, on a database taskd made, and on
# a copy whose trigger lacks only the per-task INSERT (its text taken from
# the database itself). The two alternate; the verdict is on the median of
# five rounds each, goal <= 5 microseconds more a run (1 % of a run at the
# dispatch rate of bench/dispatch.sh).
# Usage: bench/run_end_counters.sh [build-dir]
set -euo pipefail
here=$(dirname "$(realpath "$0")")
source "$here/common.bash"
bench_setup "${1:-build}"
write_tasks "$work/tasks.toml" 5000 true 1w
"$taskd" --db "$work/with.db" apply "$work/tasks.toml" >/dev/null
echo "load before: $(uptime)"
/usr/bin/python3 - "$work" <<'PYTHON'
import os, re, shutil, sqlite3, sys, time

work = sys.argv[1]

def without_task_counters(path):
    db = sqlite3.connect(path, isolation_level=None)
    (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name = 'run_ends_count'").fetchone()
    stripped = re.sub(r"INSERT INTO task_run_stats.*?;", "", sql, flags=re.S)
    assert stripped != sql, "the trigger has no per-task INSERT"
    db.execute("DROP TRIGGER run_ends_count")
    db.execute(stripped)
    db.close()

def cpu_per_run_end(template):
    path = os.path.join(work, "run.db")
    for name in (path, path + "-wal", path + "-shm"):
        if os.path.exists(name):
            os.remove(name)
    shutil.copy(template, path)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("INSERT INTO runs (task_id, status, trigger, scheduled_at, enqueued_at, not_before, started_at) "
               "SELECT id, 'running', 'schedule', 1000, 0, 0, 1100 FROM tasks")
    ids = [row[0] for row in db.execute("SELECT id FROM runs")]
    start = time.process_time()
    for i in range(0, len(ids), 8):
        db.execute("BEGIN")
        for run in ids[i:i + 8]:
            db.execute("UPDATE runs SET status = 'succeeded', finished_at = 2000 WHERE id = ?", (run,))
        db.execute("COMMIT")
    spent = time.process_time() - start
    db.close()
    return spent / len(ids) * 1e6

with_db, without_db = os.path.join(work, "with.db"), os.path.join(work, "without.db")
shutil.copy(with_db, without_db)
without_task_counters(without_db)
rounds = {"without": [], "with": []}
for _ in range(5):
    for kind, template in (("without", without_db), ("with", with_db)):
        rounds[kind].append(cpu_per_run_end(template))
for kind, values in rounds.items():
    print(f"{kind:8} per-task counters: " + " ".join(f"{v:.1f}" for v in values) + " us CPU a run's end")
added = sorted(rounds["with"])[2] - sorted(rounds["without"])[2]
print(f"per-task counters add {added:.1f} us CPU to a run's end (median of 5), goal <= 5: "
      + ("PASS" if added <= 5 else "MISS"))
PYTHON
echo "load after: $(uptime)"
