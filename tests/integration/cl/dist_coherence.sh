# SPDX-License-Identifier: MIT
# Distributed OpenCL, buffer coherence: tests/apps/cl_dist_coherence.c (an ordinary program)
# writes a buffer (read-write; the kernel declares it const) through the queue of device 1, then
# runs kernels that read it on devices 2 and 3, then reads it back through device 1's queue. Under `mpiexec -n 4` with one device per rank, the buffer must move from rank
# 1 to rank 2 and to rank 3 directly (rank to rank, never through rank 0, which never held it).
# The traces show it: MPI_SEND/MPI_RECV of the buffer's bytes with the peer rank, on the serving
# ranks only. The results are those of a single process with four local devices.
export POCL_MAX_PTHREAD_COUNT=1
bytes=1200000 # 300000 ints

POCL_DEVICES="pthread pthread pthread pthread" "$SLUICE_APPS_DIR/cl_dist_coherence" >local.out 2>&1
POCL_DEVICES=pthread rc_of mpirun 4 env SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/tr" \
  LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_dist_coherence" >dist.out 2>&1
expect_eq "exit code on 4 ranks" 0 "$rc"
diff local.out dist.out >diff.out || fail "output differs from four local devices: $(cat diff.out)"
expect_contains "both readers right" "device 3: status=0 wrong=0" "$(cat dist.out)"
echo "ok: results identical to four local devices"

"$SLUICE_BIN_DIR/sluice-trace" dump tr >dump.txt
moves=$(grep -E 'MPI_(SEND|RECV) peer rank=' dump.txt | grep "bytes=$bytes," || true)
echo "$moves" | sed 's/^/  /'
expect_contains "rank 1 sends the buffer to rank 2" "rank 1 " "$(echo "$moves" | grep 'MPI_SEND peer rank=2,')"
expect_contains "rank 2 receives it from rank 1" "rank 2 " "$(echo "$moves" | grep 'MPI_RECV peer rank=1,')"
# Rank 3 gets it from a serving rank that holds a valid copy (1 or 2: the directory picks the
# holder that has sent the fewest bytes, here rank 2).
expect_contains "rank 3 receives it from a serving rank" "rank 3 " "$(echo "$moves" | grep -E 'MPI_RECV peer rank=[12],')"
expect_eq "rank 0 neither sends nor receives the buffer's data" 0 "$(echo "$moves" | grep -c '^rank 0 ' || true)"
expect_eq "exactly two rank-to-rank moves" 2 "$(echo "$moves" | grep -c 'MPI_RECV' || true)"
# The kernels only read it (const, known from the kernel argument qualifiers), so rank 1's copy
# stays valid and the final read on rank 1 moves nothing.
expect_eq "nothing moves back to rank 1" 0 "$(grep -cE '^rank 1 .*MPI_RECV' dump.txt || true)"
expect_contains "input unchanged" "input unchanged: 1" "$(cat dist.out)"
# The device side of each move is traced on the receiving rank (CL_TRANSFER device to device).
expect_eq "device-to-device transfers on the readers" 2 \
  "$(grep -E '^rank [23] .*CL_TRANSFER.*=2, bytes='"$bytes" dump.txt | wc -l)"

# Fill on rank 1, copy half of it on rank 2 after a cross-rank wait list, marker, read back on
# rank 0's device: only the half the copy reads (one 1 MiB chunk) moves from rank 1 to rank 2.
POCL_DEVICES="pthread pthread pthread" "$SLUICE_APPS_DIR/cl_dist_copy_fill" >copy_local.out 2>&1
POCL_DEVICES=pthread mpirun 3 env SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/tr_copy" \
  LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/cl_dist_copy_fill" >copy_dist.out 2>&1
diff copy_local.out copy_dist.out >diff.out || fail "copy/fill output differs from three local devices: $(cat diff.out)"
expect_contains "copy and fill right" "wrong=0" "$(cat copy_dist.out)"
"$SLUICE_BIN_DIR/sluice-trace" dump tr_copy >dump_copy.txt
expect_eq "the copied half moves rank 1 -> rank 2, one chunk" 1 \
  "$(grep -cE '^rank 2 .*MPI_RECV peer rank=1, bytes=1048576,' dump_copy.txt || true)"
expect_eq "nothing else moves between serving ranks" 1 "$(grep -cE '^rank [12] .*MPI_RECV peer rank=[12],' dump_copy.txt || true)"
