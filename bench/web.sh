#!/usr/bin/env bash
# Issue 31: the board's benchmarks, each against `taskd web` on a SQLite file,
# with Debian's headless chromium where a browser is needed (bench/web.py):
#   render:   the board of 10 000 tasks (20 runs each), navigation start to
#             its rows drawn, median of ROUNDS; goal <= 1 s;
#   memory:   peak RSS (VmHWM) of taskd web while a client walks every page
#             (the board's, /api/v1/tasks to the end, RUN_PAGES pages of
#             /api/v1/runs, /metrics x 3, hosts, a task, its explain ...),
#             on 1 000 000 tasks and on 10 000 tasks x 1 000 runs (10 000 000);
#             goal <= 64 MiB each;
#   events:   a run's end (its finished_at) to the board's page in chromium
#             receiving its event, over ROUNDS runs of run-once; goal max <= 1 s;
#   lateness: bench/lateness.sh's loop alone (A) and beside taskd web with a
#             client asking for the board every second (B), ABAB; goal: no
#             difference beyond the rounds' own spread.
# Usage: bench/web.sh [build-dir]
#   BENCH_QUICK=1: 100 000 tasks, 1 000 x 100 runs, fewer rounds, 20 s loops
#   BENCH_DIR=DIR: keep the large databases in DIR and reuse them when present
set -euo pipefail
here=$(dirname "$(realpath "$0")")
source "$here/common.bash"
bench_setup "${1:-build}"
make_tasks=$(realpath "${1:-build}/bench/make_tasks")
python=/usr/bin/python3

tasks=1000000 history_tasks=10000 runs=1000 run_pages=1000 rounds=10 lateness_seconds=120
if [ "${BENCH_QUICK:-0}" = 1 ]; then
  tasks=100000 history_tasks=1000 runs=100 run_pages=100 rounds=5 lateness_seconds=20
fi
board_tasks=10000 rss_goal_kb=$((64 * 1024))
dir=${BENCH_DIR:-$work}
mkdir -p "$dir"

web_pid=""
on_exit() {
  if [ -n "$web_pid" ]; then kill -TERM "$web_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap on_exit EXIT

# Starts taskd web on DB at a free port; sets web_pid and url.
start_web() {
  : >"$work/web.out"
  "$taskd" --db "$1" web --listen 127.0.0.1:0 >>"$work/web.out" 2>"$work/web.err" &
  web_pid=$!
  url=""
  while [ -z "$url" ]; do
    kill -0 "$web_pid" || { cat "$work/web.err" >&2; exit 1; }
    url=$(awk '/serving/ { sub("/$", "", $3); print $3 }' "$work/web.out")
    [ -n "$url" ] || sleep 0.05
  done
}
# Stops it; prints its peak RSS in KiB.
stop_web() {
  awk '/^VmHWM:/ { print $2 }' "/proc/$web_pid/status"
  kill -TERM "$web_pid"
  wait "$web_pid"
  web_pid=""
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mib() { awk -v kib="$1" 'BEGIN { printf "%.1f", kib / 1024 }'; }

many="$dir/tasks-$tasks.db"
history="$dir/runs-$history_tasks-x-$runs.db"
board="$dir/board-$board_tasks-x-20.db"
make_db "$many" "$tasks" 0 0
make_db "$history" "$history_tasks" 0 "$runs"
make_db "$board" "$board_tasks" 0 20
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# --- render
start_web "$board"
"$python" "$here/web.py" render "$url" "$rounds" >"$work/render"
stop_web >/dev/null
render_ms=$(cut -d' ' -f1 "$work/render" | median)
rows=$(cut -d' ' -f2 "$work/render" | sort -u | tr '\n' ' ')
echo "render, ms from navigation start: $(cut -d' ' -f1 "$work/render" | tr '\n' ' ')(rows drawn: $rows)"

# --- memory
declare -A rss
for db in many history; do
  start_web "${!db}"
  echo "walk of $db: $("$python" "$here/web.py" walk "$url" "$run_pages")"
  rss[$db]=$(stop_web)
done

# --- events
"$taskd" --db "$work/latency.db" add bench-latency --manual -- /bin/true >/dev/null
start_web "$work/latency.db"
"$python" "$here/web.py" latency "$url" "$taskd" "$work/latency.db" "$((rounds * 2))" >"$work/latency"
stop_web >/dev/null
latency_median=$(median <"$work/latency")
latency_max=$(sort -n "$work/latency" | tail -n 1)
echo "event latency, ms: $(tr '\n' ' ' <"$work/latency")"

# --- lateness, ABAB
declare -A p99s
for round in 1 2; do
  for side in alone board; do
    db="$work/lateness-$side-$round.db"
    lateness_tasks "$db"
    board_pid=""
    if [ "$side" = board ]; then
      start_web "$db"
      "$python" "$here/web.py" board "$url" &
      board_pid=$!
    fi
    measure_lateness "$db" "$lateness_seconds"
    if [ -n "$board_pid" ]; then
      kill -TERM "$board_pid"
      wait "$board_pid" || true
      stop_web >/dev/null
    fi
    p99s[$side]+="$p99 "
    echo "lateness $side, round $round: p50 $p50 ms, p99 $p99 ms, max $worst ms, $count starts ($statuses); load $(load_1m)"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# The board costs something measurable when every round beside it is later than every round without.
spread() { tr ' ' '\n' <<<"$1" | grep . | sort -n | sed -n "$2"; }
alone_worst=$(spread "${p99s[alone]}" '$p') board_best=$(spread "${p99s[board]}" 1p)
echo
print_header
print_row "board render, 10 000 tasks (ms)" "$render_ms" "-" "-" "<= 1000" "$(compare "$render_ms" le 1000)"
print_row "peak RSS, $tasks tasks (MiB)" "$(mib "${rss[many]}")" "-" "-" "<= 64" "$(compare "${rss[many]}" le "$rss_goal_kb")"
print_row "peak RSS, $((history_tasks * runs)) runs (MiB)" "$(mib "${rss[history]}")" "-" "-" "<= 64" \
  "$(compare "${rss[history]}" le "$rss_goal_kb")"
print_row "event latency, median (ms)" "$latency_median" "-" "-" "-" 1
print_row "event latency, max (ms)" "$latency_max" "-" "-" "<= 1000" "$(compare "$latency_max" le 1000)"
print_row "p99 lateness, board vs alone (ms)" "${p99s[board]% }" "${p99s[alone]% }" "-" "not above" \
  "$(compare "$board_best" le "$alone_worst")"
