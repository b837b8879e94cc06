#!/usr/bin/env bash
# Issue 14: the commands a person or a monitoring job runs, at scale. Two
# databases made by bench/make_tasks: a million tasks (10 000 of them every
# 10 s from now, the rest planned from tomorrow), and 10 000 tasks with 1 000
# runs each (10 million runs). Each command runs ROUNDS times, interleaved
# with its floor where it has one; the table gives the median wall time,
# the largest peak RSS (GNU time's %M) and a verdict against the goals:
#   peak RSS of every command <= 32 MB, on both databases;
#   list at 1 000 000 tasks within 1.5x the floor (bench/listing_floor: the
#     same columns read with SQLite's C API and printed with printf);
#   list --json and export within 1.5x list (issue 32);
#   forecast --window 1h at 1 000 000 tasks <= 2 s;
#   metrics at 10 000 000 runs <= 50 ms.
# Output goes to /dev/null for taskd and the floor alike.
# Usage: bench/scale.sh [build-dir]
#   BENCH_QUICK=1: 100 000 tasks and 1 000 x 100 runs, 3 rounds
#   BENCH_DIR=DIR: keep the databases in DIR and reuse them when present
set -euo pipefail
source "$(dirname "$(realpath "$0")")/common.bash"

build=${1:-build}
taskd=$(realpath "$build/taskd")
make_tasks=$(realpath "$build/bench/make_tasks")
floor=$(realpath "$build/bench/listing_floor")
tasks=1000000 active=10000 history_tasks=10000 runs=1000 rounds=5
if [ "${BENCH_QUICK:-0}" = 1 ]; then tasks=100000 active=1000 history_tasks=1000 runs=100 rounds=3; fi
rss_goal_kb=$((32 * 1024))

dir=${BENCH_DIR:-}
if [ -z "$dir" ]; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir"
many="$dir/tasks-$tasks.db"
history="$dir/runs-$history_tasks-x-$runs.db"

make_db "$many" $((tasks - active)) "$active" 0
make_db "$history" "$history_tasks" 0 "$runs"

# measure NAME COMMAND...: appends "seconds kb" per round to $dir/NAME.m
measure() {
  local name=$1
  shift
  /usr/bin/time -f "%e %M" -o "$dir/$name.last" "$@" >/dev/null
  cat "$dir/$name.last" >>"$dir/$name.m"
}
median_seconds() { sort -n "$dir/$1.m" | awk '{ t[NR] = $1 } END { print t[int((NR + 1) / 2)] }'; }
peak_kb() { sort -k2 -n "$dir/$1.m" | tail -n 1 | cut -d' ' -f2; }

# The commands: NAME DB ARGS...
commands=(
  "list|$many|list"
  "list --json|$many|--json list"
  "export|$many|export"
  "forecast --window 1h|$many|forecast --window 1h"
  "forecast --window 1d|$many|forecast --window 1d"
  "status|$many|status"
  "metrics|$many|metrics"
  "check|$many|check"
  "history|$history|history"
  "history --limit 100000|$history|history --limit 100000"
  "history --json --limit 100000|$history|--json history --limit 100000"
  "history --status failed|$history|history --status failed --limit 1000"
  "history --since 1h|$history|history --since 1h --limit 100000"
  "list (10k tasks, 10M runs)|$history|list"
  "export (10k tasks, 10M runs)|$history|export"
  "status (10M runs)|$history|status"
  "metrics (10M runs)|$history|metrics"
  "check (10M runs)|$history|check"
)
key() { echo "$1" | tr -c 'a-zA-Z0-9\n' '_'; }

rm -f "$dir"/*.m
for ((round = 1; round <= rounds; round++)); do
  echo "round $round/$rounds ..." >&2
  measure floor_list "$floor" "$many" list
  measure floor_export "$floor" "$many" export
  for entry in "${commands[@]}"; do
    IFS='|' read -r name db args <<<"$entry"
    # shellcheck disable=SC2086
    measure "$(key "$name")" "$taskd" --db "$db" $args
  done
done

printf '%-34s %10s %10s %10s %8s %s\n' command seconds "peak MiB" base ratio verdict
verdict_all=1
for entry in "${commands[@]}"; do
  IFS='|' read -r name db args <<<"$entry"
  k=$(key "$name")
  seconds=$(median_seconds "$k")
  kb=$(peak_kb "$k")
  ok=$(compare "$kb" le "$rss_goal_kb")
  base="" base_text="-" ratio="-"
  case "$name" in  # the base of a ratio: the floor for list, list for its JSON and export
    list) base=floor_list ;;
    "list --json" | export) base=list ;;
  esac
  if [ -n "$base" ]; then
    base_seconds=$(median_seconds "$base")
    ratio=$(awk -v a="$seconds" -v b="$base_seconds" 'BEGIN { printf "%.2f", a / b }')
    base_text=$base_seconds
    [ "$(compare "$ratio" le 1.5)" = 1 ] || ok=0
  fi
  case "$name" in
    "forecast --window 1h") [ "$(compare "$seconds" le 2)" = 1 ] || ok=0 ;;
    "metrics (10M runs)") [ "$(compare "$seconds" le 0.05)" = 1 ] || ok=0 ;;
  esac
  [ "$ok" = 1 ] || verdict_all=0
  printf '%-34s %10s %10.1f %10s %8s %s\n' "$name" "$seconds" "$(awk -v k="$kb" 'BEGIN { print k / 1024 }')" \
    "$base_text" "$ratio" "$([ "$ok" = 1 ] && echo PASS || echo MISS)"
done
echo "floor of export (listing_floor): $(median_seconds floor_export) s"
echo "tasks: $tasks ($active every 10s); history: $history_tasks tasks x $runs runs; $rounds rounds; load $(cut -d' ' -f1 /proc/loadavg)"
[ "$verdict_all" = 1 ]
