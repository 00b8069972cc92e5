# SPDX-License-Identifier: MIT
# XOR parity of node-local versions and the rebuild of a lost node's part at restart
# (docs/REDUNDANCY.md, "XOR parity"). 4 testbed nodes, each with its own /dev/shm; 4 ranks of
# `mpi_ckpt_levels` on node0 (ranks 0, 1), node1 (rank 2) and node2 (rank 3), one XOR set of 3
# nodes (SLUICE_REDUNDANCY_SET default 8 > 3), write 7 steps 300 ms apart with
# SLUICE_REDUNDANCY=xor SLUICE_DRAIN_EVERY=4 SLUICE_KEEP=2 (version 4 durable, 5-7 node-local).
# Once the three nodes hold the protection mark of version 7, every process of the job is stopped
# and SIGKILLed, and node0 is lost (its /dev/shm and /tmp wiped). Then:
#   each survivor holds one parity file of version 7 and `sluice-ckpt ls` on node1 shows it
#   protected; a restart of 4 ranks on node3 (the spare: ranks 0, 1), node1 and node2 reads step
#   7 byte for byte; one line says ranks 0,1 were rebuilt from the XOR parity; its trace has one
#   CKPT_REBUILD, 4 CKPT_LOCAL_READ and no CONTAINER_READ (the file system is not read).
#   node1 is lost too (and the spare's rebuilt part): two nodes of the set. A restart on node3
#   (ranks 0-2) and node2 says so in one line and reads the durable step 4.
# SLUICE_TEST_ROUNDS (default 1) repeats the whole.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 4
app=$SLUICE_APPS_DIR/mpi_ckpt_levels
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
strace_bin=$SLUICE_BIN_DIR/sluice-trace
rounds=${SLUICE_TEST_ROUNDS:-1}
stage=/dev/shm/sluice-$(id -u)
v7=$(printf %020d 7)

# wait_marks VERSION: until nodes 0-2 hold the protection mark of VERSION (at most 30 s each).
wait_marks() {
  local i pids=() rc=0
  for i in 0 1 2; do
    tb_exec "$i" sh -c 'i=0; until ls "$1" 2> /dev/null | grep -q "^rp-.*-$2\.rec$"; do
      i=$((i + 1)); [ $i -lt 600 ] || exit 1; sleep 0.05; done' sh "$stage" "$(printf %020d "$1")" &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || rc=1; done
  return $rc
}

# signal_app SIG: every process of the app on nodes 0-2 gets SIG (by pid, from /proc).
signal_app() {
  local i pids=()
  for i in 0 1 2; do
    tb_exec $i sh -c 'for p in /proc/[0-9]*; do [ "$(readlink "$p/exe" 2>/dev/null)" = "$1" ] && kill -"$2" "${p#/proc/}" 2>/dev/null; done; true' \
      sh "$app" "$1" &
    pids+=($!)
  done
  wait "${pids[@]}"
}

# wipe NODE...: the nodes' /dev/shm and /tmp wiped (the node is lost).
wipe() {
  local i pids=()
  for i in "$@"; do
    tb_exec "$i" sh -c "rm -rf '$stage' /tmp/* /dev/shm/*" &
    pids+=($!)
  done
  wait "${pids[@]}"
}

# restart NAME STEP HOSTS: 4 ranks on HOSTS read step STEP of the job's files ($d); the trace
# dumped into NAME.dump.
restart() {
  rm -rf "$SHARED/tr.$1"
  tb_mpiexec -hosts "$3" -n 4 env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_TRACE_DIR="$SHARED/tr.$1" \
    LD_PRELOAD="$SLUICE_LIB" "$app" verify "$d" "$2" 4 > "$1.verify.out" 2>&1 ||
    fail "$1: the restart on $3 did not read step $2: $(cat "$1.verify.out")"
  "$strace_bin" dump "$SHARED/tr.$1" > "$1.dump" 2>&1 || fail "$1: sluice-trace dump: $(cat "$1.dump")"
}

for round in $(seq "$rounds"); do
  a=r$round.xor
  d=$SHARED/$a
  mkdir -p "$d"
  tb_mpiexec -hosts node0:2,node1:1,node2:1 -n 4 env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_DRAIN_EVERY=4 \
    SLUICE_KEEP=2 SLUICE_REDUNDANCY=xor LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 7 300 > "$a.write.out" 2>&1 &
  job=$!
  wait_marks 7 || {
    kill "$job"
    fail "$a: version 7 was never protected on the 3 nodes: $(tail -3 "$a.write.out"); node0: $(tb_exec 0 ls "$stage" | tr '\n' ' ')"
  }
  signal_app STOP
  signal_app KILL
  timeout 30 bash -c "while kill -0 $job 2> /dev/null; do sleep 0.05; done" || fail "$a: mpiexec still runs 30 s after its ranks died"
  wait "$job" || true
  "$ckpt" ls "$d/ckpt.@r.sluice" > "$a.ls" 2>&1 || fail "$a: sluice-ckpt ls: $(cat "$a.ls")"
  expect_contains "$a: the container holds the drained version 4" " version 4  level durable" "$(cat "$a.ls")"
  tb_exec 1 sh -c "'$ckpt' ls --stage '$stage' '$d/ckpt.@r.sluice'; ls $stage/rx-*-$v7.xor" > "$a.ls1" 2>&1 ||
    fail "$a: node1 holds no XOR parity of version 7: $(cat "$a.ls1")"
  expect_contains "$a: node1 lists version 7 as protected" "version 7  level protected" "$(cat "$a.ls1")"
  wipe 0

  restart "$a.one" 7 node3:2,node1:1,node2:1
  expect_contains "$a: one line names what was rebuilt from where" \
    "version 7: rebuilt ranks 0,1 (the part of lost node" "$(cat "$a.one.verify.out")"
  expect_contains "$a: from the XOR parity" "from the XOR parity of its set of 3 nodes" "$(cat "$a.one.verify.out")"
  expect_eq "$a: one rebuild line" 1 "$(grep -c 'rebuilt ranks' "$a.one.verify.out" || true)"
  expect_eq "$a: every member read from node-local storage" 4 "$(grep -c CKPT_LOCAL_READ "$a.one.dump" || true)"
  expect_eq "$a: no container read" 0 "$(grep -c CONTAINER_READ "$a.one.dump" || true)"
  expect_eq "$a: one part rebuilt" 1 "$(grep -c CKPT_REBUILD "$a.one.dump" || true)"

  wipe 1 3
  restart "$a.two" 4 node3:3,node2:1
  expect_eq "$a: one line says two nodes of the set are lost" 1 \
    "$(grep -c 'of one XOR set of 3 nodes are both lost' "$a.two.verify.out" || true)"
  expect_contains "$a: the durable version is served" "reads serve version 4" "$(cat "$a.two.verify.out")"
  expect_eq "$a: nothing rebuilt" 0 "$(grep -c CKPT_REBUILD "$a.two.dump" || true)"
  wipe 2 3
  echo "ok: round $round: node0 lost after version 7 was XOR-protected: ranks 0,1 rebuilt on the spare from the parity and read without the file system; node1 lost too: one line, step 4 served"
done
