# SPDX-License-Identifier: MIT
# Partner redundancy of node-local versions and the rebuild of a lost node's part at restart
# (docs/REDUNDANCY.md, "Redundancy"). 3 testbed nodes, each with its own /dev/shm; 3 ranks of
# `mpi_ckpt_levels` on node0 (ranks 0, 1) and node1 (rank 2) write 7 steps 300 ms apart (a home
# busier than that can merge two steps into one version: a failure lists both stage folders)
# with SLUICE_REDUNDANCY=partner SLUICE_DRAIN_EVERY=4 SLUICE_KEEP=2 (version 4 durable, 5-7 node-local).
# Once both nodes hold the protection mark of version 7, every process of the job is stopped and
# SIGKILLed, and node0 is lost (its /dev/shm and /tmp wiped). Then:
#   `sluice-ckpt ls` on node1 shows version 7 protected. One byte of node1's copy of node0's
#   part of version 7 is flipped: a restart of 3 ranks on node2 (the spare, ranks 0 and 1) and
#   node1 (rank 2) detects it (one line, "crc32c mismatch"), never uses it, and reads step 6
#   byte for byte, rebuilt from its own copy, with the line naming version 7 lost. The byte is
#   flipped back: the same restart reads step 7 byte for byte; one line says ranks 0,1 were
#   rebuilt from the partner copy on node1. Both restarts' traces: one CKPT_REBUILD (on node2),
#   3 CKPT_LOCAL_READ and no CONTAINER_READ (the file system is not read for any member).
#   Then `sluice-ckpt scavenge` on node1 alone (an epilog on the surviving node) rebuilds
#   node0's ranks 0,1 from node1's copies (one line) and makes version 7 durable: step 7's bytes.
# A second job loses node0 while its part of version 7 streams to node1 (mid_stream, below):
# the half copy is never used; version 6 rebuilds.
# SLUICE_TEST_ROUNDS (default 1) repeats the whole.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 3
app=$SLUICE_APPS_DIR/mpi_ckpt_levels
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
strace_bin=$SLUICE_BIN_DIR/sluice-trace
rounds=${SLUICE_TEST_ROUNDS:-1}
stage=/dev/shm/sluice-$(id -u)

# Each testbed exec costs about 1.7 s on a loaded 2-core machine: the per-node calls below run
# in parallel, and waits loop inside the node.

# wait_mark NODE VERSION: until NODE holds the protection mark of VERSION (at most 30 s).
wait_mark() {
  tb_exec "$1" sh -c 'i=0; until ls "$1" 2> /dev/null | grep -q "^rp-.*-$2\.rec$"; do
    i=$((i + 1)); [ $i -lt 600 ] || exit 1; sleep 0.05; done' sh "$stage" "$(printf %020d "$2")"
}

# signal_app SIG: every process of the app on nodes 0 and 1 gets SIG (by pid, from /proc).
signal_app() {
  local i pids=()
  for i in 0 1; do
    tb_exec $i sh -c 'for p in /proc/[0-9]*; do [ "$(readlink "$p/exe" 2>/dev/null)" = "$1" ] && kill -"$2" "${p#/proc/}" 2>/dev/null; done; true' \
      sh "$app" "$1" &
    pids+=($!)
  done
  wait "${pids[@]}"
}

# write_protected NAME: the writer job, killed once version 7 is protected; node0 then lost.
write_protected() {
  local d=$SHARED/$1 t=0
  mkdir -p "$d"
  tb_mpiexec -hosts node0:2,node1:1 -n 3 env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_DRAIN_EVERY=4 SLUICE_KEEP=2 \
    SLUICE_REDUNDANCY=partner LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 7 300 > "$1.write.out" 2>&1 &
  local job=$!
  wait_mark 0 7 && wait_mark 1 7 || {
    kill "$job"
    fail "$1: version 7 was never protected on both nodes: $(tail -3 "$1.write.out"); node0: $(tb_exec 0 ls "$stage" | tr '\n' ' '); node1: $(tb_exec 1 ls "$stage" | tr '\n' ' ')"
  }
  signal_app STOP
  signal_app KILL
  timeout 30 bash -c "while kill -0 $job 2> /dev/null; do sleep 0.05; done" || fail "$1: mpiexec still runs 30 s after its ranks died"
  wait "$job" || true
  "$ckpt" ls "$d/ckpt.@r.sluice" > "$1.ls" 2>&1 || fail "$1: sluice-ckpt ls: $(cat "$1.ls")"
  expect_contains "$1: the container holds the drained version 4" " version 4  level durable" "$(cat "$1.ls")"
  # node1: the listing, and the name of its copy of node0's part of version 7; node0 lost.
  tb_exec 1 sh -c "'$ckpt' ls --stage '$stage' '$d/ckpt.@r.sluice' && ls $stage/rc-*-$(printf %020d 7)-*.red" \
    > "$1.ls1" 2>&1 || fail "$1: sluice-ckpt ls on node1: $(cat "$1.ls1")"
  expect_contains "$1: node1 lists version 7 as protected" "version 7  level protected" "$(cat "$1.ls1")"
  tb_exec 0 sh -c "rm -rf '$stage' /tmp/* /dev/shm/*"
}

