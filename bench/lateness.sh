#!/usr/bin/env bash
# Benchmark 3 of issue #5: start lateness. `taskd run --concurrency 8` with
# 1 000 tasks `--every 1s` ... `10s` (100 of each) runs /bin/true for 2
# minutes; lateness is started_at - scheduled_at of every run whose slot
# fell in the measured part of the run (the tasks have no jitter, so
# not_before = scheduled_at). started_at is taken when the run is claimed,
# just before its child is spawned.
# Usage: bench/lateness.sh [build-dir]   (BENCH_QUICK=1: 20 seconds)
set -euo pipefail
here=$(dirname "$(realpath "$0")")
source "$here/common.bash"
bench_setup "${1:-build}"
seconds=120
if [ "${BENCH_QUICK:-0}" = 1 ]; then seconds=20; fi
db=$work/taskd.db

write_tasks "$work/tasks.toml" 1000 false 1s 2s 3s 4s 5s 6s 7s 8s 9s 10s
"$taskd" --db "$db" apply "$work/tasks.toml" >/dev/null

echo "load before: $(uptime)"
started=$(now_ms)
# SIGTERM at the end: taskd stops claiming, waits for its children, records
# them, exits 0. Its log (info level, two lines a run) goes to a file.
timeout --signal=TERM "$seconds" "$taskd" --db "$db" run --concurrency 8 2>"$work/run.log" || [ $? = 124 ]
stopped=$(now_ms)
echo "load after: $(uptime)"

# Slots of the first and the last second are left out: the process starts
# and stops then.
slots="FROM runs WHERE scheduled_at >= $((started + 1000)) AND scheduled_at < $((stopped - 1000))"
late="SELECT started_at - scheduled_at $slots AND started_at IS NOT NULL ORDER BY 1"
count=$(sql "$db" "SELECT count(*) $slots AND started_at IS NOT NULL")
# Usage: percentile P QUERY ROWS: the P-th percentile of QUERY's ordered values.
percentile() { sql "$db" "$2 LIMIT 1 OFFSET $(($1 * ($3 - 1) / 100))"; }
p50=$(percentile 50 "$late" "$count") p99=$(percentile 99 "$late" "$count") worst=$(percentile 100 "$late" "$count")
# Default phases are hashed to the millisecond, so most slot instants start
# one run; where several share an instant, the first run shows how late the
# loop wakes, the rest how fast it works through the burst.
first="SELECT min(started_at) - scheduled_at $slots AND started_at IS NOT NULL GROUP BY scheduled_at ORDER BY 1"
instants=$(sql "$db" "SELECT count(DISTINCT scheduled_at) $slots AND started_at IS NOT NULL")
first_p50=$(percentile 50 "$first" "$instants") first_p99=$(percentile 99 "$first" "$instants")
burst=$(awk -v c="$count" -v i="$instants" 'BEGIN { printf "%.0f", c / i }')
not_started=$(sql "$db" "SELECT count(*) $slots AND started_at IS NULL")
statuses=$(sql "$db" "SELECT group_concat(status || ' ' || n, ', ') FROM (SELECT status, count(*) AS n $slots GROUP BY status)")

echo
echo "1000 tasks every 1s..10s, $seconds s of taskd run --concurrency 8: $count starts measured ($statuses)"
echo "started - scheduled, ms: p50 $p50, p99 $p99, max $worst; slots never started: $not_started"
echo "first start of each of the $instants slot instants (about $burst runs each), ms: p50 $first_p50, p99 $first_p99"
print_header
print_row "p99 start lateness (ms)" "$p99" "-" "-" "<= 20" "$(compare "$p99" le 20)"
print_row "p99 wake-up lateness (ms)" "$first_p99" "-" "-" "<= 20" "$(compare "$first_p99" le 20)"
