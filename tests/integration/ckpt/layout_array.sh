# SPDX-License-Identifier: MIT
# SLUICE_LAYOUT end to end (docs/LAYOUT.md): a program of the first seed's shape (a 20x18x16
# array of doubles, block-decomposed over MPI_Dims_create's grid, header of 64 bytes + block per
# rank in ckpt.<rank>) writes under capture with the layout on 3 and 8 ranks (1 to 8 with LAYOUT_TEST_FULL=1). Each time:
# one container that verifies, whose array region is the global array in canonical order
# (extract --raw, every element compared with numpy), readable through its HDF5 view by h5py
# and h5dump; restarts on 1, 4 and 6 ranks (1, 2, 3, 4, 6 and 8 from every writer with LAYOUT_TEST_FULL=1; other grids) read exactly their blocks
# of the new decomposition (the program checks every value); extract --ranks writes the
# per-rank files of another decomposition, byte for byte what that job would write. A layout
# that does not fit (wrong shape) gets one line and plain members that still restart. Blocks that
# come late (ranks 1 and 2 open theirs 400 ms after rank 0's fsync, or 2.5 s after its close) and
# a job where 3 of 4 ranks write make one version of the array per step, never one of the first
# blocks alone.
app=$SLUICE_APPS_DIR/mpi_ckpt_array
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
shape="20 18 16"
layout="header=64,dtype=f8,shape=20x18x16,grid=auto"
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || fail "python3-h5py and python3-numpy are not installed for /usr/bin/python3 (scripts/install-deps.sh)"

# write NAME RANKS [LAYOUT]: the program under capture with the layout; leaves NAME/ and NAME.err
# (and its trace in NAME.trace/ where $trace is 1; $steps checkpoints, default 1).
write() {
  local d=$PWD/$1
  mkdir -p "$d"
  SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_LAYOUT="$d/ckpt.%r:${3:-$layout}" timeout 60 \
    "$MPIEXEC" -n "$2" env ${trace:+"SLUICE_TRACE_DIR=$PWD/$1.trace"} LD_PRELOAD="$SLUICE_LIB" \
    "$app" write "$d" $shape 64 ${steps:-} 2>"$1.err" ||
    fail "$1: writer job failed: $(tail -3 "$1.err")"
  [ "$(ls -A "$d")" == "ckpt.@r.sluice" ] || fail "$1: expected one container, found: $(ls -A "$d")"
  "$ckpt" verify "$d/ckpt.@r.sluice" >/dev/null || fail "$1: container does not verify"
}

# restart NAME RANKS: reads its blocks back under capture (the layout comes from the container).
restart() {
  SLUICE_CAPTURE="$PWD/$1/ckpt.%r" RUN_TIMEOUT=60 run_dist "$2" \
    "$app" read "$PWD/$1" $shape 64 || fail "$1: restart on $2 ranks read wrong blocks"
  echo "ok: $1: restart on $2 ranks read its blocks"
}

# The array and its HDF5 view equal the function the ranks wrote, element by element.
check_array() {
  "$ckpt" extract --raw "$1.raw" --h5 "$1.h5" "$PWD/$1/ckpt.@r.sluice" || fail "$1: extract of the array failed"
  /usr/bin/python3 - "$1.raw" "$1.h5" <<'EOF' || fail "$1: the array or its HDF5 view differs from what the ranks wrote"
import sys, numpy, h5py
z, y, x = numpy.meshgrid(numpy.arange(20), numpy.arange(18), numpy.arange(16), indexing="ij")
want = ((z * 18 + y) * 16 + x) + 0.25
raw = numpy.fromfile(sys.argv[1], dtype="<f8")
assert raw.size == want.size, (raw.size, want.size)
assert (raw.reshape(want.shape) == want).all(), "raw array"
with h5py.File(sys.argv[2], "r") as f:
    got = f["array"][...]
assert got.shape == want.shape and got.dtype == numpy.float64, (got.shape, got.dtype)
assert (got == want).all(), "h5 view"
EOF
  h5dump -d /array -s "19,17,15" -c "1,1,1" "$1.h5" | grep -q "5759.25" ||
    fail "$1: h5dump does not read the last element (5759.25) through the view"
  echo "ok: $1: raw array, h5py and h5dump equal what the ranks wrote"
}

