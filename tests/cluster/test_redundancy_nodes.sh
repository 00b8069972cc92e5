# SPDX-License-Identifier: MIT
# Partner redundancy of node-local versions and the rebuild of a lost node's part at restart
# (docs/REDUNDANCY.md, "Redundancy"). 3 testbed nodes, each with its own /dev/shm; 3 ranks of
# `mpi_ckpt_levels` on node0 (ranks 0, 1) and node1 (rank 2) write 7 steps with
# SLUICE_REDUNDANCY=partner SLUICE_DRAIN_EVERY=4 SLUICE_KEEP=2 (version 4 durable, 5-7 node-local).
# Once both nodes hold the protection mark of version 7, every process of the job is stopped and
# SIGKILLed, and node0 is lost (its /dev/shm and /tmp wiped). Then:
#   A: `sluice-ckpt ls` on node1 shows version 7 protected; a restart of 3 ranks on node2 (the
#      spare, ranks 0 and 1) and node1 (rank 2) reads step 7 byte for byte: one line says ranks
#      0,1 were rebuilt from the partner copy on node1, the trace has CKPT_REBUILD on node2,
#      3 CKPT_LOCAL_READ and no CONTAINER_READ (the file system is not read for any member);
#   B: the same, but one byte of node1's copy of node0's part of version 7 is flipped first: the
#      rebuild detects it (one line, "crc32c mismatch"), never uses it, and the restart reads
#      step 6, rebuilt from its own copy, with the line naming version 7 lost.
# SLUICE_TEST_ROUNDS (default 1) repeats the whole.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 3
app=$SLUICE_APPS_DIR/mpi_ckpt_levels
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
strace_bin=$SLUICE_BIN_DIR/sluice-trace
rounds=${SLUICE_TEST_ROUNDS:-1}
stage=/dev/shm/sluice-$(id -u)

# marks VERSION: nodes 0 and 1 that hold the protection mark of VERSION.
marks() {
  local i n=0 c
  for i in 0 1; do
    c=$(tb_exec $i ls "$stage" 2> /dev/null | grep -c -- "^rp-.*-$(printf %020d "$1")\.rec$" || true)
    n=$((n + c))
  done
  echo $n
}

signal_app() {
  local i
  for i in 0 1; do
    tb_exec $i sh -c 'for p in /proc/[0-9]*; do [ "$(readlink "$p/exe" 2>/dev/null)" = "$1" ] && kill -"$2" "${p#/proc/}" 2>/dev/null; done; true' \
      sh "$app" "$1"
  done
}

# write_protected NAME: the writer job, killed once version 7 is protected; node0 then lost.
write_protected() {
  local d=$SHARED/$1 t=0
  mkdir -p "$d"
  tb_mpiexec -hosts node0:2,node1:1 -n 3 env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_DRAIN_EVERY=4 SLUICE_KEEP=2 \
    SLUICE_REDUNDANCY=partner LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 7 100 > "$1.write.out" 2>&1 &
  local job=$!
  until [ "$(marks 7)" = 2 ]; do
    t=$((t + 1))
    [ $t -lt 300 ] || { kill "$job"; fail "$1: version 7 was never protected on both nodes: $(tail -3 "$1.write.out")"; }
    sleep 0.1
  done
  signal_app STOP
  signal_app KILL
  timeout 30 bash -c "while kill -0 $job 2> /dev/null; do sleep 0.05; done" || fail "$1: mpiexec still runs 30 s after its ranks died"
  wait "$job" || true
  "$ckpt" ls "$d/ckpt.@r.sluice" > "$1.ls" 2>&1 || fail "$1: sluice-ckpt ls: $(cat "$1.ls")"
  expect_contains "$1: the container holds the drained version 4" " version 4  level durable" "$(cat "$1.ls")"
  tb_exec 1 "$ckpt" ls --stage "$stage" "$d/ckpt.@r.sluice" > "$1.ls1" 2>&1 || fail "$1: sluice-ckpt ls on node1: $(cat "$1.ls1")"
  expect_contains "$1: node1 lists version 7 as protected" "version 7  level protected" "$(cat "$1.ls1")"
  tb_exec 0 sh -c "rm -rf '$stage' /tmp/* /dev/shm/*"
}

# restart NAME STEP: 3 ranks on the spare node2 (ranks 0, 1) and node1 (rank 2) read step STEP.
restart() {
  local d=$SHARED/$1
  rm -rf "$SHARED/tr.$1"
  tb_mpiexec -hosts node2:2,node1:1 -n 3 env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_TRACE_DIR="$SHARED/tr.$1" \
    LD_PRELOAD="$SLUICE_LIB" "$app" verify "$d" "$2" 3 > "$1.verify.out" 2>&1 ||
    fail "$1: the restart without node0 did not read step $2: $(cat "$1.verify.out")"
  "$strace_bin" dump "$SHARED/tr.$1" > "$1.dump" 2>&1 || fail "$1: sluice-trace dump: $(cat "$1.dump")"
  expect_eq "$1: every member read from node-local storage" 3 "$(grep -c CKPT_LOCAL_READ "$1.dump" || true)"
  expect_eq "$1: no container read" 0 "$(grep -c CONTAINER_READ "$1.dump" || true)"
  expect_eq "$1: one part rebuilt" 1 "$(grep -c CKPT_REBUILD "$1.dump" || true)"
}

clean() {
  local i
  for i in 0 1 2; do tb_exec $i rm -rf "$stage"; done
}

for round in $(seq "$rounds"); do
  a=r$round.a b=r$round.b
  write_protected "$a"
  restart "$a" 7
  expect_contains "$a: one line names what was rebuilt from where" \
    "version 7: rebuilt ranks 0,1 (the part of lost node" "$(cat "$a.verify.out")"
  expect_eq "$a: one rebuild line" 1 "$(grep -c 'rebuilt ranks' "$a.verify.out" || true)"
  clean

  write_protected "$b"
  copy=$(tb_exec 1 sh -c "ls $stage/rc-*-$(printf %020d 7)-*.red")
  [ -n "$copy" ] || fail "$b: node1 holds no copy of node0's part of version 7"
  # One byte in the middle of the copy (rank 1's 3 MiB member) flipped.
  tb_exec 1 python3 -c 'import os, sys
f = sys.argv[1]
with open(f, "r+b") as h:
    h.seek(os.path.getsize(f) // 2); c = h.read(1); h.seek(-1, 1); h.write(bytes([c[0] ^ 0x40]))' "$copy"
  restart "$b" 6
  expect_contains "$b: the corrupt copy is named and not used" "version 7: the partner copy of ranks 0,1" \
    "$(cat "$b.verify.out")"
  expect_contains "$b: by its checksum" "crc32c mismatch" "$(cat "$b.verify.out")"
  expect_contains "$b: version 7 is lost, version 6 served" "node-local version 7 is lost" "$(cat "$b.verify.out")"
  expect_contains "$b: version 6 rebuilt" "version 6: rebuilt ranks 0,1" "$(cat "$b.verify.out")"
  clean
  echo "ok: round $round: node0 lost after version 7 was protected: ranks 0,1 rebuilt on the spare from node1's partner copy, step 7 read without the file system; a flipped byte in the copy detected, step 6 served"
done
