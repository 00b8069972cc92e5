#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What coreutils, find, tar and bash's own commands say about folder $1 (relative, with files
# in it), printed in a form that does not depend on inode numbers, times or the folder's own
# block count (file-system specific). tests/integration/ckpt/capture_vdirs_calls.sh runs it on real
# folders and on sluice's virtual ones and compares.
d=$1
top=$PWD
run() { echo "== $*"; "$@" 2>&1 | sed "s|$top|TOP|g"; }
fields() { awk '$1 != "total" {print $1, $3, $4, $NF}'; }
run stat -c '%n %F %a %U %G' "$d" "$d/." "$d/.." "$d/../${d##*/}"
run stat -c '%n %F %s %a' "$d"/*
run stat -f -c '%n %T %S %b' "$d" "$d/."
echo "== ls -la"; ls -la --time-style=+ "$d" 2>&1 | fields
echo "== ls -lad"; ls -lad --time-style=+ "$d" "$d/." "$d/.." 2>&1 | fields
run ls -R "$d"
echo "== df"; df -P "$d" 2>&1 | awk 'NR > 1 {print $1, $2, $6}'
run realpath "$d" "$d/.." "$d/." "$d/../${d##*/}"
run realpath -e "$d"/*
run readlink -f "$d/.."
run find "$d" -printf '%p %y %m\n'
run find "$d/.." -maxdepth 1 -name "${d##*/}" -type d
echo "== tar"; tar -cf - "$d" 2>&1 | tar -tvf - | awk '{print $1, $NF}'
[ -d "$d" ] && [ -r "$d" ] && [ -x "$d" ] && [ -d "$d/.." ] && echo "== test: a readable folder"
c=copy.${d##*/}
echo "== cp -r"; cp -r "$d" "$c" && ls -la --time-style=+ "$c" | fields && rm -r "$c"
echo "== cd"
(
  cd "$d" || exit
  echo "pwd $PWD / $(pwd -P) / $(/bin/pwd)" | sed "s|$top|TOP|g"
  ls
  ls .. | grep -v '\.sluice$'
  cat ./*
  stat -c '%n %F %a' . .. ./*
  df -P . | awk 'NR > 1 {print $1, $2, $6}'
  realpath . .. | sed "s|$top|TOP|g"
  cd .. && echo "up: $(pwd | sed "s|$top|TOP|g")"
  cd - >/dev/null && echo "back: $(/bin/pwd | sed "s|$top|TOP|g")"
)
echo "== chmod, touch, chown"
chmod 700 "$d" && stat -c '%n %a' "$d" && chmod 755 "$d/../${d##*/}" && stat -c '%n %a' "$d"
touch -d @1000000000 "$d" && stat -c '%n %Y' "$d" && touch -m -d @1100000000 "$d/." && stat -c '%n %Y' "$d"
chown "$(id -u):$(id -g)" "$d" && [ "$(stat -c '%u:%g' "$d")" == "$(id -u):$(id -g)" ] && echo "owner kept"
