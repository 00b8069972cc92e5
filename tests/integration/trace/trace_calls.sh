# SPDX-License-Identifier: MIT
# `sluice-trace calls` on real runs under mpiexec with SLUICE_BACKTRACE: the intercepted calls
# are named at the program's own function and source line (found here in the sources), the
# same site of every rank is one row, hwloc's OpenCL calls inside MPI_Init show hwloc's stack,
# and sluice's own threads are left out unless --all.
TRACE=$SLUICE_BIN_DIR/sluice-trace
SRC=$SOURCE_DIR/tests/apps
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE

run_dist 3 SLUICE_TRACE_DIR="$PWD/hello" SLUICE_BACKTRACE=3 \
  "$SLUICE_APPS_DIR/mpi_trace_hello" >/dev/null || fail "mpi_trace_hello failed"
"$TRACE" calls hello >hello.txt || fail "calls failed"
cat hello.txt
for f in compute allreduce; do
  line=$(grep -n "mark(\"$f\")" "$SRC/mpi_trace_hello.c" | cut -d: -f1)
  fn=$([ $f == compute ] && echo compute_phase || echo exchange_phase)
  grep -A1 '^#[0-9]*  MARK: 15 calls, .* 3 ranks$' hello.txt | grep -q "^      $fn at .*mpi_trace_hello.c:$line " \
    || fail "MARK from $fn not named at mpi_trace_hello.c:$line"
  echo "ok: MARK at $fn, mpi_trace_hello.c:$line, 15 calls on 3 ranks"
done

d=$PWD/ck; mkdir -p "$d"
SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_TRACE_DIR=$PWD/ck.trace SLUICE_BACKTRACE=4 \
  run_dist 2 "$SLUICE_APPS_DIR/ckpt_sized" write "$d" 1000 2000 \
  || fail "checkpoint job failed"
"$TRACE" calls ck.trace >ck.txt || fail "calls failed"
cat ck.txt
line=$(grep -n 'fd\[n\] = open(' "$SRC/ckpt_sized.c" | cut -d: -f1)
grep -A1 '^#[0-9]*  CKPT_OPEN: 2 calls, .* 2 ranks$' ck.txt | grep -q "^      do_write at .*ckpt_sized.c:$line " \
  || fail "CKPT_OPEN not named at do_write, ckpt_sized.c:$line"
echo "ok: CKPT_OPEN at do_write, ckpt_sized.c:$line"
if grep -q '^#[0-9]*  clGetPlatformIDs' ck.txt; then
  grep -A2 '^#[0-9]*  clGetPlatformIDs' ck.txt | grep -q hwloc || fail "hwloc's OpenCL calls without hwloc's stack"
  echo "ok: hwloc's OpenCL calls show hwloc's stack"
fi
grep -q 'PROGRESS_' ck.txt && fail "sluice's progress thread listed as program calls"
"$TRACE" calls --all ck.trace >all.txt || fail "calls --all failed"
grep -q '^#[0-9]*  PROGRESS_SLEEP' all.txt || fail "--all does not list the progress thread"
echo "ok: sluice's own threads only with --all"
