#!/usr/bin/env bash
# Issue 31: the board's benchmarks, each against `taskd web` on a SQLite file,
# with Debian's headless chromium where a browser is needed (bench/web.py):
#   render:   the board of 10 000 tasks (20 runs each), navigation start to
#             its rows drawn, median of ROUNDS, of its first page (500 tasks)
#             and of its largest (?limit=5000); goal <= 1 s;
#   memory:   peak RSS (VmHWM) of taskd web while a client walks every page
#             (the board's, /api/v1/tasks to the end, RUN_PAGES pages of
#             /api/v1/runs, /metrics x 3, hosts, a task, its explain ...),
#             on 1 000 000 tasks and on 10 000 tasks x 1 000 runs (10 000 000);
#             goal <= 64 MiB each;
#   events:   a run's end (its finished_at) to the board's page in chromium
#             receiving its event, over ROUNDS runs of run-once; goal max <= 1 s;
#   pages:    ms of one page of /api/v1/tasks (500 tasks) on the 1 000 000
#             tasks, the first and one past the middle (after=NAME), without
#             and with the board's counts (total=1), median of ROUNDS x 5
#             (curl), alternating with BENCH_BASELINE when given;
#   lateness: bench/lateness.sh's loop alone (A) and beside taskd web with a
#             client asking for the board every second (B), ABAB; goal: no
#             difference beyond the rounds' own spread.
# Usage: bench/web.sh [build-dir]
#   BENCH_QUICK=1: 100 000 tasks, 1 000 x 100 runs, fewer rounds, 20 s loops
#   BENCH_DIR=DIR: keep the large databases in DIR and reuse them when present
#   BENCH_PARTS="render memory events pages lateness": the parts to run (default all)
#   BENCH_BASELINE=BINARY: render's first page, memory and pages alternate this
#             taskd and the build's, twice each
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

