#!/usr/bin/env bash
# Issue #30: what --user and --env-file cost dispatch. TASKS tasks due at
# once run /bin/true with `taskd run-once --concurrency 8`: plain (as the
# scheduler's own user, no env file) and switched (each as `nobody`, with an
# env file of 20 variables read at each run start). The two run in turns
# on fresh copies of their prepared databases, so that a change in the
# machine's load reaches both; the verdict is on the mean of the pairs'
# ratios (switched / plain runs per second), goal >= 0.90.
# Usage (as root: only root switches users): bench/run_as.sh [build-dir]
#   BENCH_QUICK=1: 1 000 tasks, 1 pair (default 5 000 tasks, 6 pairs)
set -euo pipefail
here=$(dirname "$(realpath "$0")")
source "$here/common.bash"
bench_setup "${1:-build}"
tasks=5000 pairs=6
if [ "${BENCH_QUICK:-0}" = 1 ]; then tasks=1000 pairs=1; fi
if [ "$(id -u)" != 0 ]; then
  echo "run_as: skipped: only a scheduler running as root runs tasks as another user; run it as root" >&2
  exit 0
fi

for i in $(seq 20); do echo "SECRET_$i=value-$i"; done >"$work/env"
chmod 0600 "$work/env"
write_tasks "$work/plain.toml" "$tasks" true 1w
{ printf '[defaults]\nuser = "nobody"\nenv_file = "%s"\n\n' "$work/env"; cat "$work/plain.toml"; } >"$work/switched.toml"
for kind in plain switched; do
  "$taskd" --db "$work/$kind-template.db" apply "$work/$kind.toml" >/dev/null
done

# Seconds one run-once of KIND takes on a fresh copy of its database.
seconds_of() {
  local kind=$1
  cp "$work/$kind-template.db" "$work/$kind.db"
  local start end
  start=$(date +%s%N)
  "$taskd" --db "$work/$kind.db" run-once --concurrency 8
  end=$(date +%s%N)
  awk -v ns=$((end - start)) 'BEGIN { printf "%.3f\n", ns / 1e9 }'
}

echo "load before: $(uptime)"
for pair in $(seq "$pairs"); do
  seconds_of plain >>"$work/plain.seconds"
  seconds_of switched >>"$work/switched.seconds"
done
echo "load after: $(uptime)"

for kind in plain switched; do
  succeeded=$(sql "$work/$kind.db" "SELECT count(*) FROM runs WHERE status = 'succeeded'")
  if [ "$succeeded" != "$tasks" ]; then
    echo "run_as: $kind recorded $succeeded succeeded runs of $tasks" >&2
    sql "$work/$kind.db" "SELECT status, reason FROM runs WHERE status <> 'succeeded' LIMIT 3" >&2
    exit 1
  fi
done

mean_of() { awk '{ sum += $1 } END { print sum / NR }' "$1"; }
rate() { awk -v n="$tasks" -v s="$1" 'BEGIN { printf "%.0f", n / s }'; }
echo
echo "seconds of each pair (plain, switched, plain / switched):"
paste "$work/plain.seconds" "$work/switched.seconds" | awk '{ printf "  %d: %.3f %.3f %.2f\n", NR, $1, $2, $1 / $2 }' |
  tee "$work/pairs"
echo "$tasks runs of /bin/true, 8 at once; runs per second (mean of $pairs runs each)"
print_header
ratio=$(awk '{ sum += $4 } END { printf "%.2f", sum / NR }' "$work/pairs")
print_row "--user nobody + --env-file vs plain" "$(rate "$(mean_of "$work/switched.seconds")")/s" \
  "$(rate "$(mean_of "$work/plain.seconds")")/s" "$ratio" ">= 0.90" "$(compare "$ratio" ge 0.90)"
