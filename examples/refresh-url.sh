#!/bin/sh
# A cache refresh, as a taskd task: fetch URL into FILE.
#
#   taskd add refresh-prices --every 30m --disable-when-exhausted -- /path/to/refresh-url.sh URL FILE
#
# A 404 or 410 means the URL itself is wrong and no retry can help: the script
# writes a reason for people to $TASKD_STATUS and exits 78, taskd's default
# --permanent-exit, so the task is disabled until someone edits it. Any other
# failure exits 1 and taskd's retry ladder tries again; when the ladder runs
# out, --disable-when-exhausted disables the task until someone looks (without
# it, the next planned refresh would run as usual). The download stops at the
# run's deadline ($TASKD_DEADLINE) and replaces FILE only when complete.
set -u

if [ $# -ne 2 ]; then
  echo "usage: refresh-url.sh URL FILE" >&2
  exit 64
fi
url=$1
file=$2

max_time=60
if [ -n "${TASKD_DEADLINE:-}" ]; then
  max_time=$((TASKD_DEADLINE - $(date +%s)))
  [ "$max_time" -ge 1 ] || max_time=1
fi

status=$(curl --silent --show-error --location --max-time "$max_time" \
  --output "$file.part" --write-out '%{http_code}' -- "$url")
curl_exit=$?

case "$status" in
  404 | 410)
    rm -f "$file.part"
    echo "Provided URL is invalid: $url" >"${TASKD_STATUS:-/dev/stderr}"
    exit 78
    ;;
esac
if [ "$curl_exit" -ne 0 ] || [ "$status" -lt 200 ] || [ "$status" -ge 300 ]; then
  rm -f "$file.part"
  echo "fetching $url failed: HTTP status $status, curl exit code $curl_exit" >&2
  exit 1
fi
mv "$file.part" "$file"
echo "fetched $url: $(wc -c <"$file") bytes"
