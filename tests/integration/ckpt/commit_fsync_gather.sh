# SPDX-License-Identifier: MIT
# The fsyncs of one step make one version however far apart they come: every rank opens its
# step's files (a stdio checkpoint, a state file rewritten in place around a hole, an O_APPEND
# log) at the start of the step, then rank r writes and fsyncs them r * 40 ms late. The home
# waits for every rank holding an open member of the set (up to SLUICE_FSYNC_GATHER), so each
# set has one version per step (`sluice-ckpt ls`, one COMMIT_BEGIN per set and step holding
# every member in the trace), and a restart with another rank count reads every byte. With a
# bound shorter than the stagger the fsyncs return at the bound instead (more versions, same
# bytes).
app=$SLUICE_APPS_DIR/mpi_ckpt_multifile
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
run_case() { # run_case NAME RANKS STAGGER_MS
  local name=$1 n=$2 stagger=$3 d=$PWD/$1
  mkdir -p "$d"
  export SLUICE_CAPTURE="$d/s*/ckpt.%r:$d/state.%r:$d/log.%r" SLUICE_TRACE_DIR=$PWD/$name.trace
  run_dist "$n" "$app" write "$d" 2 --fsync \
    --stagger "$stagger" > "$name.out" || fail "$name: writer job failed"
  "$ckpt" ls -r "$d" > "$name.ls" || fail "$name: sluice-ckpt ls failed"
  timeout 120 "$MPIEXEC" -n $((n == 4 ? 3 : n + 1)) env LD_PRELOAD="$SLUICE_LIB" "$app" verify "$d" 2 "$n" \
    || fail "$name: the restart read wrong bytes"
  "$SLUICE_BIN_DIR/sluice-trace" dump "$name.trace" > "$name.dump" || fail "$name: sluice-trace dump failed"
}
version_of() { grep -F "set $1.%r " "$2" | sed 's/.* version \([0-9]*\) .*/\1/'; }
for n in 3 4; do
  run_case n$n "$n" 40
  d=$PWD/n$n
  for set in s1/ckpt s2/ckpt state log; do
    want=2
    case $set in s[0-9]*) want=1 ;; esac
    expect_eq "n$n: $set.%r is at version $want" "$want" "$(version_of "$d/$set" n$n.ls)"
  done
  expect_eq "n$n: commits in the trace (one per set and step)" 6 "$(grep -c 'COMMIT_BEGIN' n$n.dump || true)"
  expect_eq "n$n: every commit holds all $n members" 6 \
    "$(grep 'COMMIT_BEGIN' n$n.dump | grep -c "members=$n\b" || true)"
  echo "ok: n$n: fsyncs 40 ms apart made one version per set and step ($(sed -n 's/^write_phase_s //p' n$n.out) s)"
done
# The bound: with fsyncs 400 ms apart and SLUICE_FSYNC_GATHER=100 an fsync does not wait for the
# last rank; the step's checkpoint then takes more than one version, and every byte is there.
SLUICE_FSYNC_GATHER=100 run_case bound 3 400
v=$(version_of "$PWD/bound/s1/ckpt" bound.ls)
[ "$v" -gt 1 ] || fail "bound: the fsyncs waited past SLUICE_FSYNC_GATHER (version $v)"
echo "ok: bound: SLUICE_FSYNC_GATHER=100 gave $v versions of a step whose fsyncs were 400 ms apart"
