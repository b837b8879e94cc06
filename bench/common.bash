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

# One query against a database, the result as plain text.
sql() { sqlite3 -batch -noheader "$1" "$2"; }

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
