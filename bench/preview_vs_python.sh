#!/usr/bin/env bash
# Benchmark: `taskd preview --count 100000` against the Python reference
# implementations doing the same work (croniter for cron, dateutil for RRULE).
# Each side is timed as a whole process, best of 5, in the same run.
# Usage: bench/preview_vs_python.sh [build-dir]
set -euo pipefail

taskd=${1:-build}/taskd
count=100000
from=2026-01-01T00:00:00Z
python=/usr/bin/python3

best_of_5() {  # prints the best wall time in seconds of the command
  local best=""
  for _ in 1 2 3 4 5; do
    local start end elapsed
    start=$(date +%s.%N)
    "$@" >/dev/null
    end=$(date +%s.%N)
    elapsed=$(echo "$end - $start" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$elapsed < $best" | bc -l)" = 1 ]; then best=$elapsed; fi
  done
  printf '%.4f' "$best"
}

croniter_cmd=("$python" -c "
import datetime, croniter
it = croniter.croniter('*/5 * * * *', datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc))
for _ in range($count):
    print(it.get_next(datetime.datetime).strftime('%Y-%m-%dT%H:%M:%SZ'))
")
dateutil_cmd() {  # RULE
  "$python" -c "
import datetime
from dateutil.rrule import rrulestr
rule = rrulestr('$1', dtstart=datetime.datetime(2026, 1, 1))
after = datetime.datetime(2026, 1, 1)
for i, t in enumerate(rule.xafter(after, count=$count)):
    print(t.strftime('%Y-%m-%dT%H:%M:%SZ'))
"
}
taskd_rrule_cmd() {  # RULE
  "$taskd" preview --rrule "$1" --tz UTC --dtstart 2026-01-01T00:00:00 --from "$from" --count $count
}
# Every 5 minutes; and BY parts with BYSETPOS (the last of four times a day).
simple_rule='FREQ=MINUTELY;INTERVAL=5'
by_parts_rule='FREQ=DAILY;BYHOUR=9,17;BYMINUTE=0,30;BYSETPOS=-1,1'
for rule in "$simple_rule" "$by_parts_rule"; do
  diff <(taskd_rrule_cmd "$rule" | head -1000) <(dateutil_cmd "$rule" 2>/dev/null | head -1000)
done

# Both sides must produce the same instants, or the comparison means nothing.
diff <("$taskd" preview --cron '*/5 * * * *' --tz UTC --from "$from" --count 5) \
     <("${croniter_cmd[@]}" | head -5)

taskd_cron=$(best_of_5 "$taskd" preview --cron '*/5 * * * *' --tz UTC --from "$from" --count $count)
python_cron=$(best_of_5 "${croniter_cmd[@]}")
taskd_rrule=$(best_of_5 taskd_rrule_cmd "$simple_rule")
python_rrule=$(best_of_5 dateutil_cmd "$simple_rule")
taskd_by_parts=$(best_of_5 taskd_rrule_cmd "$by_parts_rule")
python_by_parts=$(best_of_5 dateutil_cmd "$by_parts_rule")

printf '%-36s %10s %10s %8s\n' "work ($count instants)" "taskd s" "python s" "ratio"
printf '%-36s %10s %10s %7.1fx\n' "cron */5 * * * * vs croniter" "$taskd_cron" "$python_cron" \
  "$(echo "$python_cron / $taskd_cron" | bc -l)"
printf '%-36s %10s %10s %7.1fx\n' "$simple_rule vs dateutil" "$taskd_rrule" "$python_rrule" \
  "$(echo "$python_rrule / $taskd_rrule" | bc -l)"
printf '%-36s %10s %10s %7.1fx\n' "$by_parts_rule vs dateutil" "$taskd_by_parts" "$python_by_parts" \
  "$(echo "$python_by_parts / $taskd_by_parts" | bc -l)"
