#!/usr/bin/env bash
# Benchmark 5 and the memory half of 6: peak RSS of `taskd run` with
# 1 000 000 tasks, and of APScheduler 3 (BlockingScheduler, SQLAlchemy job
# store on SQLite) holding the same number of jobs, each also at 1 000 to
# show what the number of tasks adds. Besides the idle million, each
# scheduler runs 100 jobs of /bin/true every 10 s for the whole measurement,
# so the figure includes running children and writing history. Peak RSS is
# the process's VmHWM, read from /proc the same way for both, just before
# SIGTERM ends it.
# Usage: bench/memory.sh [build-dir]
#   BENCH_QUICK=1: 100 000 tasks, 15 s per scheduler
#   BENCH_APS_JOBS=N: APScheduler's large store holds N jobs (default: as many as taskd's)
#   BENCH_SECONDS=S: run each scheduler S seconds (default 60)
set -euo pipefail

build=${1:-build}
here=$(dirname "$0")
python=/usr/bin/python3
big=1000000
small=1000
active=100
seconds=60
if [ "${BENCH_QUICK:-0}" = 1 ]; then big=100000; seconds=15; fi
seconds=${BENCH_SECONDS:-$seconds}
aps_big=${BENCH_APS_JOBS:-$big}

work=$(mktemp -d)
measured=""
cleanup() {
  if [ -n "$measured" ]; then kill -KILL "$measured" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

timed() {  # timed COMMAND...: runs it, prints its wall time in seconds
  local start=$SECONDS
  "$@" >/dev/null
  echo "$((SECONDS - start))"
}

# peak_rss NAME COMMAND...: runs COMMAND for $seconds, prints its peak RSS and
# its RSS of anonymous memory (heap, stacks: not the mapped libraries) at the
# end, in KiB; its stdout is kept in $work/NAME.out and its stderr in $work/NAME.err.
peak_rss() {
  local name=$1
  shift
  "$@" >"$work/$name.out" 2>"$work/$name.err" &
  measured=$!
  sleep "$seconds"
  if ! kill -0 "$measured" 2>/dev/null; then
    echo "memory: $name ended early:" >&2
    cat "$work/$name.err" >&2
    exit 1
  fi
  awk '/^(VmHWM|RssAnon):/ {printf "%s ", $2}' "/proc/$measured/status"
  kill -TERM "$measured"
  wait "$measured" || { echo "memory: $name failed on SIGTERM:" >&2; cat "$work/$name.err" >&2; exit 1; }
  measured=""
}

succeeded_runs() {  # succeeded_runs DATABASE
  "$python" -c "import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) FROM runs WHERE status = 'succeeded'\").fetchone()[0])" "$1"
}

echo "generating: taskd $big tasks $(timed "$build/bench/make_tasks" "$work/taskd-big.db" $big) s," \
     "$small tasks $(timed "$build/bench/make_tasks" "$work/taskd-small.db" $small) s;" \
     "APScheduler $aps_big jobs $(timed "$python" "$here/apscheduler_memory.py" fill "$work/aps-big.db" "$aps_big") s," \
     "$small jobs $(timed "$python" "$here/apscheduler_memory.py" fill "$work/aps-small.db" $small) s"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A rss anon runs
for size in small big; do
  # The active tasks are added just before, as APScheduler's are, so that
  # none is overdue when the scheduler starts.
  "$build/bench/make_tasks" "$work/taskd-$size.db" 0 $active
  measurement=$(peak_rss "taskd-$size" "$build/taskd" --db "$work/taskd-$size.db" run)
  read -r "rss[taskd-$size]" "anon[taskd-$size]" <<<"$measurement"
  runs[taskd-$size]=$(succeeded_runs "$work/taskd-$size.db")
  measurement=$(peak_rss "aps-$size" "$python" "$here/apscheduler_memory.py" run "$work/aps-$size.db" $active)
  read -r "rss[aps-$size]" "anon[aps-$size]" <<<"$measurement"
  runs[aps-$size]=$(cat "$work/aps-$size.out")
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"

mib() { awk -v kib="$1" 'BEGIN { printf "%.1f", kib / 1024 }'; }
row() {  # row LABEL KEY TASKS
  printf '%-40s %10s %10s %14s %10s\n' "$1" "$3" "${runs[$2]}" "$(mib "${rss[$2]}")" "$(mib "${anon[$2]}")"
}
printf '\n%-40s %10s %10s %14s %10s\n' "scheduler (${seconds} s, $active jobs every 10 s)" "tasks" "runs done" "peak RSS MiB" "anon MiB"
row "taskd run" taskd-small $small
row "taskd run" taskd-big $big
row "APScheduler 3.9 + SQLAlchemyJobStore" aps-small $small
row "APScheduler 3.9 + SQLAlchemyJobStore" aps-big "$aps_big"

verdict=$(awk -v kib="${rss[taskd-big]}" 'BEGIN { print (kib <= 20 * 1024) ? "PASS" : "MISS" }')
printf '\n%-40s %10s %12s %14s\n' "result" "value" "goal" "verdict"
printf '%-40s %10s %12s %14s\n' "taskd peak RSS, $big tasks" "$(mib "${rss[taskd-big]}") MiB" "<= 20 MiB" "$verdict"
printf '%-40s %10s %12s %14s\n' "taskd: $big tasks / $small tasks" \
  "$(awk -v a="${rss[taskd-big]}" -v b="${rss[taskd-small]}" 'BEGIN { printf "%.2fx", a / b }')" "" ""
printf '%-40s %10s %12s %14s\n' "APScheduler / taskd, $aps_big vs $big" \
  "$(awk -v a="${rss[aps-big]}" -v b="${rss[taskd-big]}" 'BEGIN { printf "%.2fx", a / b }')" "(report)" ""
