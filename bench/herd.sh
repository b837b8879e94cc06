#!/usr/bin/env bash
# Benchmark 4 of issue #5: the herd. 10 000 tasks `--every 60s` of /bin/true
# added in one go (one `taskd apply`) to a database that `taskd run
# --concurrency 8` serves: peak starts per second / mean starts per second,
# forecast (`taskd forecast --json --window 10m --bucket 1s`, right after the
# apply) and measured (started_at of every run in history over the 10 minutes
# after the apply returned, the runs of slots that came due during the apply
# included).
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
echo "load before: $(uptime)"
# Its log (info level, two lines a run) goes to a file.
"$taskd" --db "$db" run --concurrency 8 2>"$work/run.log" &
daemon=$!
trap 'kill $daemon 2>/dev/null || true; rm -rf "$work"' EXIT
apply_started=$(now_ms)
"$taskd" --db "$db" apply "$work/tasks.toml" >/dev/null
applied=$(now_ms)
forecast=$("$taskd" --db "$db" --json forecast --window 10m --bucket 1s | jq '.peak_to_mean')
started=$(( (applied / 1000 + 1) * 1000 ))  # the first whole second after the apply
sleep "$(awk -v until="$((started + seconds * 1000))" -v now="$(now_ms)" 'BEGIN { print (until - now) / 1000 }')"
kill -TERM "$daemon"
wait "$daemon"
echo "load after: $(uptime)"

window="FROM runs WHERE started_at >= $started AND started_at < $((started + seconds * 1000))"
per_second="SELECT count(*) AS n $window GROUP BY started_at / 1000"
total=$(sql "$db" "SELECT count(*) $window")
peak=$(sql "$db" "SELECT max(n) FROM ($per_second)")
steady_peak=$(sql "$db" "SELECT max(n) FROM ($per_second HAVING min(started_at) >= $((started + 60000)))")
ratio() { awk -v peak="$1" -v total="$total" -v s="$seconds" 'BEGIN { printf "%.2f", peak / (total / s) }'; }
measured=$(ratio "$peak")
late_p99=$(sql "$db" "SELECT started_at - scheduled_at $window ORDER BY 1 LIMIT 1 OFFSET $((99 * (total - 1) / 100))")

echo
echo "10000 tasks every 60s, applied in $((applied - apply_started)) ms: $total starts in $seconds s" \
  "(mean $(awk -v t="$total" -v s="$seconds" 'BEGIN { printf "%.1f", t / s }')/s, peak $peak/s;" \
  "after the first minute peak $steady_peak/s, ratio $(ratio "$steady_peak")); p99 start lateness $late_p99 ms"
print_header
forecast=$(printf '%.2f' "$forecast")
print_row "forecast peak/mean (1s buckets)" "$forecast" "-" "-" "<= 1.3" "$(compare "$forecast" le 1.3)"
print_row "measured peak/mean (1s buckets)" "$measured" "-" "-" "<= 1.3" "$(compare "$measured" le 1.3)"
