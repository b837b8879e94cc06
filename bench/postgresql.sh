#!/usr/bin/env bash
# Issue #15's benchmarks: taskd on a PostgreSQL server, on this machine, one
# host, against taskd on a SQLite file.
#  1. Dispatch: 10 000 tasks due at once run /bin/true under
#     `taskd run-once --concurrency 8`, on each store (hyperfine, a fresh copy
#     of the prepared store before each run, the two stores in turns). The
#     round trips per run are the statements taskd sent the server (BEGIN and
#     COMMIT included), as pg_stat_statements counted them in the last run.
#  2. Tick cost with 1 000 000 tasks and none due: `taskd run-once` on the
#     server against 1 000 tasks on the server and 1 000 000 in a file, and
#     the plan of the tick's due query as auto_explain logged it.
#  3. Peak RSS (VmHWM) of `taskd run` against the server with 1 000 000 tasks,
#     100 of them every 10 s, after 60 s.
# The server: Debian's PostgreSQL 15, a throwaway cluster on a Unix socket,
# fsync on, synchronous_commit off, which is SQLite's WAL with
# synchronous=NORMAL: a crash of taskd or the server loses no commit, a
# power cut may lose the last ones. The stores are filled by make_tasks (a
# file) and `taskd copy-db` (the file to the server).
# Usage: bench/postgresql.sh [build-dir]
#   BENCH_QUICK=1: 1 000 dispatched runs, 100 000 tasks, 15 s of `run`
set -euo pipefail
here=$(dirname "$(realpath "$0")")
source "$here/common.bash"
bench_setup "${1:-build}"
make_tasks=$(realpath "${1:-build}/bench/make_tasks")
dispatched=10000 pairs=3 big=1000000 small=1000 seconds=60
if [ "${BENCH_QUICK:-0}" = 1 ]; then dispatched=1000 pairs=1 big=100000 seconds=15; fi

pg_start "shared_preload_libraries='pg_stat_statements,auto_explain'" pg_stat_statements.track_utility=on
psql_run -c "CREATE EXTENSION pg_stat_statements"

echo "== 1. dispatch: $dispatched runs of /bin/true, 8 at once"
write_tasks "$work/tasks.toml" "$dispatched" true 1w
"$taskd" --db "$work/dispatch.db" apply "$work/tasks.toml" >/dev/null
psql_run -c "CREATE DATABASE dispatch_template"
"$taskd" copy-db --from "$work/dispatch.db" --to "$(uri dispatch_template)" >/dev/null
fresh_server="psql -X -q -h $pg -U postgres -c 'DROP DATABASE IF EXISTS dispatch' -c 'CREATE DATABASE dispatch TEMPLATE dispatch_template'"
hyperfine --style basic --runs "$pairs" --export-json "$work/dispatch.json" \
  -n sqlite --prepare "cp $work/dispatch.db $work/run.db; rm -f $work/run.db-wal $work/run.db-shm" \
  "$taskd --db $work/run.db run-once --concurrency 8" \
  -n postgresql --prepare "$fresh_server; psql -X -q -h $pg -U postgres -c 'SELECT pg_stat_statements_reset()'" \
  "$taskd --db '$(uri dispatch)' run-once --concurrency 8" >&2
succeeded=$(psql_run -d dispatch -c "SELECT count(*) FROM taskd.runs WHERE status = 'succeeded'")
[ "$succeeded" = "$dispatched" ] || { echo "postgresql: $succeeded of $dispatched runs succeeded" >&2; exit 1; }
statements=$(psql_run -c "SELECT sum(calls) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
                          WHERE d.datname = 'dispatch'")
jq -r --arg n "$dispatched" '.results[] | "\(.command)\t\($n | tonumber) / \(.mean)"' "$work/dispatch.json" |
  awk -F'\t' '{ split($2, p, " / "); printf "  %-10s %8.0f runs/s  (mean %.2f s)\n", $1, p[1] / p[2], p[2] }'
awk -v s="$statements" -v n="$dispatched" 'BEGIN { printf "  round trips per run on the server: %.1f (%d statements)\n", s / n, s }'
echo "  the statements, most called first (calls, server ms in all):"
psql_run -c "SELECT '    ' || lpad(calls::text, 7) || lpad(round(total_exec_time)::text, 7) || '  ' ||
                    left(regexp_replace(query, '\s+', ' ', 'g'), 100)
             FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = 'dispatch'
             ORDER BY calls DESC LIMIT 14"

echo "== 2. tick with $big tasks, none due"
"$make_tasks" "$work/big.db" "$big"
"$make_tasks" "$work/small.db" "$small"
for size in big small; do
  psql_run -c "CREATE DATABASE $size"
  "$taskd" copy-db --from "$work/$size.db" --to "$(uri "$size")" >/dev/null
  psql_run -d "$size" -c "VACUUM ANALYZE"
done
hyperfine --shell=none --warmup 3 --runs 30 --style basic --export-json "$work/tick.json" \
  -n "server, $big tasks" "$taskd --db $(uri big) run-once" \
  -n "server, $small tasks" "$taskd --db $(uri small) run-once" \
  -n "file, $big tasks" "$taskd --db $work/big.db run-once" >&2
jq -r '.results[] | "  \(.command)\t\(.median * 1000)\t\((.user + .system) * 1000)"' "$work/tick.json" |
  awk -F'\t' '{ printf "%-36s median %6.2f ms   CPU %6.2f ms\n", $1, $2, $3 }'
runs=$(psql_run -d big -c "SELECT count(*) FROM taskd.runs")
[ "$runs" = 0 ] || { echo "postgresql: the tick wrote $runs runs" >&2; exit 1; }
# The plan of the query that finds due tasks, from one more tick with every plan logged.
psql_run -d big -c "ALTER DATABASE big SET auto_explain.log_min_duration = 0"
start_line=$(wc -l <"$pg/log")
"$taskd" --db "$(uri big)" run-once
echo "  the plan of the due query (auto_explain):"
tail -n +"$start_line" "$pg/log" | awk '/^[0-9-]+ [0-9:.]+ UTC/ { keep = 0 } /Query Text:.*next_run_at IS NOT NULL/ { keep = 1 }
  keep { print "    " $0 }' | head -24
psql_run -d big -c "ALTER DATABASE big RESET auto_explain.log_min_duration"

echo "== 3. peak RSS of taskd run, $big tasks, 100 every 10 s, ${seconds} s"
"$make_tasks" "$work/active.db" 0 100
"$taskd" copy-db --from "$work/active.db" --to "$(uri big)" --merge >/dev/null
"$taskd" --db "$(uri big)" run >"$work/run.out" 2>&1 &
pid=$!
sleep "$seconds"
kill -0 "$pid" || { echo "postgresql: taskd run ended early:" >&2; cat "$work/run.out" >&2; exit 1; }
rss=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
kill -TERM "$pid"
wait "$pid"
done_runs=$(psql_run -d big -c "SELECT count(*) FROM taskd.runs WHERE status = 'succeeded'")
awk -v kib="$rss" -v runs="$done_runs" 'BEGIN { printf "  peak RSS %.1f MiB (goal <= 20 MiB: %s); %d runs succeeded meanwhile\n",
  kib / 1024, kib <= 20 * 1024 ? "PASS" : "MISS", runs }'
