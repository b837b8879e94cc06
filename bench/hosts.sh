#!/usr/bin/env bash
# Issue #16's benchmarks: several hosts (taskd processes with distinct host
# ids, on this machine) on one PostgreSQL server.
#  1. Dispatch: 10 000 tasks due at once run /bin/true under 1, 2 and 3
#     `taskd run-once --concurrency 8` started together, against the bare
#     posix_spawn loop (spawn_loop, 8 in flight): runs/s in all and per host.
#  2. Failover: two `taskd run --lease 2s` hosts and a task whose child sleeps;
#     kill -9 of the host running it, then the time until its retry starts on
#     the other host (the child writes its start). Goal: at most the lease + 2 s
#     (it takes the lease, the kill grace, 1 s, and the recovery margin, 0.5 s).
#  3. Lateness: 1 000 tasks every 1-10 s on 3 `taskd run` hosts for 60 s; the
#     start of each scheduled run after its slot, p50/p99/max, of the slots from
#     2 s after the start to 1 s before the stop (the hosts connect and stop
#     then). Goal: p99 <= 50 ms.
# The server: Debian's PostgreSQL, a throwaway cluster on a Unix socket, fsync
# on and synchronous_commit off, as in bench/postgresql.sh.
# Usage: bench/hosts.sh [build-dir]
#   BENCH_QUICK=1: 1 000 dispatched runs, 3 failovers, 20 s of lateness
set -euo pipefail
here=$(dirname "$(realpath "$0")")
source "$here/common.bash"
bench_setup "${1:-build}"
spawn_loop=$(realpath "${1:-build}/bench/spawn_loop")
dispatched=10000 trials=10 seconds=60
if [ "${BENCH_QUICK:-0}" = 1 ]; then dispatched=1000 trials=3 seconds=20; fi

pg_start
hosts=()
on_exit() { for pid in "${hosts[@]}"; do kill -9 "$pid" 2>/dev/null || true; done; }

echo "== 1. dispatch: $dispatched runs of /bin/true, 8 at once per host"
write_tasks "$work/tasks.toml" "$dispatched" true 1w
start=$(now_ms)
"$spawn_loop" "$dispatched" 8 /bin/true
bare_ms=$(( $(now_ms) - start ))
printf '  %-22s %8.0f runs/s\n' "bare spawn loop" "$(bc -l <<<"$dispatched * 1000 / $bare_ms")"
for count in 1 2 3; do
  fresh dispatch
  "$taskd" --db "$(uri dispatch)" apply "$work/tasks.toml" >/dev/null
  start=$(now_ms)
  pids=()
  for i in $(seq 1 "$count"); do
    "$taskd" --db "$(uri dispatch)" run-once --host-id "h$i" --concurrency 8 >/dev/null 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  ms=$(( $(now_ms) - start ))
  done_runs=$(psql_run -d dispatch -c "SELECT count(*) FROM taskd.runs WHERE status = 'succeeded'")
  [ "$done_runs" = "$dispatched" ] || { echo "$count hosts: $done_runs of $dispatched runs succeeded" >&2; exit 1; }
  per_host=$(psql_run -d dispatch -c "SELECT string_agg(worker_host || ' ' || n, ', ' ORDER BY worker_host)
                                      FROM (SELECT worker_host, count(*) n FROM taskd.runs WHERE status = 'succeeded' GROUP BY 1) c")
  printf '  %-22s %8.0f runs/s  (%.2f of the bare loop; runs per host: %s)\n' "$count host(s)" \
    "$(bc -l <<<"$dispatched * 1000 / $ms")" "$(bc -l <<<"$bare_ms / $ms")" "$per_host"
  [ "$count" = 1 ] && one_host_ms=$ms
done

echo "== 2. failover: kill -9 of the host running a task, until its retry starts ($trials trials, --lease 2s)"
starts=$work/starts
for trial in $(seq 1 "$trials"); do
  fresh failover
  rm -f "$starts"
  # Its next slot half a day away: one drawn from its name within the retry's
  # 1 h timebox would take the retry's place, and the "failover" would wait for it.
  "$taskd" --db "$(uri failover)" add long --every 1d --phase "$(( ($(date +%s) + 43200) % 86400 ))s" --start-now \
    --timeout 1h --kill-grace 1s --retry 0s --shell -- \
    "echo \"\$TASKD_HOST \$(date +%s%3N)\" >> $starts; exec sleep 600" >/dev/null
  declare -A pid_of=()
  hosts=()
  for name in a b; do
    "$taskd" --db "$(uri failover)" run --host-id "$name" --lease 2s --log-file /dev/null &
    pid_of[$name]=$!
    hosts+=($!)
  done
  until [ -s "$starts" ]; do sleep 0.01; done
  running_on=$(head -1 "$starts" | cut -d' ' -f1)
  killed_at=$(now_ms)
  kill -9 "${pid_of[$running_on]}"
  until [ "$(wc -l <"$starts")" -ge 2 ]; do sleep 0.01; done
  retried_at=$(sed -n 2p "$starts" | cut -d' ' -f2)
  echo "$(( retried_at - killed_at ))" >>"$work/failover.ms"
  for pid in "${hosts[@]}"; do kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  hosts=()
  pkill -f "sleep 600" || true
done
sort -n "$work/failover.ms" | awk '{ v[NR] = $1; s += $1 } END {
  printf "  failover ms: min %d, mean %.0f, max %d (goal <= %d)\n", v[1], s / NR, v[NR], 4000 }'
