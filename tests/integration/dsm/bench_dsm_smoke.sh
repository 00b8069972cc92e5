# SPDX-License-Identifier: MIT
# The DSM benchmark runs end to end (bench/dsm.sh, tiny sizes): the latency table has a figure in
# every column for each of the four chunk sizes, the pipeline row compares the DSM pipeline with
# the MPI one (every run's frames checked against the reference by the script itself), and
# --compare (here the same build as build B) adds a second latency table and the DSM B columns.
# No timing is asserted: only that each figure was measured.
num='[0-9]+(\.[0-9]+)?'
lat_rows() { grep -Ec "^\| (64|4096|65536|1048576) \|( $num \|){8}$" <<<"$1"; }

out=$(MPIEXEC=$MPIEXEC timeout 300 "$SOURCE_DIR/bench/dsm.sh" --build "$SLUICE_BIN_DIR/.." --iters 5 \
  --frames 4 --runs 1 --roles 1 2>&1) || fail "bench/dsm.sh failed: $(tail -3 <<<"$out")"
echo "$out"
expect_eq "latency rows with nine figures" 4 "$(lat_rows "$out")"
grep -Eq "^\| 1 \| 3 \|( $num \| $num-$num \|){2} $num \|$" <<<"$out" || fail "pipeline row for 1 role missing"
echo "ok: latency table and pipeline row"

out=$(MPIEXEC=$MPIEXEC timeout 300 "$SOURCE_DIR/bench/dsm.sh" --build "$SLUICE_BIN_DIR/.." --iters 5 \
  --frames 4 --runs 1 --roles 1 --compare "$SLUICE_BIN_DIR/.." 2>&1) || fail "bench/dsm.sh --compare failed: $(tail -3 <<<"$out")"
echo "$out"
expect_contains "build B's table named" "build B (" "$out"
expect_eq "latency rows of both builds" 8 "$(lat_rows "$out")"
grep -Eq "^\| 1 \| 3 \|( $num \| $num-$num \|){3} $num \| $num \|$" <<<"$out" ||
  fail "pipeline row with the DSM B columns missing"
echo "ok: --compare adds build B's table and columns"
