# Shared by the benchmarks (sourced, not run: `make bench` runs only
# bench/*.sh).

# Sets taskd (the binary under test) and work (a private temporary
# directory, removed on exit) from the build directory $1.
bench_setup() {
  local build=${1:-build}
  taskd=$(realpath "$build/taskd")
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
}

# Writes a task file of COUNT tasks named t1..tCOUNT running /bin/true;
# task i gets the (i mod n)-th of the n intervals, and start_now if asked.
# Usage: write_tasks FILE COUNT START_NOW(true|false) INTERVAL...
write_tasks() {
  local file=$1 count=$2 start_now=$3
  shift 3
  awk -v count="$count" -v start_now="$start_now" -v intervals="$*" 'BEGIN {
    n = split(intervals, every, " ")
    for (i = 1; i <= count; i++)
      printf "[[task]]\nname = \"t%d\"\nevery = \"%s\"\nstart_now = %s\ncommand = [\"/bin/true\"]\n\n",
             i, every[(i - 1) % n + 1], start_now
  }' >"$file"
}

# Unix milliseconds now.
now_ms() { date +%s%3N; }

# The one-minute load average.
load_1m() { cut -d' ' -f1 /proc/loadavg; }

# One query against a database, the result as plain text (waiting up to 5 s
# while a writer holds the file).
sql() { sqlite3 -batch -noheader -cmd ".timeout 5000" "$1" "$2"; }

# The result table: a header, then one row per measure.
print_header() {
  printf '%-34s %12s %12s %8s %10s %s\n' measure taskd baseline ratio goal result
}

# Usage: print_row MEASURE TASKD BASELINE RATIO GOAL PASS(0|1)
print_row() {
  printf '%-34s %12s %12s %8s %10s %s\n' "$1" "$2" "$3" "$4" "$5" "$([ "$6" = 1 ] && echo PASS || echo MISS)"
}

# Whether A <= B (or A >= B with "ge"), for decimal numbers: prints 1 or 0.
compare() { awk -v a="$1" -v op="$2" -v b="$3" 'BEGIN { print (op == "le" ? a <= b : a >= b) ? 1 : 0 }'; }

# A throwaway PostgreSQL cluster of Debian's newest server in $work/pg, on a
# Unix socket only, its files owned by its own user when we are root (initdb
# refuses root); fsync on, synchronous_commit off. Extra `-c name=value`
# settings come as arguments. Sets pg and defines psql_run, uri and fresh;
# stopped (and $work removed) on exit, after the function `on_exit` if the
# caller defines one.
pg_start() {
  pg_bin=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")
  pg=$work/pg
  chmod 711 "$work"  # the server's user reaches its directory through it
  mkdir -m 755 "$pg"
  as_pg=()
  if [ "$(id -u)" = 0 ]; then chown postgres: "$pg"; as_pg=(runuser -u postgres --); fi
  "${as_pg[@]}" "$pg_bin/initdb" -A trust -U postgres -D "$pg/data" >/dev/null
  local settings="-c listen_addresses='' -c unix_socket_directories='$pg' -c synchronous_commit=off"
  settings+=" -c max_connections=50"
  for setting in "$@"; do settings+=" -c $setting"; done
  "${as_pg[@]}" "$pg_bin/pg_ctl" start -w -s -D "$pg/data" -l "$pg/log" -o "$settings"
  trap 'if declare -F on_exit >/dev/null; then on_exit; fi
        "${as_pg[@]}" "$pg_bin/pg_ctl" stop -s -m fast -D "$pg/data"; rm -rf "$work"' EXIT
}
psql_run() { PGOPTIONS=--client-min-messages=warning psql -X -q -At -h "$pg" -U postgres "$@"; }
uri() { echo "postgresql:///$1?host=$pg&user=postgres"; }
fresh() { psql_run -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1"; }

# The start lateness of `taskd run --concurrency 8` over 1 000 tasks every
# 1s ... 10s (100 of each) running /bin/true, added to a new database DB, for
# SECONDS; lateness is started_at - scheduled_at of every run whose slot fell
# in the measured part of the run (the tasks have no jitter, so not_before =
# scheduled_at). started_at is taken when the run is claimed, just before its
# child is spawned. Sets count p50 p99 worst (ms), instants first_p50
# first_p99 burst, not_started and statuses.
# Usage: lateness_tasks DB, then measure_lateness DB SECONDS
lateness_tasks() {
  write_tasks "$1.toml" 1000 false 1s 2s 3s 4s 5s 6s 7s 8s 9s 10s
  "$taskd" --db "$1" apply "$1.toml" >/dev/null
}
measure_lateness() {
  local db=$1 seconds=$2 started stopped
  started=$(now_ms)
  # SIGTERM at the end: taskd stops claiming, waits for its children, records
  # them, exits 0. Its log (info level, two lines a run) goes to a file.
  timeout --signal=TERM "$seconds" "$taskd" --db "$db" run --concurrency 8 2>"$db.log" || [ $? = 124 ]
  stopped=$(now_ms)

  # Slots of the first and the last second are left out: the process starts
  # and stops then.
  local slots="FROM runs WHERE scheduled_at >= $((started + 1000)) AND scheduled_at < $((stopped - 1000))"
  local late="SELECT started_at - scheduled_at $slots AND started_at IS NOT NULL ORDER BY 1"
  count=$(sql "$db" "SELECT count(*) $slots AND started_at IS NOT NULL")
  p50=$(percentile "$db" 50 "$late" "$count") p99=$(percentile "$db" 99 "$late" "$count")
  worst=$(percentile "$db" 100 "$late" "$count")
  # Default phases are hashed to the millisecond, so most slot instants start
  # one run; where several share an instant, the first run shows how late the
  # loop wakes, the rest how fast it works through the burst.
  local first="SELECT min(started_at) - scheduled_at $slots AND started_at IS NOT NULL GROUP BY scheduled_at ORDER BY 1"
  instants=$(sql "$db" "SELECT count(DISTINCT scheduled_at) $slots AND started_at IS NOT NULL")
  first_p50=$(percentile "$db" 50 "$first" "$instants") first_p99=$(percentile "$db" 99 "$first" "$instants")
  burst=$(awk -v c="$count" -v i="$instants" 'BEGIN { printf "%.0f", c / i }')
  not_started=$(sql "$db" "SELECT count(*) $slots AND started_at IS NULL")
  statuses=$(sql "$db" "SELECT group_concat(status || ' ' || n, ', ') FROM (SELECT status, count(*) AS n $slots GROUP BY status)")
}

# Usage: percentile DB P QUERY ROWS: the P-th percentile of QUERY's ordered values.
percentile() { sql "$1" "$3 LIMIT 1 OFFSET $(($2 * ($4 - 1) / 100))"; }

# A database of bench/make_tasks (as $make_tasks names it) in FILE, made
# once and kept; then opened once so that its schema is current.
# Usage: make_db FILE COUNT ACTIVE RUNS
make_db() {
  [ -f "$1" ] && return
  echo "making $1 ..." >&2
  "$make_tasks" "$1.new" "$2" "$3" "$4"
  mv "$1.new" "$1"
  [ ! -f "$1.new-wal" ] || mv "$1.new-wal" "$1-wal"
  "$taskd" --db "$1" list --limit 1 >/dev/null
}