failover_max=$(sort -n "$work/failover.ms" | tail -n 1)

echo "== 3. lateness: 1 000 tasks every 1-10 s, 3 hosts, ${seconds} s"
fresh lateness
write_tasks "$work/every.toml" 1000 false 1s 2s 3s 4s 5s 6s 7s 8s 9s 10s
"$taskd" --db "$(uri lateness)" apply "$work/every.toml" >/dev/null
started=$(now_ms)
for i in 1 2 3; do
  "$taskd" --db "$(uri lateness)" run --host-id "h$i" --concurrency 16 --log-file /dev/null &
  hosts+=($!)
done
sleep "$seconds"
for pid in "${hosts[@]}"; do kill -TERM "$pid"; wait "$pid" || true; done
stopped=$(now_ms)
hosts=()
late="SELECT started_at - scheduled_at AS l FROM taskd.runs WHERE trigger = 'schedule' AND started_at IS NOT NULL
        AND scheduled_at >= $((started + 2000)) AND scheduled_at < $((stopped - 1000))"
psql_run -d lateness -c "SELECT '  runs ' || count(*) || ', late ms p50 ' || percentile_disc(0.5) WITHIN GROUP (ORDER BY l)
                                || ', p99 ' || percentile_disc(0.99) WITHIN GROUP (ORDER BY l) || ', max ' || max(l)
                                || ' (goal p99 <= 50); per host: ' || (SELECT string_agg(worker_host || ' ' || n, ', '
                                   ORDER BY worker_host) FROM (SELECT worker_host, count(*) n FROM taskd.runs
                                   WHERE started_at IS NOT NULL GROUP BY 1) c)
                         FROM ($late) s"
p99=$(psql_run -d lateness -c "SELECT percentile_disc(0.99) WITHIN GROUP (ORDER BY l) FROM ($late) s")

echo "load $(load_1m)"
print_header
ratio=$(printf '%.2f' "$(bc -l <<<"$bare_ms / $one_host_ms")")
print_row "dispatch, 1 host vs bare loop" "$(( dispatched * 1000 / one_host_ms ))/s" "$(( dispatched * 1000 / bare_ms ))/s" \
  "$ratio" ">= 0.5" "$(compare "$ratio" ge 0.5)"
print_row "failover, worst of $trials (ms)" "$failover_max" "-" "-" "<= 4000" "$(compare "$failover_max" le 4000)"
print_row "lateness p99, 3 hosts (ms)" "$p99" "-" "-" "<= 50" "$(compare "$p99" le 50)"
