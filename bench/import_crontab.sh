#!/usr/bin/env bash
# Issue 27, item 10: taskd import-crontab of generated crontabs of 10 000 and
# 50 000 lines into a new SQLite database, in two shapes:
#   repeated  the same job line nine times in ten, an environment line (one of
#             five names, set again and again) the tenth: one name numbered
#             tens of thousands of times;
#   env       a variable of its own above each job, so that job k carries k
#             variables (--skip-bad: the lines past 16 MiB of copied
#             environment are skipped).
# Each import runs once under GNU time, limited to 300 s and 8 GiB of address
# space (a quadratic build runs into them); the table gives the file's size,
# wall and CPU seconds, peak RSS and the exit status, and the verdict against
# the goals: 50 000 lines within 5 s of CPU, and a peak RSS within 100 times
# the file plus 96 MiB (the fixed part: the program, and the 16 MiB of
# environment the env shape copies, held in about four times that).
# Usage: bench/import_crontab.sh [build-dir]
#   BENCH_QUICK=1: 10 000 lines only
set -euo pipefail

build=${1:-build}
taskd=$(realpath "$build/taskd")
sizes="10000 50000"
if [ "${BENCH_QUICK:-0}" = 1 ]; then sizes=10000; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# write_crontab SHAPE LINES FILE
write_crontab() {
  awk -v shape="$1" -v lines="$2" 'BEGIN {
    split("PATH MAILFROM LANG DIR HINT", names, " ")
    for (i = 0; i < lines; i++) {
      if (shape == "env") {
        if (i % 2 == 0) printf "V%d=value%d\n", i, i
        else printf "%d * * * * job%d --flag\n", i % 60, i
      } else if (i % 10 == 0) {
        printf "%s=/value/%d\n", names[int(i / 10) % 5 + 1], i
      } else {
        print "*/5 * * * * /usr/local/bin/backup --all >/dev/null 2>&1"
      }
    }
  }' >"$3"
}

printf '%-9s %7s %9s %8s %8s %10s %5s %s\n' shape lines file_kb wall_s cpu_s peak_kb exit result
for shape in repeated env; do
  for lines in $sizes; do
    crontab="$work/$shape-$lines.cron"
    write_crontab "$shape" "$lines" "$crontab"
    rm -f "$work/taskd.db"
    status=0
    (ulimit -v $((8 * 1024 * 1024)) &&
      /usr/bin/time -f "%e %U %S %M" -o "$work/time" timeout 300 \
        "$taskd" --db "$work/taskd.db" import-crontab --skip-bad "$crontab" >/dev/null 2>"$work/err") || status=$?
    read -r wall user sys peak_kb <<<"$(tail -n 1 "$work/time" 2>/dev/null || echo "- 0 0 0")"
    file_kb=$(($(stat -c %s "$crontab") / 1024))
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    pass=$(awk -v status="$status" -v lines="$lines" -v cpu="$cpu" -v peak="$peak_kb" -v file="$file_kb" \
      'BEGIN { print (status == 0 && (lines < 50000 || cpu <= 5) && peak <= 100 * file + 98304) ? "PASS" : "MISS" }')
    printf '%-9s %7s %9s %8s %8s %10s %5s %s\n' "$shape" "$lines" "$file_kb" "$wall" "$cpu" "$peak_kb" "$status" "$pass"
  done
done
