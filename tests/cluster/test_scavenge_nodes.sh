# SPDX-License-Identifier: MIT
# `sluice-ckpt scavenge` across nodes (docs/REDUNDANCY.md, "Scavenge"): on 2 testbed nodes, each
# with its own /dev/shm, 3 ranks (2 on node0, 1 on node1) of mpi_ckpt_levels write 7 steps
# with SLUICE_DRAIN_EVERY=4 SLUICE_KEEP=2 and are killed once every rank recorded version 7 (the
# end of an allocation right after its last checkpoint): the container holds version 4. Then
#   `mpiexec -hosts node0,node1 -ppn 1 sluice-ckpt scavenge KEY` (one process per node: each
#   copies its node's part, rank 0 finishes) makes version 7 durable: `ls` says so and the
#   members extracted are step 7's bytes; run again, nothing to do, the container untouched;
#   the same killed job with node1's stage folder wiped (node1 lost) and scavenge on node0 alone:
#   one line per version names rank 2 and its member missing, nothing is written (exit 1), the
#   container stays at version 4.
# SLUICE_TEST_ROUNDS (default 1) repeats the whole.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 2
app=$SLUICE_APPS_DIR/mpi_ckpt_levels
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
rounds=${SLUICE_TEST_ROUNDS:-1}
stage=/dev/shm/sluice-$(id -u)

records() {
  local i n=0 c
  for i in 0 1; do
    c=$(tb_exec $i ls "$stage" 2> /dev/null | grep -c -- "-$(printf %020d "$1")-[0-9]*\.rec$" || true)
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

# write_killed NAME: 3 ranks on node0:2,node1:1, killed once every rank recorded version 7.
write_killed() {
  local d=$SHARED/$1 t=0
  for i in 0 1; do tb_exec $i rm -rf "$stage"; done
  mkdir -p "$d"
  tb_mpiexec -hosts node0:2,node1:1 -n 3 env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_DRAIN_EVERY=4 SLUICE_KEEP=2 \
    LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 7 100 > "$1.write.out" 2>&1 &
  local job=$!
  until [ "$(records 7)" = 3 ]; do
    t=$((t + 1))
    [ $t -lt 300 ] || { kill "$job"; fail "$1: version 7 was never recorded by 3 ranks: $(tail -3 "$1.write.out")"; }
    sleep 0.1
  done
  signal_app STOP
  signal_app KILL
  timeout 30 bash -c "while kill -0 $job 2> /dev/null; do sleep 0.05; done" || fail "$1: mpiexec still runs 30 s after its ranks died"
  wait "$job" || true
  expect_contains "$1: the container holds the drained version 4" " version 4  level durable" "$("$ckpt" ls "$d/ckpt.@r.sluice")"
}

for round in $(seq "$rounds"); do
  a=r$round.a b=r$round.b
  write_killed "$a"
  key=$SHARED/$a/ckpt.%r
  tb_mpiexec -hosts node0,node1 -n 2 -ppn 1 "$ckpt" scavenge "$key" > "$a.scav" 2>&1 || fail "$a: scavenge failed: $(cat "$a.scav")"
  cat "$a.scav"
  expect_contains "$a: version 7 durable from both nodes" "version 7 is durable in $SHARED/$a/ckpt.@r.sluice: 3 members, 3 from node-local storage of 2 nodes" "$(cat "$a.scav")"
  expect_contains "$a: ls shows version 7 durable" " version 7  level durable" "$("$ckpt" ls "$SHARED/$a/ckpt.@r.sluice")"
  rm -rf "$a.x"
  "$ckpt" extract -q -o "$a.x" "$SHARED/$a/ckpt.@r.sluice" > /dev/null || fail "$a: extract failed"
  /usr/bin/python3 - "$a.x" 7 3 <<'PYEOF' || fail "$a: the scavenged container does not hold step 7"
import os, sys
d, step, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sizes = [0, 1, (3 << 20) + 12345, 777777, 4096, 65537]
base = bytes((31 * k) & 255 for k in range(512))
shift = [bytes((x + s) & 255 for x in range(256)) for s in range(256)]
files = {os.path.basename(f): os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs}
for rank in range(n):
    size = sizes[(rank + step) % 6]
    # byte i = i*31 + rank*17 + step*101 + i/512 (mod 256): 512-byte blocks of one pattern, shifted
    c = rank * 17 + step * 101
    want = b"".join(base.translate(shift[(c + j) & 255]) for j in range(size // 512 + 1))[:size]
    assert open(files["ckpt.%d" % rank], "rb").read() == want, "ckpt.%d is not step %d's" % (rank, step)
PYEOF
  before=$(stat -c '%i %Y %s' "$SHARED/$a/ckpt.@r.sluice")
  tb_mpiexec -hosts node0,node1 -n 2 -ppn 1 "$ckpt" scavenge "$key" > "$a.scav2" 2>&1 || fail "$a: second scavenge failed: $(cat "$a.scav2")"
  expect_contains "$a: run twice, nothing to do" "nothing to scavenge" "$(cat "$a.scav2")"
  expect_eq "$a: the container untouched" "$before" "$(stat -c '%i %Y %s' "$SHARED/$a/ckpt.@r.sluice")"

  write_killed "$b"
  tb_exec 1 rm -rf "$stage"
  key=$SHARED/$b/ckpt.%r
  if tb_mpiexec -hosts node0 -n 1 "$ckpt" scavenge "$key" > "$b.scav" 2>&1; then fail "$b: scavenge without node1 succeeded: $(cat "$b.scav")"; fi
  cat "$b.scav"
  expect_contains "$b: version 7 lacks rank 2" "version 7 is incomplete over the surviving nodes: no record of rank 2 ($SHARED/$b/ckpt.2) of its 3 ranks in the parts of 1 node" "$(cat "$b.scav")"
  expect_contains "$b: nothing written" "the container stays at version 4" "$(cat "$b.scav")"
  expect_contains "$b: the container still at version 4" " version 4  level durable" "$("$ckpt" ls "$SHARED/$b/ckpt.@r.sluice")"
  for i in 0 1; do tb_exec $i rm -rf "$stage"; done
  echo "ok: round $round: killed after version 7 on 2 nodes: scavenged from both (ls durable, step 7's bytes), twice safe; node1 lost: rank 2 named, container kept at 4"
done