# restart NAME STEP [REBUILDS]: 3 ranks on the spare node2 (ranks 0, 1) and node1 (rank 2) read
# step STEP; REBUILDS (default 1; "any": not counted) parts are rebuilt.
restart() {
  local d=$SHARED/$1
  rm -rf "$SHARED/tr.$1"
  tb_mpiexec -hosts node2:2,node1:1 -n 3 env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_TRACE_DIR="$SHARED/tr.$1" \
    LD_PRELOAD="$SLUICE_LIB" "$app" verify "$d" "$2" 3 > "$1.verify.out" 2>&1 ||
    fail "$1: the restart without node0 did not read step $2: $(cat "$1.verify.out")"
  "$strace_bin" dump "$SHARED/tr.$1" > "$1.dump" 2>&1 || fail "$1: sluice-trace dump: $(cat "$1.dump")"
  expect_eq "$1: every member read from node-local storage" 3 "$(grep -c CKPT_LOCAL_READ "$1.dump" || true)"
  expect_eq "$1: no container read" 0 "$(grep -c CONTAINER_READ "$1.dump" || true)"
  [ "${3:-1}" = any ] || expect_eq "$1: parts rebuilt" "${3:-1}" "$(grep -c CKPT_REBUILD "$1.dump" || true)"
}

clean() {
  local i pids=()
  for i in 0 1 2; do
    tb_exec $i rm -rf "$stage" &
    pids+=($!)
  done
  wait "${pids[@]}"
}

