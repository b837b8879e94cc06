#!/usr/bin/env bash
# Issue #32, item 5: what `taskd run` costs while it waits. A million tasks,
# none due for the whole measurement (bench/make_tasks plans them from
# tomorrow); `taskd run` is given SETTLE seconds to open the file and plan
# its first wake-up, then its CPU time (/proc/PID/schedstat, in ns) and its
# wake-ups (voluntary context switches) are read over SECONDS, and its peak
# RSS (VmHWM) at the end. Goals: at most 0.1 % of one core (0.06 s of CPU a
# minute), and a peak RSS of at most 20 MB, as with runs going
# (bench/memory.sh).
# Usage: bench/idle.sh [build-dir]   (BENCH_QUICK=1: 100 000 tasks, 15 s)
set -euo pipefail
here=$(dirname "$(realpath "$0")")
source "$here/common.bash"
bench_setup "${1:-build}"
make_tasks=$(realpath "${1:-build}/bench/make_tasks")
tasks=1000000 settle=5 seconds=60
if [ "${BENCH_QUICK:-0}" = 1 ]; then tasks=100000 seconds=15; fi

make_db "$work/idle.db" "$tasks" 0 0
"$taskd" --db "$work/idle.db" run --log-file /dev/null &
pid=$!
on_exit() { kill "$pid" 2>/dev/null || true; }
trap 'on_exit; rm -rf "$work"' EXIT

# The process's CPU time in nanoseconds, all its threads, and its voluntary
# context switches.
cpu_ns() { cat /proc/"$pid"/task/*/schedstat | awk '{ ns += $1 } END { print ns }'; }
wakeups() { cat /proc/"$pid"/task/*/status | awk '/^voluntary_ctxt_switches/ { n += $2 } END { print n }'; }

sleep "$settle"
ns_before=$(cpu_ns) wakeups_before=$(wakeups)
sleep "$seconds"
ns_after=$(cpu_ns) wakeups_after=$(wakeups)
peak_kib=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status")
kill -TERM "$pid"
wait "$pid"

cpu_share=$(printf '%.3f' "$(bc -l <<<"($ns_after - $ns_before) / 10000000 / $seconds")")  # percent of one core
peak_mib=$(printf '%.1f' "$(bc -l <<<"$peak_kib / 1024")")
echo "taskd run, $tasks tasks none due, $seconds s after $settle s: $(((ns_after - ns_before) / 1000)) us of CPU," \
  "$((wakeups_after - wakeups_before)) wake-ups; load $(load_1m)"
print_header
print_row "idle CPU (% of one core)" "$cpu_share" "-" "-" "<= 0.1" "$(compare "$cpu_share" le 0.1)"
print_row "idle peak RSS (MiB)" "$peak_mib" "-" "-" "<= 20" "$(compare "$peak_mib" le 20)"
