#!/usr/bin/env bash
# Every benchmark of bench/ in turn (`make bench`), the cheap ones first,
# each script's output shown and kept in BUILD/bench-results/NAME.log; then
# the verdict rows of all of them (a measure, its goal, PASS or MISS) in one
# table, and the scripts that could not run to the end. Exit status 0 when
# every script ran and every verdict is a PASS. BENCH_QUICK=1 reaches each
# script (shorter runs, fewer rounds).
# Usage: bench/all.sh [build-dir]
set -uo pipefail
here=$(dirname "$(realpath "$0")")
build=${1:-build}

benchmarks=(tick_cost idle dispatch containment run_as run_end_counters calendar preview_vs_python import_crontab
            lateness herd memory scale web postgresql hosts peers-postgresql)
# Tools that compare two binaries given to them, not part of the run.
ab_tools=(listings_ab)

for script in "$here"/*.sh; do
  name=$(basename "$script" .sh)
  if [[ " ${benchmarks[*]} ${ab_tools[*]} all " != *" $name "* ]]; then
    echo "bench/all.sh: bench/$name.sh is neither a benchmark of its list nor an A/B tool" >&2
    exit 2
  fi
done

results=$build/bench-results
mkdir -p "$results"
not_run=()
for name in "${benchmarks[@]}"; do
  echo "== bench/$name.sh $build"
  "$here/$name.sh" "$build" 2>&1 | tee "$results/$name.log"
  status=${PIPESTATUS[0]}
  # A script that ends non-zero after a MISS (scale.sh) ran to its end.
  if [ "$status" != 0 ] && ! grep -qw MISS "$results/$name.log"; then
    not_run+=("bench/$name.sh (exit $status: $results/$name.log)")
  fi
done

echo
echo "== verdicts ($(date -u +%FT%TZ), $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo "no git"))"
for name in "${benchmarks[@]}"; do
  grep -wE 'PASS|MISS' "$results/$name.log" | sed "s|^|$name: |" || echo "$name: no goal, a comparison ($results/$name.log)"
done
misses=$(for name in "${benchmarks[@]}"; do cat "$results/$name.log"; done | grep -cw MISS)
echo "$misses MISS; ${#not_run[@]} benchmark(s) that did not run to the end"
for line in "${not_run[@]}"; do echo "  $line"; done
[ "$misses" = 0 ] && [ "${#not_run[@]}" = 0 ]
