#!/usr/bin/env bash
# Issue 32, item 4: `list`, `--json list` and `export` of two taskd binaries
# (a baseline A and a candidate B) on one database, in alternating rounds
# (A then B, ROUNDS times), beside bench/listing_floor's list. Prints the
# median wall and user seconds, the largest peak RSS, and each command's
# ratio to the same binary's `list` (list's: to the floor). Output goes to
# /dev/null for all.
# Usage: bench/listings_ab.sh BASELINE CANDIDATE DATABASE [ROUNDS] [build-dir]
#   (a DATABASE made by build/bench/make_tasks, as bench/scale.sh makes it)
set -euo pipefail

baseline=$(realpath "$1") candidate=$(realpath "$2") db=$(realpath "$3") rounds=${4:-3}
floor=$(realpath "${5:-build}/bench/listing_floor")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# measure NAME COMMAND...: appends "wall user kb" to $work/NAME
measure() {
  local name=$1
  shift
  /usr/bin/time -f "%e %U %M" -o "$work/last" "$@" >/dev/null
  cat "$work/last" >>"$work/$name"
}
median() { sort -n -k"$2" "$work/$1" | awk -v k="$2" '{ t[NR] = $k } END { print t[int((NR + 1) / 2)] }'; }
peak_mib() { sort -n -k3 "$work/$1" | tail -n 1 | awk '{ printf "%.1f", $3 / 1024 }'; }

commands=("list" "--json list" "export")
for ((round = 1; round <= rounds; round++)); do
  echo "round $round/$rounds ..." >&2
  measure floor "$floor" "$db" list
  for binary in A B; do
    bin=$baseline
    [ "$binary" = B ] && bin=$candidate
    for args in "${commands[@]}"; do
      # shellcheck disable=SC2086
      measure "$binary-${args// /_}" "$bin" --db "$db" $args
    done
  done
done

printf '%-4s %-12s %8s %8s %9s %s\n' bin command wall user "peak MiB" "ratio (wall)"
printf '%-4s %-12s %8s %8s %9s %s\n' - floor "$(median floor 1)" "$(median floor 2)" "$(peak_mib floor)" -
for binary in A B; do
  list=$(median "$binary-list" 1)
  for args in "${commands[@]}"; do
    name="$binary-${args// /_}"
    base=$list
    [ "$args" = list ] && base=$(median floor 1)
    printf '%-4s %-12s %8s %8s %9s %s\n' "$binary" "$args" "$(median "$name" 1)" "$(median "$name" 2)" \
      "$(peak_mib "$name")" "$(awk -v a="$(median "$name" 1)" -v b="$base" 'BEGIN { printf "%.2f", a / b }')"
  done
done
echo "A: $baseline; B: $candidate; $(sqlite3 "$db" 'SELECT count(*) FROM tasks' 2>/dev/null || echo '?') tasks;" \
  "$rounds rounds; load $(cut -d' ' -f1 /proc/loadavg)"
