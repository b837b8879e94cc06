#!/usr/bin/env bash
# Benchmark 1: the cost of one tick with nothing due. `taskd run-once` as a
# whole process on 1 000 000 tasks, against the floor (a C program that opens
# the same file and runs one indexed query: bench/tick_floor.c) and against
# `taskd run-once` on 1 000 tasks. All three are timed by hyperfine in the
# same run, five rounds of it: a 2 ms process is at the mercy of whatever
# else the machine does for the seconds one command's runs take, so each
# round gives its ratios and the verdict is on their median. The ratios use
# the median wall time (the issue's measure), the minimum wall time and the
# mean CPU time (user + system), which a loaded machine disturbs less.
# Usage: bench/tick_cost.sh [build-dir]   (BENCH_QUICK=1: 100 000 tasks, fewer runs, 1 round)
set -euo pipefail

build=${1:-build}
taskd=$build/taskd
big=1000000
small=1000
runs=40
rounds=5
if [ "${BENCH_QUICK:-0}" = 1 ]; then big=100000; runs=10; rounds=1; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make_db() {  # make_db FILE COUNT: prints how long the generator took
  local start=$SECONDS
  "$build/bench/make_tasks" "$1" "$2"
  echo "$((SECONDS - start))"
}
echo "generating $big tasks ($(make_db "$work/big.db" $big) s) and $small tasks ($(make_db "$work/small.db" $small) s)"

# None may be due, or the runs would measure dispatch instead of the tick.
for db in "$work/big.db" "$work/small.db"; do
  due=$("$build/bench/tick_floor" "$db")
  [ "$due" = 0 ] || { echo "tick_cost: $due tasks are due in $db" >&2; exit 1; }
done

# The generated files' pages go to disk now, not while the runs are timed.
sync "$work/big.db" "$work/small.db"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  hyperfine --shell=none --warmup 3 --runs "$runs" --style basic --export-json "$work/times-$round.json" \
    -n "floor ($big tasks)" "$build/bench/tick_floor $work/big.db" \
    -n "taskd run-once ($small tasks)" "$taskd --db $work/small.db run-once" \
    -n "taskd run-once ($big tasks)" "$taskd --db $work/big.db run-once" >"$work/hyperfine.log"
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"

# Nothing ran: the tick found no due task.
runs_written=$(/usr/bin/python3 -c "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM runs').fetchone()[0])" "$work/big.db")
[ "$runs_written" = 0 ] || { echo "tick_cost: run-once wrote $runs_written runs" >&2; exit 1; }

/usr/bin/python3 - "$big" "$small" "$work"/times-*.json <<'PY'
import json, statistics, sys
big, small = sys.argv[1], sys.argv[2]
rounds = [json.load(open(path))["results"] for path in sys.argv[3:]]
print(f"{'round':<6} {'command':<34} {'median ms':>10} {'min ms':>8} {'σ ms':>7} {'CPU ms':>8}")
for number, results in enumerate(rounds, 1):
    for r in results:
        r["cpu"] = r["user"] + r["system"]
        print(f"{number:<6} {r['command']:<34} {r['median']*1e3:>10.2f} {r['min']*1e3:>8.2f} {r['stddev']*1e3:>7.2f} {r['cpu']*1e3:>8.2f}")
measures = ((f"{big} tasks / floor, wall median", lambda floor, few, many: many["median"] / floor["median"], 1.5),
            (f"{big} tasks / floor, wall min", lambda floor, few, many: many["min"] / floor["min"], 1.5),
            (f"{big} tasks / floor, CPU time", lambda floor, few, many: many["cpu"] / floor["cpu"], 1.5),
            (f"{big} tasks / {small} tasks, wall median", lambda floor, few, many: many["median"] / few["median"], 1.2),
            (f"{big} tasks / {small} tasks, CPU time", lambda floor, few, many: many["cpu"] / few["cpu"], 1.2))
print(f"\n{'ratio':<40} {'each round':>30} {'median':>7} {'goal':>7} {'result':>7}")
for name, ratio, goal in measures:
    values = [ratio(*results) for results in rounds]
    value = statistics.median(values)
    each = " ".join(f"{v:.2f}" for v in values)
    print(f"{name:<40} {each:>30} {value:>7.2f} {'<= ' + str(goal):>7} {'PASS' if value <= goal else 'MISS':>7}")
PY
