#!/usr/bin/env bash
# Benchmark 4 of issue #5: the herd. 10 000 tasks `--every 60s` added in one
# go (one `taskd apply`): peak starts per second / mean starts per second,
# forecast (`taskd forecast --json --window 10m --bucket 1s`) and measured
# (started_at of every run in the history of a 10-minute `taskd run
# --concurrency 8` of /bin/true).
# Usage: bench/herd.sh [build-dir]
#   (BENCH_HERD_SECONDS=N: measure N seconds instead of 600; BENCH_QUICK=1: 120)
set -euo pipefail
here=$(dirname "$(realpath "$0")")
source "$here/common.bash"
bench_setup "${1:-build}"
seconds=${BENCH_HERD_SECONDS:-600}
if [ "${BENCH_QUICK:-0}" = 1 ]; then seconds=${BENCH_HERD_SECONDS:-120}; fi
db=$work/taskd.db

write_tasks "$work/tasks.toml" 10000 false 60s
"$taskd" --db "$db" apply "$work/tasks.toml" >/dev/null
forecast=$("$taskd" --db "$db" --json forecast --window 10m --bucket 1s | jq '.peak_to_mean')

echo "load before: $(uptime)"
# The measured window starts at the first whole second after the loop started.
started=$(( ($(now_ms) / 1000 + 1) * 1000 ))
timeout --signal=TERM "$((seconds + 2))" "$taskd" --db "$db" run --concurrency 8 --log-level warn || [ $? = 124 ]
echo "load after: $(uptime)"

window="FROM runs WHERE started_at >= $started AND started_at < $((started + seconds * 1000))"
total=$(sql "$db" "SELECT count(*) $window")
peak=$(sql "$db" "SELECT max(n) FROM (SELECT count(*) AS n $window GROUP BY started_at / 1000)")
measured=$(awk -v peak="$peak" -v total="$total" -v s="$seconds" 'BEGIN { printf "%.2f", peak / (total / s) }')
late_p99=$(sql "$db" "SELECT started_at - scheduled_at $window ORDER BY 1 LIMIT 1 OFFSET $((99 * (total - 1) / 100))")

echo
echo "10000 tasks every 60s: $total starts in $seconds s (mean $(awk -v t="$total" -v s="$seconds" \
  'BEGIN { printf "%.1f", t / s }')/s, peak $peak/s); p99 start lateness $late_p99 ms"
print_header
forecast=$(printf '%.2f' "$forecast")
print_row "forecast peak/mean (1s buckets)" "$forecast" "-" "-" "<= 1.3" "$(compare "$forecast" le 1.3)"
print_row "measured peak/mean (1s buckets)" "$measured" "-" "-" "<= 1.3" "$(compare "$measured" le 1.3)"
