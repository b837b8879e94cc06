#!/bin/sh
# Builds the .deb with CPack from BUILD_DIR, unpacks it into a temporary root
# with dpkg-deb -x, and checks what it installs: the packaged taskd runs and
# prints VERSION, the man page renders, the completion is valid bash.
set -eu
build_dir=$1
version=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$build_dir" && cpack -G DEB -B "$work/out" >"$work/cpack.log") || { cat "$work/cpack.log"; exit 1; }
deb=$(find "$work/out" -maxdepth 1 -name 'taskd_*.deb')
[ -n "$deb" ] || { echo "cpack made no taskd_*.deb"; ls "$work/out"; exit 1; }
dpkg-deb -x "$deb" "$work/root"

root=$work/root/usr
[ "$("$root/bin/taskd" --version)" = "taskd $version" ] || { echo "wrong --version: $("$root/bin/taskd" --version)"; exit 1; }
[ -f "$root/share/man/man1/taskd.1" ] || { echo "no man page in the package"; exit 1; }
bash -n "$root/share/bash-completion/completions/taskd"
for unit in system/taskd.service user/taskd.service; do
  grep -q '^ExecStart=/usr/bin/taskd ' "$root/lib/systemd/$unit" || { echo "no $unit running /usr/bin/taskd"; exit 1; }
done
depends=$(dpkg-deb -f "$deb" Depends)
# libsqlite3 is linked; tzdata's files are read, which dpkg-shlibdeps cannot see.
for needed in libsqlite3 tzdata; do
  case $depends in
    *"$needed"*) ;;
    *) echo "Depends lacks $needed: $depends"; exit 1 ;;
  esac
done
# RRULEs are computed by taskd itself.
case $depends in
  *libical*) echo "Depends still names libical: $depends"; exit 1 ;;
esac
# Debian policy 5.6.2: "Name <address>", a real one to write to.
maintainer=$(dpkg-deb -f "$deb" Maintainer)
echo "$maintainer" | grep -Eq '^[^<>]+ <[^<>@ ]+@[^<>@ ]+\.[a-z]+>$' || { echo "Maintainer is not Name <address>: $maintainer"; exit 1; }
echo "ok: $(basename "$deb"), Depends: $depends, Maintainer: $maintainer"
