#!/usr/bin/env bash
# Issue #32's comparison with the job systems a user would otherwise run on
# the same PostgreSQL server: taskd, graphile-worker and pg-boss (from npm,
# into a scratch directory), on one throwaway cluster (as bench/hosts.sh).
# The same work for each: COUNT jobs queued before any worker starts (taskd:
# tasks due at once), each running /bin/true as a child, 8 at once per
# worker, 1, 2 and 3 workers started together (taskd: `run-once
# --concurrency 8` per host; graphile-worker: `runOnce` with concurrency 8;
# pg-boss: eight `work` loops of eight jobs a fetch, eight children at once),
# the systems in turns (ABC ABC …). Each job is checked to have run once.
# Reported per system and worker count: runs/s (the median round) and its
# ratio to the bare posix_spawn loop measured in the same round, the
# statements the server received per job (pg_stat_statements, BEGIN and
# COMMIT included, top level: a function's inner statements are not round
# trips) and the server's CPU per job (the postmaster and its children,
# ended ones included, from /proc).
# Then the failover each offers: taskd's is measured by bench/hosts.sh; the
# peers' are read from the installed packages' own code.
# Usage: bench/peers-postgresql.sh [build-dir]
#   BENCH_QUICK=1: 1 000 jobs, 1 round; ROUNDS=n, JOBS=n override.
#   PEERS_NPM=DIR: an npm directory to install into and keep (default: scratch).
set -euo pipefail
here=$(dirname "$(realpath "$0")")
source "$here/common.bash"
bench_setup "${1:-build}"
spawn_loop=$(realpath "${1:-build}/bench/spawn_loop")
jobs=10000 rounds=3
if [ "${BENCH_QUICK:-0}" = 1 ]; then jobs=1000 rounds=1; fi
jobs=${JOBS:-$jobs} rounds=${ROUNDS:-$rounds}
graphile_version=0.17.3 pgboss_version=10.4.2  # the newest that run on Debian 12's Node.js 20

npm_dir=${PEERS_NPM:-$work/npm}
mkdir -p "$npm_dir"
if [ ! -d "$npm_dir/node_modules/graphile-worker" ] || [ ! -d "$npm_dir/node_modules/pg-boss" ]; then
  (cd "$npm_dir" && npm install --silent --no-audit --no-fund --no-save \
     "graphile-worker@$graphile_version" "pg-boss@$pgboss_version" >/dev/null)
fi
export NODE_PATH=$npm_dir/node_modules

pg_start shared_preload_libraries=pg_stat_statements pg_stat_statements.track_utility=on \
  pg_stat_statements.max=10000
psql_run -c "CREATE EXTENSION pg_stat_statements"
clock_ms=$((1000 / $(getconf CLK_TCK)))

# CPU the server has used, in ms: the postmaster, its children now, and
# those it has reaped.
server_cpu_ms() {
  local postmaster
  postmaster=$(head -1 "$pg/data/postmaster.pid")
  { sed 's/^.*) //' "/proc/$postmaster/stat" | awk '{ print $12 + $13 + $14 + $15 }'
    for child in $(pgrep -P "$postmaster"); do
      sed 's/^.*) //' "/proc/$child/stat" 2>/dev/null | awk '{ print $12 + $13 }' || true
    done
  } | awk -v ms="$clock_ms" '{ s += $1 } END { print s * ms }'
}

# The statements the database $1 received since the last reset.
statements_in() {
  psql_run -c "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
               WHERE d.datname = '$1'"
}

write_tasks "$work/tasks.toml" "$jobs" true 1w

# Queues the jobs of system $1 into the fresh database `peers`.
queue() {
  fresh peers
  case $1 in
    taskd) "$taskd" --db "$(uri peers)" apply "$work/tasks.toml" >/dev/null ;;
    graphile-worker | pg-boss) node "$here/peers/$1.cjs" queue "$(uri peers)" "$jobs" ;;
  esac
}

# Starts $2 workers of system $1 and waits for them.
work() {
  local system=$1 count=$2 pids=() i
  for i in $(seq 1 "$count"); do
    case $system in
      taskd) "$taskd" --db "$(uri peers)" run-once --host-id "h$i" --concurrency 8 >/dev/null 2>&1 & ;;
      *) node "$here/peers/$system.cjs" work "$(uri peers)" "$work/ids.$i" & ;;
    esac
    pids+=($!)
  done
  wait "${pids[@]}"
}

# Whether each job ran once: prints nothing, or what is wrong.
check_once() {
  local system=$1 count=$2
  if [ "$system" = taskd ]; then
    psql_run -d peers -c "SELECT CASE WHEN count(*) = $jobs AND count(DISTINCT task_id) = $jobs THEN ''
                                 ELSE count(*) || ' runs of ' || count(DISTINCT task_id) || ' tasks' END
                          FROM taskd.runs WHERE status = 'succeeded'"
  else
    local ran unique
    ran=$(cat "$work"/ids.* | wc -l)
    unique=$(sort -u "$work"/ids.* | wc -l)
    [ "$ran" = "$jobs" ] && [ "$unique" = "$jobs" ] || echo "$ran runs of $unique jobs"
    rm -f "$work"/ids.*
  fi
}

