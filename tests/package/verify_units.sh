#!/bin/sh
# systemd-analyze verify on each unit in examples/, with its ExecStart's
# /usr/bin/taskd replaced by the binary under test: no warning, no error.
# The user unit is verified as a user unit (its manager needs a runtime
# directory, given here); Documentation=man:taskd(1) finds the page under test.
set -eu
examples=$1
taskd=$2
man_page=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -m 0700 "$work/runtime"
mkdir -p "$work/man/man1"
cp "$man_page" "$work/man/man1/taskd.1"
export MANPATH="$work/man"
status=0
for unit in "$examples"/*.service; do
  name=$(basename "$unit")
  sed "s|/usr/bin/taskd|$taskd|g" "$unit" > "$work/$name"
  case $name in
    taskd.service) mode=--user ;;
    *) mode=--system ;;
  esac
  if ! XDG_RUNTIME_DIR="$work/runtime" systemd-analyze "$mode" verify "$work/$name" > "$work/out" 2>&1 || [ -s "$work/out" ]; then
    echo "$name ($mode):"; cat "$work/out"; status=1
  fi
done
exit $status