# CI runs an odd and an even writer and three restarts (each mpiexec costs 1 to 2 s on the
# shared CI cores); LAYOUT_TEST_FULL=1 runs every writer of 1 to 8 ranks and the restarts on
# 1, 2, 3, 4, 6 and 8 ranks of each of them.
if [ "${LAYOUT_TEST_FULL:-0}" == 1 ]; then writers="1 2 3 4 5 6 7 8" restarts="1 2 3 4 6 8"; else writers="3 8" restarts=""; fi
for n in $writers; do
  trace=$([ "$n" != 8 ] || echo 1) write w$n "$n"
  check_array w$n
  [ ! -s w$n.err ] || fail "w$n: the writer printed: $(cat w$n.err)"
  for m in $restarts; do restart w$n "$m"; done
done
# The home encoded the array's index (a row per extent) while the rows moved, not after them
# (commit_index.c): one COMMIT_INDEX, encoded ahead.
index=$("$SLUICE_BIN_DIR/sluice-trace" dump "$PWD/w8.trace" | grep COMMIT_INDEX) || fail "w8: no COMMIT_INDEX in its trace"
[ "$(grep -c . <<<"$index")" == 1 ] && grep -q "encoded ahead=1" <<<"$index" ||
  fail "w8: the index was not encoded ahead: $index"
echo "ok: w8: the index was encoded while the data moved ($index)"
# Three checkpoints by one job (each made durable by fsync): an index encoded ahead for each
# version, in the same processes (buffers kept from one version to the next), and the last
# step's values served.
trace=1 steps=3 write s4 4
index=$("$SLUICE_BIN_DIR/sluice-trace" dump "$PWD/s4.trace" | grep COMMIT_INDEX | grep -c "encoded ahead=1, version=[123] ")
[ "$index" == 3 ] || fail "s4: versions whose index was encoded ahead: $index of 3"
echo "ok: s4: versions 1 to 3 each had their index encoded ahead"
# Blocks that come late are waited for, so that one step is one version of the array, never a
# version of the first blocks alone (plain members, a "does not fit" line, one step split in two):
# ranks 1 and 2 open their members 400 ms after rank 0's fsync asked for a commit (l3, two
# steps), and 2.5 s after rank 0 closed its member without fsync (t3: past the 2 s after which a
# set no rank is writing is committed with what it has).
CKPT_ARRAY_LATE_MS=400 trace=1 steps=2 write l3 3
CKPT_ARRAY_LATE_MS=2500 trace=1 write t3 3
for t in l3:2 t3:1; do
  begins=$("$SLUICE_BIN_DIR/sluice-trace" dump "$PWD/${t%:*}.trace" | grep COMMIT_BEGIN)
  [ "$(grep -c "members=3$" <<<"$begins")" == "${t#*:}" ] && [ "$(grep -c . <<<"$begins")" == "${t#*:}" ] ||
    fail "${t%:*}: expected ${t#*:} versions of 3 members, one a step: $begins"
  [ ! -s "${t%:*}.err" ] || fail "${t%:*}: the writer printed: $(cat "${t%:*}.err")"
  expect_contains "${t%:*}: info shows the array" "array       header=64" "$("$ckpt" info "$PWD/${t%:*}/ckpt.@r.sluice")"
done
echo "ok: l3, t3: blocks 400 ms and 2.5 s late make one version of the array a step"
check_array t3
# With grid=auto, before a version shows which ranks write the array the home waits for the
# whole job's; after it, for those ranks only: 4 ranks of which 3 hold blocks (the fourth serves),
# fsync gathering 4 s, three steps. The first step's fsyncs wait out the bound (a fourth block
# could still come), the next ones do not; one version of 3 members a step, an array of 3 ranks.
CKPT_ARRAY_WRITERS=3 SLUICE_FSYNC_GATHER=4000 trace=1 steps=3 write v4 4
begins=$("$SLUICE_BIN_DIR/sluice-trace" dump "$PWD/v4.trace" | grep COMMIT_BEGIN)
[ "$(grep -c "members=3$" <<<"$begins")" == 3 ] && [ "$(grep -c . <<<"$begins")" == 3 ] ||
  fail "v4: expected 3 versions of 3 members, one a step: $begins"
