# SPDX-License-Identifier: MIT
# The distributed OpenCL benchmark runs end to end (bench/dist_opencl.sh --quick): its OpenCL
# program measures a device of rank 1 through sluice (the job really has two devices), the raw MPI
# program measures ranks 0 and 1, and the driver prints every row of its latency, write and read
# tables with a figure in each column and a scaling row whose output matches one rank's; with
# --trace, bench/dist_roundtrip.py cuts the traced remote round trips into their stages and
# bench/dist_pieces.py the traced writes received in pieces. No
# timing is asserted: only that each figure was measured.
export POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=1
bin=$SLUICE_BIN_DIR/sluice-bench-dist_opencl

listed=$(run_dist 2 SLUICE_OPENCL=distributed "$bin" --list)
expect_eq "devices listed by rank 0 of 2 ranks" 2 "$(grep -c '^device [01] .* | cpu$' <<<"$listed")"

out=$(MPIEXEC=$MPIEXEC "$SOURCE_DIR/bench/dist_opencl.sh" --build "$SLUICE_BIN_DIR/.." --quick \
  --trace "$SLUICE_TEST_SCRATCH/rt" --samples cl_matmul_split --args cl_matmul_split 64 2>&1)
echo "$out"
num='[0-9]+\.[0-9]+'
for row in "local: empty kernel \+ clFinish" "remote: empty kernel \+ clFinish" "raw MPI: 0-byte ping-pong"; do
  grep -Eq "^$row +$num +$num +$num$" <<<"$out" || fail "latency row '$row' missing or not a number"
done
echo "ok: three latency rows"
for size in 1K 64K 1M; do
  expect_eq "write and read rows of $size with four figures" 2 \
    "$(grep -Ec "^ +$size +$num +$num +$num +$num$" <<<"$out")"
done
grep -Eq "^MPI: +(MPICH|Open MPI)" <<<"$out" || fail "MPI library not named"
expect_contains "remote device named" "remote device: 0 Portable Computing Language" "$out"
grep -Eq "^cl_matmul_split +64 +2 +$num +$num +$num +$num +yes$" <<<"$out" ||
  fail "scaling row for 2 ranks missing, or its output differs from 1 rank's"
echo "ok: scaling row, same output on 2 ranks"

"$SLUICE_BIN_DIR/sluice-trace" perfetto "$SLUICE_TEST_SCRATCH/rt.json" "$SLUICE_TEST_SCRATCH/rt/remote" ||
  fail "sluice-trace perfetto of the traced remote run"
stages=$(/usr/bin/python3 "$SOURCE_DIR/bench/dist_roundtrip.py" "$SLUICE_TEST_SCRATCH/rt.json") ||
  fail "dist_roundtrip.py: $stages"
echo "$stages"
grep -Eq '^[1-9][0-9]* round trips' <<<"$stages" || fail "no round trip found in the trace"
for stage in enqueue to-peer serve to-rank0 wake total; do
  grep -Eq "^  $stage +$num +$num +$num$" <<<"$stages" || fail "stage '$stage' missing or not a number"
done
echo "ok: the traced round trips cut into their stages"
# The same trace's 1 MiB writes, received in 4 pieces of 256 KiB (the default cut: 1/16, at
# least 256K), cut into their stages by bench/dist_pieces.py.
pieces=$(/usr/bin/python3 "$SOURCE_DIR/bench/dist_pieces.py" "$SLUICE_TEST_SCRATCH/rt.json") ||
  fail "dist_pieces.py: $pieces"
echo "$pieces"
grep -Eq '^writes of 1048576 bytes in 4 pieces: [1-9][0-9]* traced$' <<<"$pieces" ||
  fail "no 1 MiB write in 4 pieces found in the trace"
for stage in request first pieces device to-rank0 "largest gap" enqueue; do
  grep -Eq "^  $stage +$num +$num +$num$" <<<"$pieces" || fail "write stage '$stage' missing or not a number"
done
echo "ok: the traced writes cut into their stages"

# The bound of a remote write without sluice (bench/dist_write_bound.c, step 4 of dist_h200.sh):
# each mode measured at each size, and the ratios printed.
bound=$(timeout 120 "$MPIEXEC" -n 2 "$SLUICE_BIN_DIR/sluice-bench-dist_write_bound" --type all --sizes "64K 1M" 2>&1)
echo "$bound"
for mode in mpi device serial pipelined posted; do
  expect_eq "dist_write_bound: $mode measured at 64K and 1M" 2 "$(grep -Ec "^$mode (65536|1048576) [0-9]+ $num $num$" <<<"$bound")"
done
expect_eq "dist_write_bound: ratio lines" 2 \
  "$(grep -Ec "^ratio [0-9]+ piece 262144: device/mpi $num serial/mpi $num pipelined/mpi $num posted/mpi $num$" <<<"$bound")"
