# SPDX-License-Identifier: MIT
# A node's link is cut in the middle of a commit (docs/CLUSTER.md, "When a node fails"); a node
# whose processes all die (a crash) is cluster.node_kill.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 2
app=$SLUICE_APPS_DIR/ckpt_commit_steps
# A cut link (docs/CLUSTER.md, "When a node fails"): 4 ranks on node0 and node1 (ranks 0 and 2
# on node0, 1 and 3 on node1) commit step after step with SLUICE_NODE_TIMEOUT=2; once step 1 is
# durable, node1's link goes down. mpiexec alone would wait for node1's proxy for ever; sluice's
# node leaders stop hearing each other, node0's says so in one line naming node1 and its ranks
# and aborts the job, and node1's ranks, cut off, end themselves 2 s later.
# SLUICE_TEST_ROUNDS=N runs N rounds (default 1). The last round runs under
# `sluice --watch-nodes`: sluice's abort ends the job, so its watchers name no rank's death.
rounds=${SLUICE_TEST_ROUNDS:-1}
for ((round = 1; round <= rounds + 1; round++)); do
  wrap=()
  [ "$round" -le "$rounds" ] || wrap=("$SLUICE_BIN_DIR/sluice" --watch-nodes)
  c=$SHARED/cut$round
  mkdir -p "$c"
  (cd "$SHARED" && SLUICE_CAPTURE="$c/ckpt.%r" SLUICE_NODE_TIMEOUT=2 "$TESTBED" run --dir "$TB_DIR" ${wrap[@]+"${wrap[@]}"} \
    mpiexec -hosts node0,node1 -n 4 env LD_PRELOAD="$SLUICE_LIB" "$app" write "$c" 200 --fsync) > cut.out 2>&1 &
  job=$!
  timeout 60 bash -c "until [ \$(ls -A '$c' | grep -c '^\.bar\.step1\.') -eq 4 ]; do sleep 0.01; done" \
    || { kill "$job"; fail "round $round: step 1 never became durable: $(tail -3 cut.out)"; }
  "$TESTBED" link --dir "$TB_DIR" node1 down
  job_end "$job" 20 \
    || { "$TESTBED" link --dir "$TB_DIR" node1 up; fail "round $round: the job still runs 20 s after node1's link was cut: $(tail -3 cut.out)"; }
  rc=$JOB_RC took=$JOB_TOOK
  [ "$rc" -ne 0 ] || fail "round $round: the job ended with 0 after losing node1"
  lines=$(grep -c ' lost: ' cut.out || true)
  expect_eq "round $round: lines saying a node was lost" 1 "$lines"
  expect_contains "round $round: the line" "node node1 (ranks 1,3) lost: nothing heard from it for 2." "$(grep ' lost: ' cut.out)"
  expect_eq "round $round: lines naming a rank's death" 0 "$(grep -c 'ended before MPI_Finalize' cut.out || true)"
  # node1's ranks, cut off, end by themselves (their leader: 2 s after it saw node0 lost).
  timeout 10 bash -c "while '$TESTBED' exec --dir '$TB_DIR' 1 pgrep -f 'ckpt_commit_steps write' > /dev/null; do sleep 0.1; done" \
    || fail "round $round: node1's ranks still run 10 s after the job ended"
  "$TESTBED" link --dir "$TB_DIR" node1 up
  echo "ok: round $round${wrap[*]:+ (under sluice --watch-nodes)}: the job ended $(echo "$took" | cut -c1-4) s after node1's link was cut (exit $rc): $(grep ' lost: ' cut.out)"
done
