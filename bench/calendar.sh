#!/usr/bin/env bash
# Issue #33's goals for a calendar of 10 000 days (every other day from
# 2026-12-01 to 2081), each side without and with --skip-calendar of it:
#  (a) the tick: `taskd run-once` over TASKS tasks that all start now (each
#      is claimed, its row with the days read, and read again when its run
#      ends), on a fresh copy of the database each run: at most 1.10x;
#  (b) `taskd preview --count 100000`, of an hourly and a five-minute cron
#      task in Europe/Berlin: at most 1.5x.
# hyperfine times both sides in the same invocation, ROUNDS of them, the
# order swapped each round (ABAB); the verdict is on the median of the
# rounds' ratios of mean CPU time (user + system), which a machine shared
# with other work disturbs less than the wall time (also shown).
# Usage: bench/calendar.sh [build-dir]   (BENCH_QUICK=1: fewer runs and rounds)
set -euo pipefail

build=${1:-build}
taskd=$(realpath "$build/taskd")
tasks=100
runs=20
rounds=4
if [ "${BENCH_QUICK:-0}" = 1 ]; then runs=5; rounds=2; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 -c "import datetime; d = datetime.date(2026, 12, 1)
for i in range(10000): print(d + datetime.timedelta(2 * i), 'day', i)" >"$work/days.txt"

# tasks.toml: TASKS cron tasks that start now, with the calendar when $1 is "big".
write_tasks() {
  awk -v count="$tasks" -v calendar="$1" 'BEGIN {
    for (i = 1; i <= count; i++) {
      printf "[[task]]\nname = \"t%d\"\ncron = \"*/5 * * * *\"\ntz = \"Europe/Berlin\"\n", i
      if (calendar != "") printf "skip_calendar = [\"%s\"]\n", calendar
      printf "start_now = true\ncommand = [\"/bin/true\"]\n\n"
    }
  }'
}
for side in plain calendar; do
  db=$work/tick-$side.db
  "$taskd" --db "$db" calendar add big --dates "$work/days.txt" >/dev/null
  write_tasks "$([ $side = calendar ] && echo big)" >"$work/$side.toml"
  "$taskd" --db "$db" apply "$work/$side.toml" >/dev/null
done

db=$work/preview.db
"$taskd" --db "$db" calendar add big --dates "$work/days.txt" >/dev/null
"$taskd" --db "$db" add plain5 --cron '*/5 * * * *' --tz Europe/Berlin -- true >/dev/null
"$taskd" --db "$db" add cal5 --cron '*/5 * * * *' --tz Europe/Berlin --skip-calendar big -- true >/dev/null
"$taskd" --db "$db" add plain --cron '0 * * * *' --tz Europe/Berlin -- true >/dev/null
"$taskd" --db "$db" add cal --cron '0 * * * *' --tz Europe/Berlin --skip-calendar big -- true >/dev/null

# measure NAME ROUND CMD_A PREPARE_A CMD_B PREPARE_B: one hyperfine run of both, in the round's order.
measure() {
  local name=$1 round=$2 a=("$3" "$4") b=("$5" "$6")
  local first=("${a[@]}") second=("${b[@]}") names=(without with)
  if [ $((round % 2)) = 0 ]; then first=("${b[@]}") second=("${a[@]}") names=(with without); fi
  hyperfine --shell=none --warmup 2 --runs "$runs" --style none --export-json "$work/$name-$round.json" \
    --prepare "${first[1]}" -n "${names[0]}" "${first[0]}" \
    --prepare "${second[1]}" -n "${names[1]}" "${second[0]}" >/dev/null
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  measure tick "$round" \
    "$taskd --db $work/run.db run-once" "cp $work/tick-plain.db $work/run.db" \
    "$taskd --db $work/run.db run-once" "cp $work/tick-calendar.db $work/run.db"
  for every in 5 60; do
    plain=$([ $every = 5 ] && echo plain5 || echo plain)
    cal=$([ $every = 5 ] && echo cal5 || echo cal)
    measure "preview-$every" "$round" \
      "$taskd --db $db preview $plain --count 100000" "true" \
      "$taskd --db $db preview $cal --count 100000" "true"
  done
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"

# Every task ran once in the last tick measured.
ran=$(sqlite3 -batch -noheader "$work/run.db" 'SELECT count(*) FROM runs')
[ "$ran" = "$tasks" ] || { echo "calendar.sh: run-once ran $ran of $tasks tasks" >&2; exit 1; }

/usr/bin/python3 - "$work" "$rounds" "$tasks" <<'PY'
import json, statistics, sys
work, rounds, tasks = sys.argv[1], int(sys.argv[2]), sys.argv[3]
measures = ((f"tick: run-once, {tasks} tasks due", "tick", 1.10),
            ("preview --count 100000, */5", "preview-5", 1.5),
            ("preview --count 100000, hourly", "preview-60", 1.5))
print(f"{'measure':<34} {'side':<8} {'CPU ms by round':>32} {'wall median ms by round':>32}")
verdicts = []
for title, name, goal in measures:
    results = [{r["command"]: r for r in json.load(open(f"{work}/{name}-{n}.json"))["results"]}
               for n in range(1, rounds + 1)]
    for side in ("without", "with"):
        cpu = " ".join(f"{(r[side]['user'] + r[side]['system']) * 1e3:.1f}" for r in results)
        wall = " ".join(f"{r[side]['median'] * 1e3:.1f}" for r in results)
        print(f"{title:<34} {side:<8} {cpu:>32} {wall:>32}")
    cpu_ratio = statistics.median((r["with"]["user"] + r["with"]["system"]) /
                                  (r["without"]["user"] + r["without"]["system"]) for r in results)
    wall_ratio = statistics.median(r["with"]["median"] / r["without"]["median"] for r in results)
    verdicts.append((title, cpu_ratio, wall_ratio, goal))
print(f"\n{'with / without the calendar':<34} {'CPU':>6} {'wall':>6} {'goal':>7} {'result':>7}")
for title, cpu_ratio, wall_ratio, goal in verdicts:
    print(f"{title:<34} {cpu_ratio:>6.2f} {wall_ratio:>6.2f} {'<= ' + str(goal):>7} "
          f"{'PASS' if cpu_ratio <= goal else 'MISS':>7}")
PY
