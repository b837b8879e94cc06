#!/usr/bin/env bash
# The demo behind `make demo`: a database in ./demo with a few tasks, and the
# scheduler run on it for about half a minute so you can watch runs happen.
set -euo pipefail

taskd=${1:-build/taskd}
dir=demo
db=$dir/taskd.db
rounds=${DEMO_ROUNDS:-6}
t() { "$taskd" --db "$db" "$@"; }

rm -rf "$dir"
echo "== adding demo tasks to $db"
t add hello  --every 5s --start-now -- echo "hello from taskd"
t add counter --every 5s --start-now --shell -- \
  'n=$(cat "$TASKD_STATE"); n=$((${n:-0} + 1)); echo $n > "$TASKD_STATE"; echo "run $n, state kept in \$TASKD_STATE"'
# --notify runs on a change of state (failed, recovered, disabled), not at every retry.
notify='echo "   notify: $TASKD_TASK $TASKD_NOTIFY: $TASKD_REASON" >&2'
t add flaky  --every 5s --start-now --retry 0s,5s --notify "$notify" --shell -- 'echo "cannot reach example.invalid" >&2; exit 1'
t add slow   --every 10s --start-now --timeout 2s --kill-grace 1s -- sleep 30
t add broken --every 5s --start-now --notify "$notify" --shell -- 'echo "Provided URL is invalid: https://example.com/broken" > "$TASKD_STATUS"; exit 78'
t add report --every 1d --group reports -- echo "report on demand"
t group set reports --concurrency 1
t trigger report
echo
t list
echo
for round in $(seq 1 "$rounds"); do
  echo "== $(date +%T) taskd run-once (round $round of $rounds): prints a line for each failed run"
  t run-once
  [ "$round" -lt "$rounds" ] && sleep 5
done
echo
echo "== taskd list"
t list
echo
echo "== taskd history --limit 15"
t history --limit 15
echo
echo "== taskd logs counter"
t logs counter
echo
echo "Try: $taskd --db $db show flaky   |   $taskd --db $db --json history slow"
