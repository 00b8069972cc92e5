# SPDX-License-Identifier: MIT
# Distributed OpenCL across nodes, cross-memory attach (SLUICE_DIST_CMA, docs/ENV.md): 3 ranks,
# ranks 0 and 1 on node0, rank 2 on node1. cl_dist_pieces writes and reads back buffers of odd
# sizes (1 byte to 3 MiB + 5) on one rank's device and checks every byte; it must print what it
# prints on a local device, on either device. On rank 1's device (rank 0's node) every transfer
# is a copy rank 1 makes from or to rank 0's memory (as many CL_DIST_CMA events as rank 0's
# CL_DIST_DATA records to rank 1); on rank 2's device (another node) rank 2's probe of rank 0's
# memory fails, so it never copies (no CL_DIST_CMA, no failed command) and every transfer goes
# by MPI, as with SLUICE_DIST_CMA=off (the run times of both are printed: no failed attempt
# costs time; measured 2.70 s and 2.78 s with a warm PoCL cache). On one host (every rank on rank 0's node) rank 2 would copy too: the test fails there.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 2
export POCL_MAX_PTHREAD_COUNT=1 POCL_DEVICES=pthread
app=$SLUICE_APPS_DIR/cl_dist_pieces
timeout 60 "$app" > local.out 2>&1 || fail "cl_dist_pieces on the local device: $(head -3 local.out)"
expect_eq "sizes checked locally" 14 "$(grep -c ': ok, checksum' local.out)"

# on_device LABEL RANK [VAR=VALUE...]: cl_dist_pieces on 3 ranks (node0, node0, node1) using
# only rank RANK's device, traced in tr.LABEL; prints its run time.
on_device() {
  local label=$1 rank=$2 rc=0 t0 t1
  shift 2
  t0=$(date +%s.%N)
  set +e
  tb_mpiexec -hosts node0:2,node1:1 -n 3 env SLUICE_OPENCL=distributed "SLUICE_DEVICES=SELECT ALL WHERE node = $rank" \
    SLUICE_TRACE_DIR="$SHARED/tr.$label" POCL_CACHE_DIR="$SHARED/pocl" "$@" LD_PRELOAD="$SLUICE_LIB" "$app" \
    > "$label.out" 2> "$label.err"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  expect_eq "$label: exit code" 0 "$rc"
  diff local.out "$label.out" > diff.out || fail "$label differs from the local run: $(head -8 diff.out) $(head -3 "$label.err")"
  [ ! -s "$label.err" ] || fail "$label: stderr not empty: $(head -5 "$label.err")"
  "$SLUICE_BIN_DIR/sluice-trace" dump "$SHARED/tr.$label" > "$label.dump" || fail "$label: trace unreadable"
  echo "ok: $label prints what the local run prints ($(echo "$t1 - $t0" | bc | cut -c1-5) s)"
}

on_device same-node 1
data=$(grep -cE '^rank 0 .*CL_DIST_DATA peer rank=1, ' same-node.dump || true)
[ "$data" -gt 10 ] || fail "same node: only $data transfers to rank 1"
expect_eq "same node: every transfer to rank 1 is a copy by rank 1 (CMA)" "$data" \
  "$(grep -cE '^rank 1 .*CL_DIST_CMA ' same-node.dump || true)"

on_device other-node 2
data=$(grep -cE '^rank 0 .*CL_DIST_DATA peer rank=2, ' other-node.dump || true)
[ "$data" -gt 10 ] || fail "other node: only $data transfers to rank 2"
expect_eq "other node: rank 2 copies nothing by CMA" 0 "$(grep -cE '^rank 2 .*CL_DIST_CMA ' other-node.dump || true)"
expect_eq "other node: rank 1 (no device used) copies nothing" 0 "$(grep -cE '^rank 1 .*CL_DIST_CMA ' other-node.dump || true)"
echo "ok: other node: all $data transfers to rank 2 went by MPI"

# The same on rank 2's device with CMA off: the same transfers, by MPI.
on_device other-node-off 2 SLUICE_DIST_CMA=off
expect_eq "other node, CMA off: the same transfers" "$data" \
  "$(grep -cE '^rank 0 .*CL_DIST_DATA peer rank=2, ' other-node-off.dump || true)"
hosts=$("$SLUICE_BIN_DIR/sluice-trace" summary "$SHARED/tr.other-node" \
  | awk '/^== Processes ==/ {p = 1; next} /^==/ {p = 0} p && $1 ~ /^[0-9]+$/ {print $1 "@" $7}' | sort -u | tr '\n' ' ')
expect_eq "the trace names each rank's node (and its PoCL children's)" "0@node0 1@node0 2@node1 " "$hosts"
