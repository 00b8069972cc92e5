# SPDX-License-Identifier: MIT
# An unmodified per-rank checkpoint program (ckpt_writer: stdio and POSIX, sizes from 0 bytes to
# a few MiB, four name shapes, three steps) runs under real mpiexec with capture on; jobs of
# other rank counts (1, 2, 3, 4, 8; writers 4, 3, 8, 1, 2) then verify every byte through the per-rank names. The
# folder holds one container per set and nothing else; no per-rank file or folder is created.

app="$SLUICE_APPS_DIR/ckpt_writer"
export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
export SLUICE_CAPTURE='ckpt.%r:restart_*_%r.dat:chk_*/rank_%r.bin:rank%r/ckpt.dat'
steps=3

# verify_with WRITERS READERS: every member of WRITERS ranks, checked by a READERS-rank job.
verify_with() {
  local writers=$1 readers=$2 out
  out=$(run_dist "$readers" "$app" verify "$steps" "$writers")
  local members
  members=$(echo "$out" | awk '{n += $4} END {print n}')
  expect_eq "$readers-rank job verified all members of $writers writers" \
    "$((writers * (2 + 2 * steps)))" "$members"
}

for writers in 4 3 8 1 2; do
  mkdir "w$writers"
  cd "w$writers"
  # The 3-writer job stages at most 1 MiB per process before committing early.
  limit=4G
  [ "$writers" != 3 ] || limit=1M
  out=$(run_dist "$writers" SLUICE_STAGE_LIMIT=$limit "$app" write "$steps")
  expect_eq "$writers writers all reported" "$writers" "$(echo "$out" | grep -c wrote)"
  expect_eq "$writers writers: one container per set, step folders only" \
    "chk_1 chk_2 chk_3 ckpt.@r.sluice rank@r@_ckpt.dat.sluice restart_1_@r.dat.sluice restart_2_@r.dat.sluice restart_3_@r.dat.sluice" \
    "$(echo *)"
  for s in 1 2 3; do
    expect_eq "step folder $s holds one container" "rank_@r.bin.sluice" "$(cd chk_$s && echo *)"
  done
  expect_eq "nothing left staged after $writers writers" "" "$(find "$SLUICE_STAGE_DIR" -name 'm-*' | head -3)"
  case $writers in
    4) for readers in 1 2 3 4 8; do verify_with 4 "$readers"; done ;;
    3) verify_with 3 4; verify_with 3 1 ;;
    8) verify_with 8 3 ;;
    1) verify_with 1 2 ;;
    2) verify_with 2 1; verify_with 2 3 ;;
  esac
  # Without sluice the members are not there: the verifier fails on the first one.
  rc_of "$app" verify "$steps" "$writers" >/dev/null 2>err.txt
  expect_eq "without sluice the per-rank names do not exist" 1 "$rc"
  expect_contains "verifier names the missing member" "ckpt.0: No such file or directory" "$(cat err.txt)"
  rm err.txt
  cd ..
done
