# SPDX-License-Identifier: MIT
# Node-local checkpoint versions of a job that spans nodes (docs/REDUNDANCY.md, "Across nodes"):
# each node's stage folder holds only its own ranks' records, so a version is complete only over
# all nodes, and the ranks agree on it over the job's communicator. On 2 nodes, with
# SLUICE_DRAIN_EVERY=4 SLUICE_KEEP=2, `mpi_ckpt_levels` writes 7 steps (100 ms apart) and waits;
# once every rank recorded version 7 (records counted over the nodes' /dev/shm), every process
# of the job is stopped, then SIGKILLed (the nodes and their /dev/shm stay). Then:
#   A: 3 ranks, 2 on node0 and 1 on node1: the container holds version 4; a restart of 3 ranks on
#      the same places reads step 7 byte for byte, traced: 3 CKPT_LOCAL_READ, no CONTAINER_READ,
#      and CKPT_LEVEL_AGREE; then node0's stage folder is wiped (node0 lost): a restart of 3
#      ranks on node1 reads step 4 (durable) and one line says that version 7 is lost and why;
#      a next job whose set's home (the rank that numbers the versions) runs on node0, which
#      records nothing now, numbers its version 8, after the version 7 node1 records, and a restart reads its
#      step;
#   B: 4 ranks, 2 on each node: the same restart reads step 7 locally; restarted with the nodes
#      swapped (each rank's member on the other node), each read fails with one line naming the
#      member and "staged on another node" (neither the older container version nor a mix is
#      served); then `sluice-ckpt scavenge` (scavenge_both below) makes version 7 durable.
# SLUICE_TEST_ROUNDS (default 1) repeats the whole.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 2
app=$SLUICE_APPS_DIR/mpi_ckpt_levels
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
strace_bin=$SLUICE_BIN_DIR/sluice-trace
rounds=${SLUICE_TEST_ROUNDS:-1}
stage=/dev/shm/sluice-$(id -u)

# records VERSION: node-local records of VERSION over all nodes.
records() {
  local i n=0 c
  for i in 0 1; do
    c=$(tb_exec $i ls "$stage" 2> /dev/null | grep -c -- "-$(printf %020d "$1")-[0-9]*\.rec$" || true)
    n=$((n + c))
  done
  echo $n
}

# kill_app: every process of the app on every node stops, then dies (by pid, from /proc).
signal_app() {
  local i
  for i in 0 1; do
    tb_exec $i sh -c 'for p in /proc/[0-9]*; do [ "$(readlink "$p/exe" 2>/dev/null)" = "$1" ] && kill -"$2" "${p#/proc/}" 2>/dev/null; done; true' \
      sh "$app" "$1"
  done
}

# write_killed NAME N HOSTS: the writer job, killed once every rank recorded version 7.
write_killed() {
  local d=$SHARED/$1 n=$2 hosts=$3 t=0
  mkdir -p "$d"
  tb_mpiexec -hosts "$hosts" -n "$n" env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_DRAIN_EVERY=4 SLUICE_KEEP=2 \
    LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 7 100 > "$1.write.out" 2>&1 &
  local job=$!
  until [ "$(records 7)" = "$n" ]; do
    t=$((t + 1))
    [ $t -lt 300 ] || { kill "$job"; fail "$1: version 7 was never recorded by $n ranks: $(tail -3 "$1.write.out")"; }
    sleep 0.1
  done
  signal_app STOP
  signal_app KILL
  timeout 30 bash -c "while kill -0 $job 2> /dev/null; do sleep 0.05; done" || fail "$1: mpiexec still runs 30 s after its ranks died"
  wait "$job" || true
  "$ckpt" ls "$d/ckpt.@r.sluice" > "$1.ls" 2>&1 || fail "$1: sluice-ckpt ls: $(cat "$1.ls")"
  expect_contains "$1: the container holds the drained version 4" " version 4  level durable" "$(cat "$1.ls")"
}

# restart NAME N HOSTS STEP NMEMBERS: a traced job reads every member as step STEP.
restart() {
  local d=$SHARED/$1
  rm -rf "$SHARED/tr.$1"
  tb_mpiexec -hosts "$3" -n "$2" env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_TRACE_DIR="$SHARED/tr.$1" \
    LD_PRELOAD="$SLUICE_LIB" "$app" verify "$d" "$4" "$5" > "$1.verify.out" 2>&1
}

# local_read NAME N: the restart read N members from node-local storage and none from the container.
local_read() {
  restart "$1" "$2" "$3" 7 "$2" || fail "$1: the restart did not read step 7: $(cat "$1.verify.out")"
  "$strace_bin" dump "$SHARED/tr.$1" > "$1.dump" 2>&1 || fail "$1: sluice-trace dump: $(cat "$1.dump")"
  expect_eq "$1: every member read from node-local storage" "$2" "$(grep -c CKPT_LOCAL_READ "$1.dump" || true)"
  expect_eq "$1: no container read" 0 "$(grep -c CONTAINER_READ "$1.dump" || true)"
  expect_contains "$1: the ranks agreed that version 7 is complete over the nodes" "CKPT_LEVEL_AGREE" \
    "$(grep CKPT_LEVEL_AGREE "$1.dump" | head -1)"
}

