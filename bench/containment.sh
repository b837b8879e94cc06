#!/usr/bin/env bash
# Issues #17 and #32: what containment costs a run's dispatch. 10 000 tasks
# due at once run /bin/true under `taskd run-once --concurrency 8` on a
# SQLite file, with --containment cgroup, --containment subreaper and the
# bare spawn loop (spawn_loop, 8 in flight) in turns (PAIRS rounds, taskd
# each time on a fresh copy of the prepared file): runs/s of each, each
# mode's ratio to the loop (goals: subreaper >= 0.85, cgroup >= 0.75) and
# the cgroup side's time over the subreaper side's. Where this machine lets
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
    printf '  round %d  %-10s %6d ms  %6.0f runs/s\n' "$pair" "$mode" "$ms" "$(bc -l <<<"$tasks * 1000 / $ms")"
  done
  start=$(now_ms)
  "$spawn_loop" "$tasks" 8 /bin/true
  ms=$(( $(now_ms) - start ))
  total[bare]=$(( ${total[bare]:-0} + ms ))
  printf '  round %d  %-10s %6d ms  %6.0f runs/s\n' "$pair" "bare loop" "$ms" "$(bc -l <<<"$tasks * 1000 / $ms")"
done
rate() { printf '%.0f/s' "$(bc -l <<<"$tasks * 1000 * $pairs / $1")"; }
declare -A goal=([subreaper]=0.85 [cgroup]=0.75)
echo "$tasks runs of /bin/true, 8 at once, $pairs rounds; load $(load_1m)"
print_header
for mode in "${modes[@]}"; do
  ratio=$(printf '%.2f' "$(bc -l <<<"${total[bare]} / ${total[$mode]}")")
  print_row "--containment $mode vs bare loop" "$(rate "${total[$mode]}")" "$(rate "${total[bare]}")" "$ratio" \
    ">= ${goal[$mode]}" "$(compare "$ratio" ge "${goal[$mode]}")"
done
if [ "${#modes[@]}" = 2 ]; then
  printf '  cgroup / subreaper: %.2f\n' "$(bc -l <<<"${total[cgroup]} / ${total[subreaper]}")"
fi
