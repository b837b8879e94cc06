#!/usr/bin/env bash
# Benchmarks 2 and 6 (dispatch half) of issue #5: dispatch throughput.
# 10 000 tasks due at once run /bin/true; `taskd run-once --concurrency 8`
# (the tick, every claim, spawn and recorded outcome: whole process) against
# a bare posix_spawn+waitpid loop with 8 in flight (spawn_loop), and against
# APScheduler 3 with its SQLAlchemy job store on SQLite and a pool of 8
# threads doing the same work. Each side is timed with hyperfine on a fresh
# copy of its prepared database. taskd and the loop run in turns, one of each
# per pair, so that a change in the machine's load or state between runs
# reaches both sides; the verdict is on the mean of the pairs' ratios.
# Usage: bench/dispatch.sh [build-dir]   (BENCH_QUICK=1: 1 000 tasks, 1 pair)
# Runs: 6 pairs of taskd and the loop, 2 of APScheduler (minutes each).
set -euo pipefail
here=$(dirname "$(realpath "$0")")
source "$here/common.bash"
bench_setup "${1:-build}"
spawn_loop=$(realpath "${1:-build}/bench/spawn_loop")
python=/usr/bin/python3
tasks=10000 pairs=6 aps_runs=2
if [ "${BENCH_QUICK:-0}" = 1 ]; then tasks=1000 pairs=1 aps_runs=1; fi

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
for pair in $(seq "$pairs"); do
  mean_seconds "taskd-$pair" 1 "cp $work/template.db $work/run.db" "$taskd --db $work/run.db run-once --concurrency 8" >>"$work/taskd.seconds"
  mean_seconds "bare-$pair" 1 true "$spawn_loop $tasks 8 /bin/true" >>"$work/bare.seconds"
done
aps_s=$(mean_seconds apscheduler "$aps_runs" "cp $work/aps-template.db $work/aps.db" "$python $here/apscheduler_dispatch.py run $work/aps.db $tasks")
echo "load after: $(uptime)"

# The last taskd run must have recorded every run as succeeded.
succeeded=$(sql "$work/run.db" "SELECT count(*) FROM runs WHERE status = 'succeeded'")
if [ "$succeeded" != "$tasks" ]; then
  echo "dispatch: taskd recorded $succeeded succeeded runs of $tasks" >&2
  exit 1
fi

# The mean of a file's numbers, one a line.
mean_of() { awk '{ sum += $1 } END { print sum / NR }' "$1"; }
rate() { awk -v n="$tasks" -v s="$1" 'BEGIN { printf "%.0f", n / s }'; }
taskd_rate=$(rate "$(mean_of "$work/taskd.seconds")") bare_rate=$(rate "$(mean_of "$work/bare.seconds")")
aps_rate=$(rate "$aps_s")
echo
echo "seconds of each pair (taskd, bare loop, bare / taskd):"
paste "$work/taskd.seconds" "$work/bare.seconds" | awk '{ printf "  %d: %.3f %.3f %.2f\n", NR, $1, $2, $2 / $1 }' | tee "$work/pairs"
echo "$tasks runs of /bin/true, 8 at once; runs per second (mean of $pairs runs each, APScheduler $aps_runs)"
print_header
ratio=$(awk '{ sum += $4 } END { printf "%.2f", sum / NR }' "$work/pairs")
print_row "taskd vs bare loop (mean of pairs)" "$taskd_rate/s" "$bare_rate/s" "$ratio" ">= 0.85" "$(compare "$ratio" ge 0.85)"
ratio=$(awk -v a="$taskd_rate" -v b="$aps_rate" 'BEGIN { printf "%.2f", a / b }')
printf '%-34s %12s %12s %8s %10s %s\n' "taskd vs APScheduler 3" "$taskd_rate/s" "$aps_rate/s" "$ratio" "-" "(ratio)"
