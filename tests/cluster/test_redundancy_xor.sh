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
#   node1 is left out too (and the spare's rebuilt part wiped): two nodes of the set. A restart
#   on node3 (ranks 0-2) and node2 says so in one line and reads the durable step 4.
#   `sluice-ckpt scavenge` on the survivors node1 and node2 (scavenge_survivors below): with one
#   byte of node1's parity of version 7 flipped, the parity is named and not used, version 7 is
#   incomplete and version 6, rebuilt from the XOR parity, is made durable (step 6's bytes); the
#   byte flipped back, ranks 0,1 of version 7 are rebuilt from the parity (one line) and version
#   7 is made durable (step 7's bytes); a second run does nothing.
# A second job loses node0 while its part of version 7 is XOR-encoded (mid_encode, below): the
# half-encoded parity is never used; a restart on the 2 survivors rebuilds version 6 onto node1.
# SLUICE_TEST_ROUNDS (default 1) repeats the whole.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 4
app=$SLUICE_APPS_DIR/mpi_ckpt_levels
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
strace_bin=$SLUICE_BIN_DIR/sluice-trace
rounds=${SLUICE_TEST_ROUNDS:-1}
stage=/dev/shm/sluice-$(id -u)
v7=$(printf %020d 7)

v6=$(printf %020d 6)

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

# write_job NAME PAUSE: the writer job on node0 (ranks 0, 1), node1 and node2, in the background
# ($job), into $d.
write_job() {
  mkdir -p "$d"
  tb_mpiexec -hosts node0:2,node1:1,node2:1 -n 4 env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_DRAIN_EVERY=4 \
    SLUICE_KEEP=2 SLUICE_REDUNDANCY=xor LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 7 "$2" > "$1.write.out" 2>&1 &
  job=$!
}

# kill_job NAME: every process of the job stopped, then killed; mpiexec reaped.
kill_job() {
  signal_app STOP
  signal_app KILL
  timeout 30 bash -c "while kill -0 $job 2> /dev/null; do sleep 0.05; done" || fail "$1: mpiexec still runs 30 s after its ranks died"
  wait "$job" || true
}

