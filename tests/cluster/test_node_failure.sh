# SPDX-License-Identifier: MIT
# A node fails in the middle of a commit (docs/FAULTS.md, docs/COMMIT.md): 6 ranks on 3 nodes
# (ranks 0 and 3 on node0, 1 and 4 on node1, 2 and 5 on node2) write 3 steps with capture on,
# steps fsynced; rank 2's member is 48 MiB (a long commit). Once step 2 is durable and step 3's
# commit is under way (its temporary container file appears), every process of node2 dies at
# once (as `testbed.sh crash` does: its /dev/shm, and the members staged there, go with it). Then:
#   - the job ends, bounded (within 30 s of the crash; the time is printed);
#   - the container verifies and every member holds step 2, read by a job on the other nodes;
#   - `sluice-ckpt recover` on node0 and on node1 commits the step-3 members staged there: after
#     it the members of the surviving nodes' ranks hold step 3 and node2's ranks' step 2 (member
#     0 is empty at every step), the container verifies, no temporary file is left.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 3
app=$SLUICE_APPS_DIR/ckpt_commit_steps
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
d=$SHARED/run
mkdir -p "$d"
export SLUICE_CAPTURE="$d/ckpt.%r"
tb_mpiexec -n 6 env LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 3 --fsync --big 2 > job.out 2>&1 &
job=$!
# The crash: as soon as step 2 is durable (all 6 barrier markers) and a temporary container is
# there, node2's PID 1 gets SIGKILL (what `testbed.sh crash node2` does), within a millisecond.
python3 - "$d" "$TB_DIR/node2.pid" << 'PYEOF' || { kill "$job"; fail "step 3's commit never started: $(tail -3 job.out)"; }
import os, signal, sys, time
d, pidfile = sys.argv[1], sys.argv[2]
end = time.time() + 120
while time.time() < end:
    names = os.listdir(d)
    if sum(n.startswith(".bar.step2.") for n in names) == 6 and any(".sluice.tmp." in n for n in names):
        os.kill(int(open(pidfile).read().split()[0]), signal.SIGKILL)
        sys.exit(0)
    time.sleep(0.0005)
sys.exit(1)
PYEOF
t0=$(date +%s.%N)
timeout 30 bash -c "while kill -0 $job 2> /dev/null; do sleep 0.05; done" || fail "the job still runs 30 s after node2 crashed"
set +e
wait "$job"
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "the job ended with 0 after losing a node"
echo "ok: the job ended $(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5) s after node2 crashed (exit $rc; its last line: $(grep -v '^sluice.*warning' job.out | tail -1))"

[ -n "$(ls -A "$d" | grep '^\.ckpt\.@r\.sluice\.tmp\.' || true)" ] || fail "step 3's commit was no longer in flight at the crash"
"$ckpt" verify "$d/ckpt.@r.sluice" > verify.out || fail "container damaged: $(cat verify.out)"
# verify_step STEP: a job on node0 and node1 reads all 6 members as step STEP; prints the
# members that differ.
verify_step() {
  tb_mpiexec -hosts node0,node1 -n 2 env LD_PRELOAD="$SLUICE_LIB" "$app" verify "$d" "$1" 6 --big 2 2>&1 \
    | grep -o 'ckpt\.[0-9]*:' | sort -u | tr -d ':' | tr '\n' ' ' || true
}
expect_eq "after the crash every member holds step 2" "" "$(verify_step 2)"

for i in 0 1; do
  tb_exec $i "$ckpt" recover --stage /dev/shm/sluice-0 > "recover.$i" 2>&1 || fail "recover on node$i: $(cat "recover.$i")"
  expect_contains "recover on node$i" "recovered version" "$(cat "recover.$i")"
done
"$ckpt" verify "$d/ckpt.@r.sluice" > /dev/null || fail "recovered container does not verify"
expect_eq "after recover on node0 and node1: members not at step 3 (node2's ranks)" "ckpt.2 ckpt.5 " "$(verify_step 3)"
expect_eq "after recover: members not at step 2 (the surviving ranks', 0 is empty)" "ckpt.1 ckpt.3 ckpt.4 " "$(verify_step 2)"
expect_eq "no temporary file left" "" "$(ls -A "$d" | grep 'sluice\.tmp' || true)"

# A cut link (docs/CLUSTER.md, "When a node fails"): 4 ranks on node0 and node1 (ranks 0 and 2
# on node0, 1 and 3 on node1) commit step after step with SLUICE_NODE_TIMEOUT=2; once step 1 is
# durable, node1's link goes down. mpiexec alone would wait for node1's proxy for ever; sluice's
# node leaders stop hearing each other, node0's says so in one line naming node1 and its ranks
# and aborts the job, and node1's ranks, cut off, end themselves 2 s later.
# SLUICE_TEST_ROUNDS=N runs N rounds (default 1).
for ((round = 1; round <= ${SLUICE_TEST_ROUNDS:-1}; round++)); do
  c=$SHARED/cut$round
  mkdir -p "$c"
  SLUICE_CAPTURE="$c/ckpt.%r" SLUICE_NODE_TIMEOUT=2 tb_mpiexec -hosts node0,node1 -n 4 \
    env LD_PRELOAD="$SLUICE_LIB" "$app" write "$c" 200 --fsync > cut.out 2>&1 &
  job=$!
  timeout 60 bash -c "until [ \$(ls -A '$c' | grep -c '^\.bar\.step1\.') -eq 4 ]; do sleep 0.01; done" \
    || { kill "$job"; fail "round $round: step 1 never became durable: $(tail -3 cut.out)"; }
  "$TESTBED" link --dir "$TB_DIR" node1 down
  t0=$(date +%s.%N)
  timeout 20 bash -c "while kill -0 $job 2> /dev/null; do sleep 0.05; done" \
    || { "$TESTBED" link --dir "$TB_DIR" node1 up; fail "round $round: the job still runs 20 s after node1's link was cut: $(tail -3 cut.out)"; }
  took=$(echo "$(date +%s.%N) - $t0" | bc)
  set +e
  wait "$job"
  rc=$?
  set -e
  [ "$rc" -ne 0 ] || fail "round $round: the job ended with 0 after losing node1"
  lines=$(grep -c ' lost: ' cut.out || true)
  expect_eq "round $round: lines saying a node was lost" 1 "$lines"
  expect_contains "round $round: the line" "node node1 (ranks 1,3) lost: nothing heard from it for 2." "$(grep ' lost: ' cut.out)"
  # node1's ranks, cut off, end by themselves (their leader: 2 s after it saw node0 lost).
  timeout 10 bash -c "while '$TESTBED' exec --dir '$TB_DIR' 1 pgrep -f 'ckpt_commit_steps write' > /dev/null; do sleep 0.1; done" \
    || fail "round $round: node1's ranks still run 10 s after the job ended"
  "$TESTBED" link --dir "$TB_DIR" node1 up
  echo "ok: round $round: the job ended $(echo "$took" | cut -c1-4) s after node1's link was cut (exit $rc): $(grep ' lost: ' cut.out)"
done
