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
dateutil_cmd=("$python" -c "
import datetime
from dateutil.rrule import rrulestr
rule = rrulestr('FREQ=MINUTELY;INTERVAL=5', dtstart=datetime.datetime(2026, 1, 1))
after = datetime.datetime(2026, 1, 1)
for i, t in enumerate(rule.xafter(after, count=$count)):
    print(t.strftime('%Y-%m-%dT%H:%M:%SZ'))
")

# Both sides must produce the same instants, or the comparison means nothing.
diff <("$taskd" preview --cron '*/5 * * * *' --tz UTC --from "$from" --count 5) \
     <("${croniter_cmd[@]}" | head -5)

taskd_cron=$(best_of_5 "$taskd" preview --cron '*/5 * * * *' --tz UTC --from "$from" --count $count)
python_cron=$(best_of_5 "${croniter_cmd[@]}")
taskd_rrule=$(best_of_5 "$taskd" preview --rrule 'FREQ=MINUTELY;INTERVAL=5' --tz UTC --dtstart 2026-01-01T00:00:00 \
  --from "$from" --count $count)
python_rrule=$(best_of_5 "${dateutil_cmd[@]}")

printf '%-36s %10s %10s %8s\n' "work ($count instants)" "taskd s" "python s" "ratio"
printf '%-36s %10s %10s %7.1fx\n' "cron */5 * * * * vs croniter" "$taskd_cron" "$python_cron" \
  "$(echo "$python_cron / $taskd_cron" | bc -l)"
printf '%-36s %10s %10s %7.1fx\n' "FREQ=MINUTELY;INTERVAL=5 vs dateutil" "$taskd_rrule" "$python_rrule" \
  "$(echo "$python_rrule / $taskd_rrule" | bc -l)"