# flip FILE: one byte of node1's parity file FILE flipped, a third into the file (its parity bytes).
flip() {
  tb_exec 1 python3 -c 'import os, sys
f = sys.argv[1]
with open(f, "r+b") as h:
    h.seek(os.path.getsize(f) // 3); c = h.read(1); h.seek(-1, 1); h.write(bytes([c[0] ^ 0x40]))' "$1"
}

# scavenge NAME STATUS: `sluice-ckpt scavenge` of $d on the survivors node1 and node2 (one
# process each), its lines in NAME.scav; STATUS 0 or 1 expected.
scavenge() {
  local rc=0
  tb_mpiexec -hosts node1,node2 -n 2 -ppn 1 "$ckpt" scavenge --stage "$stage" "$d/ckpt.%r" > "$1.scav" 2>&1 || rc=$?
  cat "$1.scav"
  expect_eq "$1: scavenge's exit status" "$2" "$rc"
}

# holds_step NAME STEP: the container, extracted, holds step STEP's bytes of the 4 ranks.
holds_step() {
  rm -rf "$1.x"
  "$ckpt" extract -q -o "$1.x" "$d/ckpt.@r.sluice" > /dev/null || fail "$1: extract of the scavenged container failed"
  /usr/bin/python3 "$SOURCE_DIR/tests/integration/ckpt/levels_step_bytes.py" "$1.x" "$2" 4 ||
    fail "$1: the scavenged container does not hold step $2"
}

# scavenge_survivors NAME PARITY: node0 lost, the scavenge on node1 and node2 rebuilds its ranks
# 0,1 from the XOR parity; first with a flipped byte in node1's parity of version 7 (PARITY).
scavenge_survivors() {
  local a=$1 from='from the XOR parity of its set of 3 nodes in the parts of node1-0, node2-1'
  flip "$2"
  scavenge "$a.corrupt" 0
  expect_eq "$a: the corrupt parity is named by its checksum, not used" 1 \
    "$(grep -c "version 7: ranks 0,1 (the part of lost node [0-9a-f]*) are not rebuilt from .*: in the part of node1-0: crc32c mismatch in block [0-9]* of rx-.*-$v7\.xor$" "$a.corrupt.scav" || true)"
  expect_contains "$a: version 7 stays incomplete" "version 7 is incomplete over the surviving nodes: no record of rank 0" "$(cat "$a.corrupt.scav")"
  expect_eq "$a: version 6 rebuilt from the parity" 1 \
    "$(grep -c "rebuilt ranks 0,1 (the part of lost node [0-9a-f]*) of version 6, [0-9]* bytes, $from$" "$a.corrupt.scav" || true)"
  expect_contains "$a: the older version 6 made durable" "version 6 is durable in $d/ckpt.@r.sluice: 4 members, 4 from node-local storage of 2 nodes" "$(cat "$a.corrupt.scav")"
  holds_step "$a.corrupt" 6
  flip "$2"
  scavenge "$a" 0
  expect_eq "$a: one line says what was rebuilt from where" 1 \
    "$(grep -c "rebuilt ranks 0,1 (the part of lost node [0-9a-f]*) of version 7, [0-9]* bytes, $from$" "$a.scav" || true)"
  expect_contains "$a: version 7 made durable" "version 7 is durable in $d/ckpt.@r.sluice: 4 members, 4 from node-local storage of 2 nodes" "$(cat "$a.scav")"
  expect_contains "$a: ls shows version 7 durable" " version 7  level durable" "$("$ckpt" ls "$d/ckpt.@r.sluice")"
  holds_step "$a" 7
  expect_eq "$a: no scavenge folder left" "" "$(ls -A "$d" | grep scavenge || true)"
  scavenge "$a.again" 0
  expect_contains "$a: a second run does nothing" "nothing to scavenge" "$(cat "$a.again.scav")"
  expect_contains "$a: the container stays at version 7" " version 7  level durable" "$("$ckpt" ls "$d/ckpt.@r.sluice")"
}

# mid_encode NAME: node0 is lost while its part of version 7 is XOR-encoded. node0 shapes its
# own link to 1 Mbit/s the moment it holds version 6's protection mark (steps 1.5 s apart: with
# steps 500 ms apart node1's parity of version 7 was sealed before the link was shaped), so that
# its part of version 7 (rank 1's 3 MiB member) takes seconds to reach node1's and node2's
# parities; 2 s into that stream every process of the job is killed and node0 lost. No node
# holds a mark or a sealed parity of version 7; a
# restart of the 4 ranks on the 2 survivors (node1: ranks 0-2, node2: rank 3) rebuilds version 6
# onto node1 from the parity and reads step 6 byte for byte without the file system, with the
# line naming version 7 lost; a scavenge names version 7 incomplete and makes version 6 durable.
mid_encode() {
  local a=$1 i
  d=$SHARED/$a
  tb_exec 0 sh -c 'i=0; until ls "$1" 2> /dev/null | grep -q "^rp-.*-$2\.rec$"; do
    i=$((i + 1)); [ $i -lt 1500 ] || exit 1; sleep 0.02; done
    tc qdisc replace dev eth0 root tbf rate 1mbit burst 32kb latency 20s' sh "$stage" "$v6" > "$a.shape.out" 2>&1 &
  local shaper=$!
  write_job "$a" 1500 # the link shaped before version 7: at 500 ms its encoding could win
  wait "$shaper" || { kill "$job"; fail "$a: version 6 was never protected on node0: $(tail -3 "$a.write.out")"; }
  # node0's part of version 7 starts once both its ranks recorded it and takes about 25 s at
  # 1 Mbit/s; a parity holder XORs a piece only once it is whole, and the pieces in flight move
  # together, so the job is killed 2 s into the stream.
  tb_exec 0 sh -c 'i=0; until [ "$(ls "$1" | grep -c "^lv-.*-$2-[01]\.rec$")" = 2 ]; do
    i=$((i + 1)); [ $i -lt 600 ] || exit 1; sleep 0.05; done; sleep 2' sh "$stage" "$v7" ||
    { kill "$job"; fail "$a: node0 never recorded version 7: $(tail -3 "$a.write.out")"; }
  kill_job "$a"
  tb_exec 0 sh -c "tc qdisc del dev eth0 root; rm -rf '$stage' /tmp/* /dev/shm/*"
  tb_exec 1 ls "$stage" > "$a.ls1" &
  tb_exec 2 ls "$stage" > "$a.ls2"
  wait $!
  # Neither parity of version 7 can be sealed without node0's share, which the link holds back
  # (each keeps its temporary name); the promise is the mark's absence.
  for i in 1 2; do
    expect_eq "$a: node$i holds no sealed parity of version 7" 0 "$(grep -c "^rx-.*-$v7\.xor$" "$a.ls$i" || true)"
    expect_eq "$a: node$i holds no protection mark of version 7" 0 "$(grep -c "^rp-.*-$v7\.rec$" "$a.ls$i" || true)"
    expect_eq "$a: node$i holds version 6's mark" 1 "$(grep -c "^rp-.*-$v6\.rec$" "$a.ls$i" || true)"
  done
  restart "$a" 6 node1:3,node2:1
  expect_contains "$a: version 7 is lost" "node-local version 7 is lost" "$(cat "$a.verify.out")"
  expect_contains "$a: the previous protected version rebuilt onto node1" \
    "version 6: rebuilt ranks 0,1 (the part of lost node" "$(cat "$a.verify.out")"
  expect_contains "$a: from the XOR parity" "from the XOR parity of its set of 3 nodes" "$(cat "$a.verify.out")"
  expect_eq "$a: every member read from node-local storage" 4 "$(grep -c CKPT_LOCAL_READ "$a.dump" || true)"
  expect_eq "$a: no container read" 0 "$(grep -c CONTAINER_READ "$a.dump" || true)"
  scavenge "$a" 0
  expect_contains "$a: scavenge: version 7 incomplete (its half parity is not used)" \
    "version 7 is incomplete over the surviving nodes: no record of rank 0" "$(cat "$a.scav")"
  expect_contains "$a: scavenge: version 6 durable" "version 6 is durable in $d/ckpt.@r.sluice" "$(cat "$a.scav")"
  holds_step "$a" 6
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
  write_job "$a" 300
  wait_marks 7 || {
    kill "$job"
    fail "$a: version 7 was never protected on the 3 nodes: $(tail -3 "$a.write.out"); node0: $(tb_exec 0 ls "$stage" | tr '\n' ' ')"
  }
  kill_job "$a"
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

  # node1 left out of the restart (its stage folder stays for the scavenge): two nodes of the set.
  wipe 3
  restart "$a.two" 4 node3:3,node2:1
  expect_eq "$a: one line says two nodes of the set are lost" 1 \
    "$(grep -c 'of one XOR set of 3 nodes are both lost' "$a.two.verify.out" || true)"
  expect_contains "$a: the durable version is served" "reads serve version 4" "$(cat "$a.two.verify.out")"
  expect_eq "$a: nothing rebuilt" 0 "$(grep -c CKPT_REBUILD "$a.two.dump" || true)"

  scavenge_survivors "$a" "$(grep "/rx-.*\.xor$" "$a.ls1")"
  wipe 1 2 3
  mid_encode "r$round.mid"
  wipe 1 2
  echo "ok: round $round: node0 lost after version 7 was XOR-protected: ranks 0,1 rebuilt on the spare from the parity and read without the file system; node1 left out too: one line, step 4 served; scavenge on the survivors: a flipped parity byte named, step 6 made durable, then step 7 rebuilt from the parity and made durable; node0 lost mid-encode: step 6 rebuilt onto a survivor"
done