flip() { # flip FILE: one byte in the middle of FILE (rank 1's 3 MiB member in node0's part) flipped
  tb_exec 1 python3 -c 'import os, sys
f = sys.argv[1]
with open(f, "r+b") as h:
    h.seek(os.path.getsize(f) // 2); c = h.read(1); h.seek(-1, 1); h.write(bytes([c[0] ^ 0x40]))' "$1"
}

# scavenge_survivor NAME: `sluice-ckpt scavenge` on node1 alone (node0 lost, the spare not
# asked) rebuilds node0's ranks 0,1 from node1's partner copies and makes version 7 durable (one
# line says what was rebuilt from where); the container then holds step 7's bytes.
scavenge_survivor() {
  local d=$SHARED/$1
  tb_exec 1 "$ckpt" scavenge --stage "$stage" "$d/ckpt.%r" > "$1.scav" 2>&1 ||
    fail "$1: scavenge on node1 alone failed: $(cat "$1.scav")"
  cat "$1.scav"
  expect_eq "$1: one line says what was rebuilt from where" 1 \
    "$(grep -c 'rebuilt ranks 0,1 (the part of lost node [0-9a-f]*) of versions 7, 6, [0-9]* bytes, from the partner copies in the part of .*-0$' "$1.scav" || true)"
  expect_contains "$1: version 7 made durable" "version 7 is durable in $d/ckpt.@r.sluice: 3 members, 3 from node-local storage of 1 node" "$(cat "$1.scav")"
  expect_contains "$1: ls shows version 7 durable" " version 7  level durable" "$("$ckpt" ls "$d/ckpt.@r.sluice")"
  rm -rf "$1.x"
  "$ckpt" extract -q -o "$1.x" "$d/ckpt.@r.sluice" > /dev/null || fail "$1: extract of the scavenged container failed"
  /usr/bin/python3 "$SOURCE_DIR/tests/integration/ckpt/levels_step_bytes.py" "$1.x" 7 3 ||
    fail "$1: the scavenged container does not hold step 7"
  expect_eq "$1: no scavenge folder left" "" "$(ls -A "$d" | grep scavenge || true)"
}

# mid_stream NAME: node0 is lost while its part of version 7 streams to node1. node0 shapes its
# own link to 2 Mbit/s the moment it holds version 6's protection mark (steps 1.5 s apart: with
# steps 400 ms apart version 7 was protected before the link was shaped), so that rank 1's 3 MiB
# member of step 7 takes seconds to stream; 2 s into that stream every process of the job is
# killed and node0 lost. node1 holds no whole copy (a half one keeps its temporary name) and no
# mark of version 7; the restart rebuilds the previous protected
# version 6 and reads step 6 byte for byte, with the line naming version 7 lost; a scavenge on
# node1 alone names version 7 incomplete and makes version 6 durable from its copies.
mid_stream() {
  local d=$SHARED/$1 v6 v7
  v6=$(printf %020d 6) v7=$(printf %020d 7)
  mkdir -p "$d"
  tb_exec 0 sh -c 'i=0; until ls "$1" 2> /dev/null | grep -q "^rp-.*-$2\.rec$"; do
    i=$((i + 1)); [ $i -lt 1500 ] || exit 1; sleep 0.02; done
    tc qdisc replace dev eth0 root tbf rate 2mbit burst 32kb latency 10s' sh "$stage" "$v6" > "$1.shape.out" 2>&1 &
  local shaper=$!
  tb_mpiexec -hosts node0:2,node1:1 -n 3 env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_DRAIN_EVERY=4 SLUICE_KEEP=2 \
    SLUICE_REDUNDANCY=partner LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 7 1500 > "$1.write.out" 2>&1 &
  local job=$!
  wait "$shaper" || { kill "$job"; fail "$1: version 6 was never protected on node0: $(tail -3 "$1.write.out")"; }
  # Its stream starts once both of node0's ranks recorded version 7 and takes about 13 s at
  # 2 Mbit/s; node1 writes a piece only once it is whole, and the pieces in flight move together,
  # so the copy's temporary file may not exist yet when the job is killed 2 s into it.
  tb_exec 0 sh -c 'i=0; until [ "$(ls "$1" | grep -c "^lv-.*-$2-[01]\.rec$")" = 2 ]; do
    i=$((i + 1)); [ $i -lt 600 ] || exit 1; sleep 0.05; done; sleep 2' sh "$stage" "$v7" ||
    { kill "$job"; fail "$1: node0 never recorded version 7: $(tail -3 "$1.write.out")"; }
  signal_app STOP
  signal_app KILL
  timeout 30 bash -c "while kill -0 $job 2> /dev/null; do sleep 0.05; done" || fail "$1: mpiexec still runs 30 s after its ranks died"
  wait "$job" || true
  tb_exec 0 sh -c "tc qdisc del dev eth0 root; rm -rf '$stage' /tmp/* /dev/shm/*"
  tb_exec 1 ls "$stage" > "$1.ls1"
  expect_eq "$1: no whole copy of version 7" 0 "$(grep -c "^rc-.*-$v7-.*\.red$" "$1.ls1" || true)"
  expect_eq "$1: no protection mark of version 7" 0 "$(grep -c "^rp-.*-$v7\.rec$" "$1.ls1" || true)"
  expect_eq "$1: version 6 protected" 1 "$(grep -c "^rp-.*-$v6\.rec$" "$1.ls1" || true)"
  restart "$1" 6 any
  expect_contains "$1: version 7 is lost" "node-local version 7 is lost" "$(cat "$1.verify.out")"
  expect_contains "$1: the previous protected version rebuilt" "version 6: rebuilt ranks 0,1" "$(cat "$1.verify.out")"
  tb_exec 1 "$ckpt" scavenge --stage "$stage" "$d/ckpt.%r" > "$1.scav" 2>&1 || fail "$1: scavenge on node1: $(cat "$1.scav")"
  cat "$1.scav"
  expect_contains "$1: scavenge: version 7 incomplete (its half copy is not used)" "version 7 is incomplete over the surviving nodes: no record of rank 0" "$(cat "$1.scav")"
  expect_contains "$1: scavenge: version 6 durable" "version 6 is durable in $d/ckpt.@r.sluice" "$(cat "$1.scav")"
  rm -rf "$1.x"
  "$ckpt" extract -q -o "$1.x" "$d/ckpt.@r.sluice" > /dev/null || fail "$1: extract failed"
  /usr/bin/python3 "$SOURCE_DIR/tests/integration/ckpt/levels_step_bytes.py" "$1.x" 6 3 || fail "$1: the container does not hold step 6"
}

for round in $(seq "$rounds"); do
  a=r$round.a
  write_protected "$a"
  copy=$(grep "/rc-.*\.red$" "$a.ls1" || true)
  [ -n "$copy" ] || fail "$a: node1 holds no copy of node0's part of version 7"
  flip "$copy"
  restart "$a" 6
  mv "$a.verify.out" "$a.corrupt.out"
  expect_contains "$a: the corrupt copy is named and not used" "version 7: the partner copy of ranks 0,1" \
    "$(cat "$a.corrupt.out")"
  expect_contains "$a: by its checksum" "crc32c mismatch" "$(cat "$a.corrupt.out")"
  expect_contains "$a: version 7 is lost, version 6 served" "node-local version 7 is lost" "$(cat "$a.corrupt.out")"
  expect_contains "$a: version 6 rebuilt" "version 6: rebuilt ranks 0,1" "$(cat "$a.corrupt.out")"
  # The copy repaired (the same byte flipped back): node2 now holds version 6's rebuilt part,
  # and version 7's ranks 0,1 are still missing; the next restart rebuilds them.
  flip "$copy"
  restart "$a" 7
  expect_contains "$a: one line names what was rebuilt from where" \
    "version 7: rebuilt ranks 0,1 (the part of lost node" "$(cat "$a.verify.out")"
  expect_eq "$a: one rebuild line" 1 "$(grep -c 'rebuilt ranks' "$a.verify.out" || true)"
  scavenge_survivor "$a"
  clean
  mid_stream r$round.b
  clean
  echo "ok: round $round: node0 lost after version 7 was protected: a flipped byte in node1's copy detected, step 6 rebuilt and served; the copy repaired, ranks 0,1 of step 7 rebuilt on the spare and read without the file system"
done
