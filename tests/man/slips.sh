#!/bin/sh
# Roff slips that render without a warning: a sentence glued to the arguments
# of an alternating-font macro (".BR x . A sentence" renders "x.Asentence"),
# and a .TP whose tag would be the next section's heading.
page=$1
status=0
if grep -nE '^[.](BR|BI|IR|RB|RI|IB) .*[.] [A-Z][a-z]* [a-z]' "$page"; then
  echo "$page: a sentence after an alternating-font macro's arguments: start it on a line of its own"
  status=1
fi
awk -v page="$page" 'prev == ".TP" && /^[.]SH/ { print page ":" FNR ": .TP before .SH"; bad = 1 } { prev = $0 } END { exit bad }' "$page" || status=1
exit $status
