# SPDX-License-Identifier: MIT
# A restart must never change a member it did not write, and a read-write open of an existing
# member sees its committed bytes whatever the other ranks do. Each rank of a restart opens its
# member O_WRONLY|O_CREAT and closes it, then forks a worker that opens it O_WRONLY|O_CREAT,
# closes it, opens it O_RDWR|O_CREAT and checks every byte (the pattern of common I/O
# verifiers). After each job `sluice-ckpt extract` must give the bytes the first job wrote, and
# the container must still be version 1. Then two restarts that do rewrite the member in place
# before forking (the worker reads while that commit runs) must leave exactly the new bytes.
# 1 to 4 ranks, 7 jobs each.
app=$SLUICE_APPS_DIR/ckpt_restart_rw
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
check_container() { # check_container NAME DIR RANKS GEN
  rm -rf "$PWD/x"
  "$ckpt" extract -o "$PWD/x" "$2/ckpt.@r.sluice" > /dev/null || fail "$1: extract failed"
  SLUICE_CAPTURE= RW_GEN=$4 "$app" check "$PWD/x" "$3" 2> check.err \
    || fail "$1: the container does not hold generation $4: $(cat check.err)"
}
for n in 1 2 3 4; do
  d=$PWD/n$n
  mkdir -p "$d"
  export SLUICE_CAPTURE="$d/ckpt.%r"
  RUN_TIMEOUT=60 run_dist "$n" "$app" write "$d" \
    || fail "n$n: writer job failed"
  for run in 1 2 3 4 5; do
    RUN_TIMEOUT=60 run_dist "$n" "$app" rw "$d" 2> rw.err \
      || fail "n$n run $run: a restart read wrong bytes (or failed): $(cat rw.err)"
    check_container "n$n run $run" "$d" "$n" 0
  done
  expect_eq "n$n: restarts that wrote nothing made no version" "1" \
    "$("$ckpt" ls "$d" | sed -n 's/.* version \([0-9]*\) .*/\1/p')"
  for g in 1 2; do
    RUN_TIMEOUT=60 run_dist "$n" RW_GEN=$g "$app" rw "$d" 2> rw.err \
      || fail "n$n rewrite $g: the worker read wrong bytes (or failed): $(cat rw.err)"
    check_container "n$n rewrite $g" "$d" "$n" "$g"
  done
  echo "ok: $n ranks: 5 read-write restarts from forked workers kept every byte; 2 rewrites landed"
done
