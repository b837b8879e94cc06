#!/usr/bin/env bash
# Benchmarks 2 and 6 (dispatch half) of issue #5: dispatch throughput.
# 10 000 tasks due at once run /bin/true; `taskd run-once --concurrency 8`
# (the tick, every claim, spawn and recorded outcome: whole process) against
# a bare posix_spawn+waitpid loop with 8 in flight (spawn_loop), and against
# APScheduler 3 with its SQLAlchemy job store on SQLite and a pool of 8
# threads doing the same work. Each side is timed with hyperfine on a fresh
# copy of its prepared database.
# Usage: bench/dispatch.sh [build-dir]   (BENCH_QUICK=1: 1 000 tasks, 1 run each)
# Runs: 3 of taskd and of the loop, 2 of APScheduler (minutes each).
set -euo pipefail
here=$(dirname "$(realpath "$0")")
source "$here/common.bash"
bench_setup "${1:-build}"
spawn_loop=$(realpath "${1:-build}/bench/spawn_loop")
python=/usr/bin/python3
tasks=10000 runs=3 aps_runs=2
if [ "${BENCH_QUICK:-0}" = 1 ]; then tasks=1000 runs=1 aps_runs=1; fi

# Times COMMAND RUNS times with hyperfine, PREPARE before each; prints the mean seconds.
mean_seconds() {
  local name=$1 runs=$2 prepare=$3 command=$4
  hyperfine --style basic --runs "$runs" --prepare "$prepare" --export-json "$work/$name.json" -n "$name" "$command" >&2
  jq '.results[0].mean' "$work/$name.json"
}

# A weekly schedule keeps every slot but the start_now one out of the run.
write_tasks "$work/tasks.toml" "$tasks" true 1w
"$taskd" --db "$work/template.db" apply "$work/tasks.toml" >/dev/null
"$python" "$here/apscheduler_dispatch.py" prepare "$work/aps-template.db" "$tasks"

echo "load before: $(uptime)"
taskd_s=$(mean_seconds taskd "$runs" "cp $work/template.db $work/run.db" "$taskd --db $work/run.db run-once --concurrency 8")
bare_s=$(mean_seconds bare "$runs" true "$spawn_loop $tasks 8 /bin/true")
aps_s=$(mean_seconds apscheduler "$aps_runs" "cp $work/aps-template.db $work/aps.db" "$python $here/apscheduler_dispatch.py run $work/aps.db $tasks")
echo "load after: $(uptime)"

# The last taskd run must have recorded every run as succeeded.
succeeded=$(sql "$work/run.db" "SELECT count(*) FROM runs WHERE status = 'succeeded'")
if [ "$succeeded" != "$tasks" ]; then
  echo "dispatch: taskd recorded $succeeded succeeded runs of $tasks" >&2
  exit 1
fi

rate() { awk -v n="$tasks" -v s="$1" 'BEGIN { printf "%.0f", n / s }'; }
taskd_rate=$(rate "$taskd_s") bare_rate=$(rate "$bare_s") aps_rate=$(rate "$aps_s")
echo
echo "$tasks runs of /bin/true, 8 at once; runs per second (mean of $runs runs, APScheduler $aps_runs)"
print_header
ratio=$(awk -v a="$taskd_rate" -v b="$bare_rate" 'BEGIN { printf "%.2f", a / b }')
print_row "taskd vs bare spawn loop" "$taskd_rate/s" "$bare_rate/s" "$ratio" ">= 0.70" "$(compare "$ratio" ge 0.70)"
ratio=$(awk -v a="$taskd_rate" -v b="$aps_rate" 'BEGIN { printf "%.2f", a / b }')
printf '%-34s %12s %12s %8s %10s %s\n' "taskd vs APScheduler 3" "$taskd_rate/s" "$aps_rate/s" "$ratio" "-" "(ratio)"