# scavenge_both NAME: `sluice-ckpt scavenge` of the killed 4-rank job (docs/REDUNDANCY.md,
# "Scavenge"): on node0 alone (node1 not taking part, as where it is lost) one line per version
# names ranks 2 and 3 missing and nothing is written; one process per node (each copies its
# part, rank 0 finishes) makes version 7 durable with step 7's bytes; a second run does nothing.
scavenge_both() {
  local d=$SHARED/$1 key=$SHARED/$1/ckpt.%r
  if tb_mpiexec -hosts node0 -n 1 "$ckpt" scavenge "$key" > "$1.scav0" 2>&1; then fail "$1: scavenge without node1 succeeded: $(cat "$1.scav0")"; fi
  expect_contains "$1: scavenge without node1: version 7 lacks ranks 2 and 3" \
    "version 7 is incomplete over the surviving nodes: no record of rank 2 ($d/ckpt.2), rank 3 ($d/ckpt.3) of its 4 ranks in the parts of 1 node" "$(cat "$1.scav0")"
  expect_contains "$1: scavenge without node1: nothing written" "the container stays at version 4" "$(cat "$1.scav0")"
  tb_mpiexec -hosts node0,node1 -n 2 -ppn 1 "$ckpt" scavenge "$key" > "$1.scav" 2>&1 || fail "$1: scavenge failed: $(cat "$1.scav")"
  expect_contains "$1: scavenge: version 7 durable from both nodes" \
    "version 7 is durable in $d/ckpt.@r.sluice: 4 members, 4 from node-local storage of 2 nodes" "$(cat "$1.scav")"
  expect_contains "$1: scavenge: ls shows version 7 durable" " version 7  level durable" "$("$ckpt" ls "$d/ckpt.@r.sluice")"
  rm -rf "$1.x"
  "$ckpt" extract -q -o "$1.x" "$d/ckpt.@r.sluice" > /dev/null || fail "$1: extract failed"
  /usr/bin/python3 "$SOURCE_DIR/tests/integration/ckpt/levels_step_bytes.py" "$1.x" 7 4 || fail "$1: the scavenged container does not hold step 7"
  local before
  before=$(stat -c '%i %Y %s' "$d/ckpt.@r.sluice")
  tb_mpiexec -hosts node0,node1 -n 2 -ppn 1 "$ckpt" scavenge "$key" > "$1.scav2" 2>&1 || fail "$1: second scavenge failed: $(cat "$1.scav2")"
  expect_contains "$1: scavenge run twice: nothing to do" "nothing to scavenge" "$(cat "$1.scav2")"
  expect_eq "$1: scavenge run twice: the container untouched" "$before" "$(stat -c '%i %Y %s' "$d/ckpt.@r.sluice")"
}

for round in $(seq "$rounds"); do
  a=r$round.a b=r$round.b
  write_killed "$a" 3 node0:2,node1:1
  local_read "$a" 3 node0:2,node1:1
  # node0 lost (its processes are dead already; its stage folder goes): version 7 is incomplete
  # over the nodes, and a restart on node1 reads the durable step 4, saying so.
  tb_exec 0 rm -rf "$stage"
  restart "$a" 3 node1:3 4 3 || fail "$a: without node0, the restart did not read step 4: $(cat "$a.verify.out")"
  expect_contains "$a: without node0: one line names the lost version" \
    "node-local version 7 is lost (the nodes hold records of 1 of its 3 ranks" "$(cat "$a.verify.out")"
  expect_eq "$a: without node0: one such line" 1 "$(grep -c 'is lost' "$a.verify.out" || true)"
  # The next job, 2 ranks: the set's home (rank FNV-1a(key) % 2, commit_home_of) on node0, which
  # records nothing now, the other rank on node1.
  d=$SHARED/$a
  touch "$d/.release"
  key=$(awk '$1 == "set" { print $2; exit }' "$a.ls")
  home=$(python3 -c 'import sys
h = 14695981039346656037
for b in sys.argv[1].encode():
    h = ((h ^ b) * 1099511628211) % 2**64
print(h % 2)' "$key")
  hosts=node0,node1
  [ "$home" = 0 ] || hosts=node1,node0
  tb_mpiexec -hosts $hosts -n 2 env SLUICE_CAPTURE="$d/ckpt.%r" LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 1 \
    > "$a.next.out" 2>&1 || fail "$a: the next job failed: $(cat "$a.next.out")"
  "$ckpt" ls "$d/ckpt.@r.sluice" > "$a.next.ls" 2>&1 || fail "$a: sluice-ckpt ls: $(cat "$a.next.ls")"
  expect_contains "$a: the next job numbered its version after node1's 7" " version 8  level durable" \
    "$(cat "$a.next.ls")"
  restart "$a" 2 node1:2 1 2 || fail "$a: a restart on node1 did not read the next job's step: $(cat "$a.verify.out")"
  for i in 0 1; do tb_exec $i rm -rf "$stage"; done

  write_killed "$b" 4 node0:2,node1:2
  local_read "$b" 4 node0:2,node1:2
  if restart "$b" 4 node1:2,node0:2 7 4; then fail "$b: a restart with the nodes swapped read step 7"; fi
  mv "$b.verify.out" "$b.swapped.out"
  expect_contains "$b: swapped nodes: a line names the member on the other node" \
    "checkpoint member $SHARED/$b/ckpt.0: its version 7 is staged on another node" "$(cat "$b.swapped.out")"
  expect_eq "$b: swapped nodes: one line per member" 4 "$(grep -c 'staged on another node' "$b.swapped.out" || true)"
  scavenge_both "$b"
  for i in 0 1; do tb_exec $i rm -rf "$stage"; done
  echo "ok: round $round: 3 and 4 ranks on 2 nodes killed after version 7: restarted from node-local storage; node0 lost: durable version served, one line; the next job numbered 8; swapped nodes refused, one line per member; scavenged: node0 alone refused naming ranks 2-3, both nodes version 7 durable, twice safe"
done