# Starts taskd web (the build's, or BINARY) on DB at a free port; sets web_pid and url.
# Usage: start_web DB [BINARY]
start_web() {
  : >"$work/web.out"
  "${2:-$taskd}" --db "$1" web --listen 127.0.0.1:0 >>"$work/web.out" 2>"$work/web.err" &
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
larger() { echo $(($1 > $2 ? $1 : $2)); }

many="$dir/tasks-$tasks.db"
history="$dir/runs-$history_tasks-x-$runs.db"
board="$dir/board-$board_tasks-x-20.db"
results=()  # the table's rows, as print_row's arguments joined by "|"
result() { local IFS='|'; results+=("$*"); }

# Usage: render_ms BINARY PATH: the median ms of ROUNDS renders of the board at PATH served by BINARY.
render_ms() {
  start_web "$board" "$1"
  "$python" "$here/web.py" render "$url" "$rounds" "$2" >"$work/render"
  stop_web >/dev/null
  echo "render of $2 by $1, ms from navigation start: $(cut -d' ' -f1 "$work/render" | tr '\n' ' ')" \
    "(rows drawn: $(cut -d' ' -f2 "$work/render" | sort -u | tr '\n' ' '))" >&2
  cut -d' ' -f1 "$work/render" | median
}

measure_render() {
  make_db "$board" "$board_tasks" 0 20
  local taskd_ms=0 baseline_ms=0 baseline_text="-" ms largest_ms
  for _ in 1 2; do
    if [ -n "${BENCH_BASELINE:-}" ]; then
      ms=$(render_ms "$BENCH_BASELINE" /)
      baseline_ms=$(larger "$baseline_ms" "${ms%.*}")
      baseline_text=$baseline_ms
    fi
    ms=$(render_ms "$taskd" /)
    taskd_ms=$(larger "$taskd_ms" "${ms%.*}")
  done
  result "board render, 10 000 tasks, first page (ms, larger median of 2)" "$taskd_ms" "$baseline_text" "-" "<= 1000" \
    "$(compare "$taskd_ms" le 1000)"
  largest_ms=$(render_ms "$taskd" "/?limit=5000")
  result "board render, 10 000 tasks, a page of 5 000 (ms)" "$largest_ms" "-" "-" "<= 1000" \
    "$(compare "$largest_ms" le 1000)"
}

# Usage: walk_rss DB BINARY: the peak RSS of BINARY's taskd web in KiB while a client walks DB.
walk_rss() {
  start_web "$1" "$2"
  local walked kb
  walked=$("$python" "$here/web.py" walk "$url" "$run_pages")
  kb=$(stop_web)
  echo "walk of $1 by $2: $walked; peak RSS $kb KiB" >&2
  echo "$kb"
}

measure_memory() {
  make_db "$many" "$tasks" 0 0
  make_db "$history" "$history_tasks" 0 "$runs"
  local db taskd_kb baseline_kb baseline_text label
  for db in "$many" "$history"; do
    baseline_kb=0 taskd_kb=0 baseline_text="-"
    if [ -n "${BENCH_BASELINE:-}" ]; then
      for _ in 1 2; do
        baseline_kb=$(larger "$baseline_kb" "$(walk_rss "$db" "$BENCH_BASELINE")")
        taskd_kb=$(larger "$taskd_kb" "$(walk_rss "$db" "$taskd")")
      done
      baseline_text=$(mib "$baseline_kb")
    else
      taskd_kb=$(walk_rss "$db" "$taskd")
    fi
    label="peak RSS, $tasks tasks (MiB)"
    [ "$db" = "$history" ] && label="peak RSS, $((history_tasks * runs)) runs (MiB)"
    result "$label" "$(mib "$taskd_kb")" "$baseline_text" "-" "<= 64" "$(compare "$taskd_kb" le "$rss_goal_kb")"
  done
}

# Usage: page_ms BINARY QUERY: the median ms of ROUNDS x 5 GETs of /api/v1/tasks?QUERY
# from BINARY's taskd web on the million tasks.
page_ms() {
  start_web "$many" "$1"
  local times
  times=$(for _ in $(seq $((rounds * 5))); do
    curl -sS -o /dev/null -w '%{time_total}\n' "$url/api/v1/tasks?$2"
  done | awk '{ printf "%.1f\n", $1 * 1000 }')
  stop_web >/dev/null
  echo "page ?$2 by $1, ms: $(echo "$times" | tr '\n' ' ')" >&2
  echo "$times" | median
}

measure_pages() {
  make_db "$many" "$tasks" 0 0
  local middle query taskd_ms baseline_ms
  middle=$(printf 'bench-%07d' $((tasks / 2)))  # bench/make_tasks's names
  for query in "limit=500" "limit=500&after=$middle" "total=1&limit=500" "total=1&limit=500&after=$middle"; do
    taskd_ms="" baseline_ms=""
    for _ in 1 2; do
      if [ -n "${BENCH_BASELINE:-}" ]; then baseline_ms+="$(page_ms "$BENCH_BASELINE" "$query") "; fi
      taskd_ms+="$(page_ms "$taskd" "$query") "
    done
    result "/api/v1/tasks?$query, $tasks tasks (ms, medians)" "$taskd_ms" "${baseline_ms:--}" "-" "-" 1
  done
}

measure_events() {
  "$taskd" --db "$work/latency.db" add bench-latency --manual -- /bin/true >/dev/null
  start_web "$work/latency.db"
  "$python" "$here/web.py" latency "$url" "$taskd" "$work/latency.db" "$((rounds * 2))" >"$work/latency"
  stop_web >/dev/null
  echo "event latency, ms: $(tr '\n' ' ' <"$work/latency")"
  result "event latency, median (ms)" "$(median <"$work/latency")" "-" "-" "-" 1
  local latency_max
  latency_max=$(sort -n "$work/latency" | tail -n 1)
  result "event latency, max (ms)" "$latency_max" "-" "-" "<= 1000" "$(compare "$latency_max" le 1000)"
}

# One round of the loop's lateness on a new database, beside a busy board or
# not; prints its p99.
# Usage: lateness_round alone|board ROUND
lateness_round() {
  local db="$work/lateness-$1-$2.db" board_pid=""
  lateness_tasks "$db"
  if [ "$1" = board ]; then
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
  echo "lateness $1, round $2: p50 $p50 ms, p99 $p99 ms, max $worst ms, $count starts ($statuses); load $(load_1m)" >&2
  echo "$p99"
}

# ABAB. The board costs something measurable when every round beside it is
# later than every round without.
measure_lateness_beside_board() {
  local alone=() beside=()
  for round in 1 2; do
    alone+=("$(lateness_round alone "$round")")
    beside+=("$(lateness_round board "$round")")
  done
  local alone_worst beside_best
  alone_worst=$(printf '%s\n' "${alone[@]}" | sort -n | tail -n 1)
  beside_best=$(printf '%s\n' "${beside[@]}" | sort -n | head -n 1)
  result "p99 lateness, board vs alone (ms)" "${beside[*]}" "${alone[*]}" "-" "not above" \
    "$(compare "$beside_best" le "$alone_worst")"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for part in ${BENCH_PARTS:-render memory events pages lateness}; do
  case $part in
    render) measure_render ;;
    memory) measure_memory ;;
    events) measure_events ;;
    lateness) measure_lateness_beside_board ;;
    pages) measure_pages ;;
    *) echo "bench/web.sh: no part \"$part\" (render, memory, events, pages, lateness)" >&2; exit 2 ;;
  esac
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
print_header
for row in "${results[@]}"; do
  IFS='|' read -r -a fields <<<"$row"
  print_row "${fields[@]}"
done