results=$work/results  # system workers runs/s ratio statements/job cpu-ms/job
echo "== dispatch: $jobs jobs of /bin/true, 8 at once per worker, $rounds round(s)"
for round in $(seq 1 "$rounds"); do
  for count in 1 2 3; do
    start=$(now_ms)
    "$spawn_loop" "$jobs" 8 /bin/true
    bare_ms=$(($(now_ms) - start))
    for system in taskd graphile-worker pg-boss; do
      queue "$system"
      psql_run -c "SELECT pg_stat_statements_reset()" >/dev/null
      cpu_before=$(server_cpu_ms)
      start=$(now_ms)
      work "$system" "$count"
      ms=$(($(now_ms) - start))
      cpu=$(($(server_cpu_ms) - cpu_before))
      wrong=$(check_once "$system" "$count")
      [ -z "$wrong" ] || { echo "$system, $count worker(s): $wrong, not $jobs once each" >&2; exit 1; }
      statements=$(statements_in peers)
      awk -v s="$system" -v c="$count" -v n="$jobs" -v ms="$ms" -v bare="$bare_ms" -v st="$statements" -v cpu="$cpu" \
        'BEGIN { printf "%s %d %.0f %.2f %.1f %.2f\n", s, c, n * 1000 / ms, bare / ms, st / n, cpu / n }' >>"$results"
      printf '  round %d, %d worker(s), %-16s %s\n' "$round" "$count" "$system:" "$(tail -1 "$results" | cut -d' ' -f3-)"
    done
  done
done

echo "== medians over the rounds (by runs/s)"
medians=$work/medians
for system in taskd graphile-worker pg-boss; do
  for count in 1 2 3; do
    awk -v s="$system" -v c="$count" '$1 == s && $2 == c' "$results" | sort -k3 -n |
      awk '{ row[NR] = $0 } END { print row[int((NR + 1) / 2)] }' >>"$medians"
  done
done
printf '  %-16s %7s %8s %8s %13s %15s\n' system workers runs/s "of loop" statements/job "server ms/job"
awk '{ printf "  %-16s %7d %8s %8s %13s %15s\n", $1, $2, $3, $4, $5, $6 }' "$medians"

# The median's field FIELD (3 runs/s, 4 of the loop, 5 statements, 6 server ms) of SYSTEM with COUNT workers.
median_of() { awk -v s="$1" -v c="$2" -v f="$3" '$1 == s && $2 == c { print $f }' "$medians"; }
print_header
for count in 1 2 3; do
  statements=$(median_of taskd "$count" 5) cpu=$(median_of taskd "$count" 6) rate=$(median_of taskd "$count" 3)
  print_row "$count worker(s): statements/run" "$statements" "-" "-" "<= 4" "$(compare "$statements" le 4)"
  print_row "$count worker(s): server ms/run" "$cpu" "-" "-" "<= 0.8" "$(compare "$cpu" le 0.8)"
  for peer in graphile-worker pg-boss; do
    peer_rate=$(median_of "$peer" "$count" 3) peer_cpu=$(median_of "$peer" "$count" 6)
    print_row "$count worker(s): runs/s vs $peer" "$rate" "$peer_rate" "$(bc -l <<<"scale=2; $rate / $peer_rate")" \
      ">= 1" "$(compare "$rate" ge "$peer_rate")"
    print_row "$count worker(s): server ms vs $peer" "$cpu" "$peer_cpu" "$(bc -l <<<"scale=2; $cpu / $peer_cpu")" \
      "<= 1" "$(compare "$cpu" le "$peer_cpu")"
  done
done
one_host=$(median_of taskd 1 4)
print_row "1 worker: runs/s vs bare loop" "$(median_of taskd 1 3)" "-" "$one_host" ">= 0.5" "$(compare "$one_host" ge 0.5)"

echo "== failover after a worker dies (kill -9), as each package's code has it"
pgboss_src=$npm_dir/node_modules/pg-boss/src
graphile_sql=$npm_dir/node_modules/graphile-worker/dist/sql/resetLockedAt.js
echo "  taskd: the lease plus the kill grace (--lease, default 30 s; 2 s in bench/hosts.sh: 3.5 s measured there), whatever the job's length"
echo "  graphile-worker $graphile_version: a locked job is freed after" \
  "$(grep -o "interval '[^']*'" "$graphile_sql" | head -1) (fixed in its SQL, not configurable)"
expire_default=$(grep -o "expire_in interval not null default interval '[^']*'" "$pgboss_src/plans.js" | grep -o "'.*'")
supervise_default=$(grep -A4 "maintenanceIntervalSeconds = ('maintenanceIntervalMinutes'" "$pgboss_src/attorney.js" |
                    grep -o '^ *: [0-9]*$' | tr -dc '0-9')
echo "  pg-boss $pgboss_version: a job is expired after its expireIn (default $expire_default; at least 1 s, but" \
  "above the job's own length, else a live job runs twice), found by the supervisor every ${supervise_default} s by default"
echo "load average: $(load_1m)"
