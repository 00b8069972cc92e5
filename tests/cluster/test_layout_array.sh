# SPDX-License-Identifier: MIT
# SLUICE_LAYOUT across nodes (docs/LAYOUT.md, docs/CLUSTER_TESTBED.md): a program of the first
# seed's shape (a 24x20x36 array of doubles, block-decomposed over MPI_Dims_create's grid, a
# header of 64 bytes + the block in ckpt.<rank>) writes under capture with the layout on 6 ranks
# over 3 nodes (2 each; grid 3x2x1, so every rank's rows interleave with the others' in the
# array). The commit's two-phase writer gathers the rows on one aggregator per node: the trace
# shows the processes that wrote the container, at most one per node (here one on each: the
# array is cut into 3 domains), none of them written in a 64 KiB stripe by two, and one message
# per (writer, aggregator, round) carrying all the writer's rows of it. Restarts on
# 2 nodes (4 ranks, grid 2x2x1) and on 1 node (5 ranks, grid 5x1x1) read exactly their blocks of
# the new decomposition (the program checks every value and the header).
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 3
app=$SLUICE_APPS_DIR/mpi_ckpt_array
d=$SHARED/run
mkdir -p "$d"
export SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_STRIPING_UNIT=64K SLUICE_CB_BUFFER_SIZE=128K

tb_mpiexec -hosts node0:2,node1:2,node2:2 -n 6 env SLUICE_TRACE_DIR="$SHARED/trace" LD_PRELOAD="$SLUICE_LIB" \
  SLUICE_LAYOUT="$d/ckpt.%r:header=64,dtype=f8,shape=24x20x36" "$app" write "$d" 24 20 36 64 > writer.out 2>&1 ||
  fail "the writer job failed: $(tail -5 writer.out)"
[ ! -s writer.out ] || fail "the writer job printed: $(head -5 writer.out)"
expect_eq "one container" "ckpt.@r.sluice" "$(ls -A "$d")"
"$SLUICE_BIN_DIR/sluice-ckpt" verify "$d/ckpt.@r.sluice" > /dev/null || fail "the container does not verify"
head -c 8192 "$d/ckpt.@r.sluice" | grep -aq 'shape=24x20x36,grid=3x2x1,' ||
  fail "the container's header has no layout record of the 3x2x1 grid: the members were stored plain"

# The writers of the container, by node (ranks 0-1 on node0, 2-3 on node1, 4-5 on node2).
"$SLUICE_BIN_DIR/sluice-trace" dump "$SHARED/trace" > trace.dump || fail "trace unreadable"
writes=$(grep ' COMMIT_FS_WRITE ' trace.dump | sed -E 's/^rank ([0-9]+) .*offset=([0-9]+), bytes=([0-9]+),.*/\1 \2 \3/')
writers=$(awk '{print $1}' <<< "$writes" | sort -un | tr '\n' ' ')
per_node=$(for r in $writers; do echo $((r / 2)); done | sort | uniq -c | awk '$1 > 1 {print "node" $2 ": " $1}')
expect_eq "nodes with more than one process writing the container" "" "$per_node"
expect_eq "nodes with a writer of the container" "0 1 2" "$(for r in $writers; do echo $((r / 2)); done | sort -u | tr '\n' ' ' | sed 's/ $//')"
array_bytes=$((24 * 20 * 36 * 8))
total=$(awk '{s += $3} END {print s + 0}' <<< "$writes")
[ "$total" -ge "$array_bytes" ] || fail "the container's writes hold $total bytes, less than the $array_bytes of the array"
shared_stripes=$(awk '$3 > 0 { for (s = int($2 / 65536); s <= int(($2 + $3 - 1) / 65536); s++) print s, $1 }' <<< "$writes" | sort -u \
  | awk '{ n[$1]++ } END { for (s in n) if (n[s] > 1) print s }')
expect_eq "stripes written by two processes" "" "$shared_stripes"
echo "ok: the container was written by ranks $writers($total bytes), one per node"
# The rows a writer sends one aggregator in one round travel as one message (ROMIO's packing):
# here every domain is one round (at most 2 stripes of 64 KiB, rounds of 128 KiB), so exactly
# one message per (writer, aggregator), not one per row (80 rows per rank, 26 or 27 of them
# per domain).
pairs=$(grep ' COMMIT_SHUFFLE ' trace.dump | sed -E 's/^rank ([0-9]+) .*to rank=([0-9]+),.*/\1>\2/' | sort | uniq -c |
  awk '$1 != 1 {print $2 ": " $1}' | tr '\n' ' ')
expect_eq "(writer, aggregator) pairs with other than one message" "" "$pairs"
msgs=$(grep -c ' COMMIT_SHUFFLE ' trace.dump)
[ "$msgs" -ge 6 ] && [ "$msgs" -le 18 ] || fail "$msgs messages from 6 writers to 3 aggregators (6 to 18 expected)"

# Restarts on other node and rank counts: each rank checks every value of its new block.
restart() {
  local label=$1
  shift
  tb_mpiexec "$@" env LD_PRELOAD="$SLUICE_LIB" "$app" read "$d" 24 20 36 64 > "read.$label" 2>&1 ||
    fail "restart on $label: $(head -5 "read.$label")"
  echo "ok: restart on $label read exactly its blocks"
}
restart "2-nodes-4-ranks" -hosts node1:2,node2:2 -n 4
restart "1-node-5-ranks" -hosts node0:5 -n 5