# The first fsync of the first step waits out the bound; no later step's fsync does.
syncs=$("$SLUICE_BIN_DIR/sluice-trace" dump "$PWD/v4.trace" | awk '/ CKPT_FSYNC /{
  d = $0; sub(/.*dur=/, "", d); sub(/ns.*/, "", d); n[$2]++; k++
  if (n[$2] == 1 && d + 0 > first) first = d + 0
  if (n[$2] > 1 && d + 0 > later) later = d + 0 }
  END { printf "%d fsyncs, the first step'"'"'s longest %.2f s, the later steps'"'"' longest %.2f s", k, first / 1e9, later / 1e9
        exit !(k == 9 && first >= 4e9 && later < 4e9) }') || fail "v4: $syncs (the bound is 4 s)"
expect_contains "v4: info shows an array of the 3 ranks that write it" "grid=3x1x1,order=C,nprocs=3" \
  "$("$ckpt" info "$PWD/v4/ckpt.@r.sluice")"
check_array v4
echo "ok: v4: 3 of 4 ranks write the array: waited for a fourth block at the first step only ($syncs)"
# Every shuffle flow of both traced writers (aggregators that also send themselves pieces) runs
# forward in time: a round's receipt is traced after the batches it holds.
for t in w8:8 s4:4; do
  "$SLUICE_BIN_DIR/sluice-trace" perfetto "${t%:*}.json" "$PWD/${t%:*}.trace" || fail "${t%:*}: perfetto failed"
  /usr/bin/python3 "$SOURCE_DIR/tests/integration/trace/trace_check_perfetto.py" "${t%:*}.json" "${t#*:}" >"${t%:*}.check" ||
    fail "${t%:*}: the trace's flows: $(cat "${t%:*}.check")"
done
echo "ok: w8, s4: every flow of the traces runs forward in time"
check_array s4
restart s4 3
expect_contains "info shows the layout record of the 8-rank writer" \
  "array       header=64,dtype=f8,shape=20x18x16,grid=2x2x2,order=C,nprocs=8" "$("$ckpt" info "$PWD/w8/ckpt.@r.sluice")"
if [ -z "$restarts" ]; then
  restart w8 1
  restart w8 6
fi

# A restart reads a block's rows with few calls (commit_array_read.c): 4 ranks (grid 2x2x1) from
# the 3-rank writer, each block 10x9x16 (90 rows of 128 bytes, 9 adjacent per plane), under
# strace. Its reads of the container (header, index, checksums and the block) stay under 25 per
# rank, none of them one row; one pread per row made 106 per rank.
command -v strace >/dev/null || fail "strace not found (apt-get install strace)"
SLUICE_CAPTURE="$PWD/w3/ckpt.%r" timeout 60 strace -f -qq -e signal=none -e trace=pread64,preadv,read,readv -y \
  -o r4.strace "$MPIEXEC" -n 4 env LD_PRELOAD="$SLUICE_LIB" "$app" read "$PWD/w3" $shape 64 ||
  fail "w3: restart on 4 ranks read wrong blocks"
reads=$(grep -c '\.sluice>' r4.strace || true)
rows=$(grep '\.sluice>' r4.strace | grep -c ', 128, [0-9]*) = 128$' || true)
echo "figure: the 4-rank restart made $reads reads of the container"
expect_eq "reads of one row" 0 "$rows"
[ "$reads" -le 100 ] || fail "the 4-rank restart made $reads reads of the container (at most 100)"

# Per-rank files of a 6-rank decomposition equal what a 6-rank job writes itself.
mkdir -p plain6 ext6
timeout 60 "$MPIEXEC" -n 6 "$app" write "$PWD/plain6" $shape 64 || fail "plain 6-rank writer failed"
"$ckpt" extract --ranks 6 -o "$PWD/ext6" "$PWD/w8/ckpt.@r.sluice" || fail "extract --ranks 6 failed"
for r in 0 1 2 3 4 5; do
  cmp "plain6/ckpt.$r" "ext6/ckpt.$r" || fail "extract --ranks 6: ckpt.$r differs from the 6-rank job's"
done
echo "ok: extract --ranks 6 wrote the 6-rank job's files byte for byte"

# A layout that does not fit: one line, plain members, restart still right.
write bad 4 "header=64,dtype=f8,shape=20x18x15"
expect_eq "one line for the misfit layout" 1 "$(grep -c 'does not fit its layout' bad.err)"
"$ckpt" extract --raw bad.raw "$PWD/bad/ckpt.@r.sluice" 2>bad.extract && fail "a plain container gave an array"
expect_contains "extract says it is not an array" "not a global array" "$(cat bad.extract)"
restart bad 4
