# SPDX-License-Identifier: MIT
# Checkpoint capture is invisible to a single process: the POSIX semantics program prints the
# same lines with and without sluice; with sluice the folder holds only containers (and the
# per-step folders the program made), per-rank folders are not created, nothing stays staged;
# a later process under sluice reads every member back byte for byte (cat, cmp) and lists
# the same names as the plain run (ls), and without sluice the members are not there.

app="$SLUICE_APPS_DIR/ckpt_semantics"
export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
patterns='ckpt.%r:restart_*_%r.dat:chk_*/rank_%r.bin:rank%r/ckpt.dat'

mkdir plain captured
"$app" "$PWD/plain" > plain.out
( cd captured && SLUICE_CAPTURE="$patterns" run_sluice "$app" "$PWD" > ../captured.out )
expect_eq "same output with and without sluice" "$(cat plain.out)" "$(cat captured.out)"
expect_contains "every check passed" "all semantics checks passed" "$(cat captured.out)"

# On disk: containers only (per-step folders are the program's own mkdir).
expect_eq "top level holds containers and the step folders" \
  "chk_10 chk_20 ckpt.@r.sluice rank@r@_ckpt.dat.sluice restart_10_@r.dat.sluice restart_20_@r.dat.sluice" \
  "$(cd captured && echo *)"
expect_eq "a step folder holds one container" "rank_@r.bin.sluice" "$(cd captured/chk_10 && echo *)"
[ ! -e captured/rank7 ] || fail "per-rank folder rank7 was created on disk"
echo "ok: per-rank folder not created"
expect_eq "nothing left staged" "" "$(find "$SLUICE_STAGE_DIR" -name 'm-*' | head -3)"

# A later process reads every member back through its per-rank name.
cd captured
members="ckpt.0 ckpt.1 ckpt.2 ckpt.3 ckpt.10 restart_10_3.dat restart_20_3.dat chk_10/rank_3.bin chk_20/rank_3.bin rank7/ckpt.dat"
for m in $members; do
  SLUICE_CAPTURE="$patterns" run_sluice cmp "../plain/$m" "$m" || fail "member $m differs from the plain run"
  [ ! -e "$m" ] || fail "$m exists without sluice"
done
echo "ok: cmp equal for $(echo $members | wc -w) members, none visible without sluice"
expect_eq "cat reads a member" "$(cat ../plain/ckpt.3)" "$(SLUICE_CAPTURE="$patterns" run_sluice cat ckpt.3)"
expect_eq "wc -c sees the sizes" "$(cd ../plain && wc -c $members)" "$(SLUICE_CAPTURE="$patterns" run_sluice wc -c $members)"

# ls lists the same names as the plain folder (containers aside), with the same sizes.
plain_ls=$(cd ../plain && ls -R | grep -v '^$')
captured_ls=$(SLUICE_CAPTURE="$patterns" run_sluice ls -R | grep -v '^$' | grep -v '\.sluice$')
expect_eq "ls -R lists the same names" "$plain_ls" "$captured_ls"
plain_sizes=$(cd ../plain && ls -l ckpt.* | awk '{print $5, $9}')
captured_sizes=$(SLUICE_CAPTURE="$patterns" run_sluice sh -c 'ls -l ckpt.[0-9]*' | awk '{print $5, $9}')
expect_eq "ls -l shows the same sizes" "$plain_sizes" "$captured_sizes"
expect_eq "stat of a per-rank folder" "directory" "$(SLUICE_CAPTURE="$patterns" run_sluice stat -c %F rank7)"

# Names the program never wrote stay missing, with the errno the program would get.
set +e
err=$(SLUICE_CAPTURE="$patterns" run_sluice cat ckpt.77 2>&1 >/dev/null)
rc=$?
set -e
expect_eq "cat of a missing member fails" 1 "$rc"
expect_contains "cat says No such file" "No such file or directory" "$err"

# rm of a member under sluice removes it for later readers.
SLUICE_CAPTURE="$patterns" run_sluice rm ckpt.10
SLUICE_CAPTURE="$patterns" rc_of run_sluice test -e ckpt.10
expect_eq "removed member is gone" 1 "$rc"
