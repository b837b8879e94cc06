#!/usr/bin/env bash
# Issue #17: what containment by cgroup costs a run's dispatch. 10 000 tasks
# due at once run /bin/true under `taskd run-once --concurrency 8` on a
# SQLite file, with --containment cgroup and --containment subreaper in
# turns (PAIRS pairs, each on a fresh copy of the prepared file), and the
# bare spawn loop (spawn_loop, 8 in flight) once: runs/s of each, and the
# cgroup side's time over the subreaper side's. Where this machine lets
# taskd make no cgroup, only the subreaper side runs.
# Usage: bench/containment.sh [build-dir]   (BENCH_QUICK=1: 1 000 tasks, 1 pair)
set -euo pipefail
here=$(dirname "$(realpath "$0")")
source "$here/common.bash"
bench_setup "${1:-build}"
spawn_loop=$(realpath "${1:-build}/bench/spawn_loop")
tasks=10000 pairs=3
if [ "${BENCH_QUICK:-0}" = 1 ]; then tasks=1000 pairs=1; fi

write_tasks "$work/tasks.toml" "$tasks" true 1w
"$taskd" --db "$work/base.db" apply "$work/tasks.toml" >/dev/null
modes=(subreaper)
if "$taskd" --db "$work/probe.db" run-once --containment cgroup 2>"$work/probe.err"; then
  modes=(cgroup subreaper)
else
  echo "no cgroup here: $(cat "$work/probe.err")"
fi

# Milliseconds of one dispatch of every task with --containment MODE.
dispatch_ms() {
  cp "$work/base.db" "$work/run.db"
  local start
  start=$(now_ms)
  "$taskd" --db "$work/run.db" run-once --concurrency 8 --containment "$1" >/dev/null
  echo $(( $(now_ms) - start ))
}

declare -A total=()
for pair in $(seq 1 "$pairs"); do
  for mode in "${modes[@]}"; do
    ms=$(dispatch_ms "$mode")
    total[$mode]=$(( ${total[$mode]:-0} + ms ))
    printf '  pair %d  %-10s %6d ms  %6.0f runs/s\n' "$pair" "$mode" "$ms" "$(bc -l <<<"$tasks * 1000 / $ms")"
  done
done
start=$(now_ms)
"$spawn_loop" "$tasks" 8 /bin/true
bare_ms=$(( $(now_ms) - start ))
printf '  bare spawn loop      %6d ms  %6.0f runs/s\n' "$bare_ms" "$(bc -l <<<"$tasks * 1000 / $bare_ms")"
for mode in "${modes[@]}"; do
  mean=$(( total[$mode] / pairs ))
  printf '  %-10s mean %6d ms: %.2f of the bare loop\n' "$mode" "$mean" "$(bc -l <<<"$bare_ms / $mean")"
done
if [ "${#modes[@]}" = 2 ]; then
  printf '  cgroup / subreaper: %.2f\n' "$(bc -l <<<"${total[cgroup]} / ${total[subreaper]}")"
fi
