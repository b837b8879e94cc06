#!/usr/bin/env bash
# Benchmark 3 of issue #5: start lateness. `taskd run --concurrency 8` with
# 1 000 tasks `--every 1s` ... `10s` (100 of each) runs /bin/true for 2
# minutes (measure_lateness in common.bash says what is measured).
# Usage: bench/lateness.sh [build-dir]   (BENCH_QUICK=1: 20 seconds)
set -euo pipefail
here=$(dirname "$(realpath "$0")")
source "$here/common.bash"
bench_setup "${1:-build}"
seconds=120
if [ "${BENCH_QUICK:-0}" = 1 ]; then seconds=20; fi

lateness_tasks "$work/taskd.db"
echo "load before: $(uptime)"
measure_lateness "$work/taskd.db" "$seconds"
echo "load after: $(uptime)"

echo
echo "1000 tasks every 1s..10s, $seconds s of taskd run --concurrency 8: $count starts measured ($statuses)"
echo "started - scheduled, ms: p50 $p50, p99 $p99, max $worst; slots never started: $not_started"
echo "first start of each of the $instants slot instants (about $burst runs each), ms: p50 $first_p50, p99 $first_p99"
print_header
print_row "p99 start lateness (ms)" "$p99" "-" "-" "<= 20" "$(compare "$p99" le 20)"
print_row "p99 wake-up lateness (ms)" "$first_p99" "-" "-" "<= 20" "$(compare "$first_p99" le 20)"
