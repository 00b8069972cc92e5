# SPDX-License-Identifier: MIT
# Every process of one node is SIGKILLed at a random moment of a commit (docs/CLUSTER.md, "When
# a node fails"). Under MPICH's hydra the job ends within milliseconds and no rank lives to name
# the node: `sluice --watch-nodes` around mpiexec does. Each round: 6 ranks on 3 nodes (node i
# holds ranks i and i+3) commit step after step (members fsynced, capture on; rank 1's member 48 MiB, a long commit) through
# `sluice --watch-nodes mpiexec`; once step 1 is durable and a commit is under way (a temporary
# container appears), after a random delay of 0-300 ms, a random node crashes (`testbed.sh
# crash`). Then:
#   - one line names the node and its ranks; the job ends within 10 s (the times are printed)
#     with mpiexec's status (not 0; 255 mostly), unchanged by the wrapper;
#   - the container verifies and reads back, on a surviving node, as the last durable version V
#     (the last step whose markers were all there at the crash, or the next one if its commit
#     finished just then);
#   - `sluice-ckpt recover` on each surviving node works (the container verifies, no temporary
#     file is left), and a job on the surviving nodes, restarting, reads every member as V or
#     V+1 (the survivors' staged step, recovered), the crashed node's ranks' as V.
# The crashed node is revived for the next round. SLUICE_TEST_ROUNDS=N runs N rounds (default 2).
# Then a rank killed alone (the second of its node, then a leader): one line names it, its pid and
# its node. Last, a job that ends well through the wrapper: status 0, no line, no watcher left.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 3
app=$SLUICE_APPS_DIR/ckpt_commit_steps
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
# not_at DIR STEP [NODE...]: the members of DIR's set that do not hold step STEP, read by a job
# with sluice on NODE... (a restart), or else as files in $reader's /tmp/x (holds extracts them).
not_at() {
  local d=$1 step=$2 out
  shift 2
  if [ $# -gt 0 ]; then
    out=$(tb_mpiexec -hosts "$(echo "$@" | tr " " ,)" -n $# env LD_PRELOAD="$SLUICE_LIB" SLUICE_CAPTURE="$d/ckpt.%r" "$app" verify "$d" "$step" 6 --big 1 2>&1 || true)
  else
    out=$(tb_exec "$reader" "$app" verify /tmp/x "$step" 6 --big 1 2>&1 || true)
  fi
  ! echo "$out" | grep -v 'warning: unknown variable' | grep -q -e 'ckpt_commit_steps:' -e 'sluice' -e 'sluice-ckpt' \
    || fail "round $round: reading $d at step $step failed: $(echo "$out" | tail -3)"
  echo "$out" | grep -o 'ckpt\.[0-9]*:' | sort -u | tr -d ':' | tr '\n' ' ' || true
}

# holds DIR LO HI [NODE...]: "ckpt.M:S " for every member M and step S in LO..HI that M holds,
# read by a restart job on NODE..., or else by sluice-ckpt extract on $reader.
holds() {
  local d=$1 lo=$2 hi=$3 s m bad
  shift 3
  [ $# -gt 0 ] || tb_exec "$reader" sh -c "rm -rf /tmp/x && '$ckpt' extract -q -o /tmp/x '$d/ckpt.@r.sluice'" > extract.out 2>&1 \
    || fail "round $round: sluice-ckpt extract on $reader: $(cat extract.out)"
  for ((s = lo; s <= hi; s++)); do
    bad=" $(not_at "$d" "$s" "$@")"
    for m in 0 1 2 3 4 5; do case "$bad" in *" ckpt.$m "*) ;; *) printf 'ckpt.%d:%d ' "$m" "$s" ;; esac; done
  done
}

for ((round = 1; round <= ${SLUICE_TEST_ROUNDS:-2}; round++)); do
  k=$((RANDOM % 3))
  survivors=$(seq 0 2 | grep -vx $k | sed 's/^/node/' | tr '\n' ' ')
  reader=$(echo $survivors | cut -d' ' -f1)
  c=$SHARED/kill$round
  mkdir -p "$c"
  # mpiexec's own status is kept for the wrapper's to match: 255 mostly (hydra's own error path
  # on the lost proxy), else the OR of the statuses the other proxies reported (19 seen in CI).
  rm -f "$SHARED/mpiexec.rc"
  (cd "$SHARED" && SLUICE_CAPTURE="$c/ckpt.%r" "$TESTBED" run --dir "$TB_DIR" "$SLUICE_BIN_DIR/sluice" --watch-nodes \
    sh -c '"$@"; rc=$?; echo $rc > mpiexec.rc; exit $rc' sh \
    mpiexec -n 6 env LD_PRELOAD="$SLUICE_LIB" "$app" write "$c" 500 --fsync --big 1) > job.out 2>&1 &
  job=$!
  # The crash; prints, for each rank, the last step whose marker (its member durable) was there
  # just before it.
  marks=($(python3 - "$c" "$TB_DIR/node$k.pid" "$job" << 'PYEOF'
import os, random, signal, sys, time
d, pidfile, job = sys.argv[1], sys.argv[2], int(sys.argv[3])
def steps(names):
    s = 0
    while sum(n.startswith(".bar.step%d." % (s + 1)) for n in names) == 6:
        s += 1
    return s
end = time.time() + 120
while time.time() < end and os.path.exists("/proc/%d" % job):
    names = os.listdir(d)
    if steps(names) >= 1 and any(".sluice.tmp." in n for n in names):
        time.sleep(random.uniform(0, 0.3))
        names = os.listdir(d)
        os.kill(int(open(pidfile).read().split()[0]), signal.SIGKILL)
        print(" ".join(str(max([0] + [int(n.split(".")[2][4:]) for n in names if n.startswith(".bar.step") and n.endswith(".%d" % r)])) for r in range(6)))
        sys.exit(0)
    time.sleep(0.0005)
sys.exit(1)
PYEOF
  )) || { kill "$job" 2> /dev/null || true; fail "round $round: step 1 never became durable or no commit started: $(tail -3 job.out)"; }
  t0=$(date +%s.%N)
  line_at=""
  while kill -0 "$job" 2> /dev/null; do
    [ -n "$line_at" ] || ! grep -q ' lost: ' job.out || line_at=$(date +%s.%N)
    [ "$(echo "$(date +%s.%N) - $t0 < 10" | bc)" -eq 1 ] || { kill "$job" 2> /dev/null || true; fail "round $round: the job still runs 10 s after node$k crashed: $(tail -3 job.out)"; }
    sleep 0.01
  done
  took=$(echo "$(date +%s.%N) - $t0" | bc)
  set +e
  wait "$job"
  rc=$?
  set -e
  expect_eq "round $round: the job's status (mpiexec's)" "$(cat "$SHARED/mpiexec.rc" 2> /dev/null)" "$rc"
  [ "$rc" -ne 0 ] || fail "round $round: the job ended with 0 although node$k crashed"
  expect_eq "round $round: lines saying a node was lost" 1 "$(grep -c ' lost: ' job.out || true)"
  expect_contains "round $round: the line" "sluice: node node$k (ranks $k,$((k + 3))) lost: " "$(grep ' lost: ' job.out)"

  "$ckpt" verify "$c/ckpt.@r.sluice" > verify.out || fail "round $round: container damaged: $(cat verify.out)"
  lo=$(printf '%s\n' "${marks[@]}" | sort -n | sed -n 1p)
  hi=$(($(printf '%s\n' "${marks[@]}" | sort -n | tail -1) + 2))
  before=$(holds "$c" "$lo" "$hi")
  for m in 0 1 2 3 4 5; do
    ok=0
    for ((s = marks[m]; s <= marks[m] + 2; s++)); do case " $before" in *" ckpt.$m:$s "*) ok=1 ;; esac; done
    [ "$ok" -eq 1 ] || fail "round $round: after the crash ckpt.$m holds none of steps ${marks[m]}..$((marks[m] + 2)) (durable at ${marks[m]}; read on $reader: $before)"
  done

  recovered=""
  for n in $survivors; do
    tb_exec "$n" "$ckpt" recover --stage /dev/shm/sluice-0 > recover.out 2>&1 || fail "round $round: recover on $n: $(cat recover.out)"
    recovered+=$(grep -o 'recovered version [0-9]*' recover.out || true)
  done
  "$ckpt" verify "$c/ckpt.@r.sluice" > verify.out || fail "round $round: recovered container does not verify: $(cat verify.out)"
  expect_eq "round $round: temporary files left" "" "$(ls -A "$c" | grep 'sluice\.tmp' || true)"
  # After it, every member still holds a whole step, node$k's ranks' the same as before; a restart
  # on the surviving nodes reads every member as sluice-ckpt does.
  after=$(holds "$c" "$lo" "$hi")
  for m in $k $((k + 3)); do
    expect_eq "round $round: node$k's ckpt.$m after recover" "$(echo $before | tr ' ' '\n' | grep "^ckpt.$m:")" "$(echo $after | tr ' ' '\n' | grep "^ckpt.$m:")"
  done
  for m in 1 2 3 4 5; do
    case " $after" in *" ckpt.$m:"*) ;; *) fail "round $round: after recover ckpt.$m holds no step $lo..$hi: $after" ;; esac
  done
  for s in $(echo $after | tr ' ' '\n' | grep -v '^ckpt.0:' | cut -d: -f2 | sort -u); do
    expect_eq "round $round: a restart on $survivors reads step $s in the members sluice-ckpt does" \
      "$(echo $after | tr ' ' '\n' | grep ":$s\$" | tr '\n' ' ')" "$(holds "$c" "$s" "$s" $survivors)"
  done
  echo "ok: round $round: node$k crashed $(echo "$took" | cut -c1-4) s before the job ended, the line $([ -z "$line_at" ] && echo "before it ended" || echo "after $(echo "$line_at - $t0" | bc | cut -c1-4) s") (exit $rc); last durable steps by rank ${marks[*]}; members before recover: $before; recover: ${recovered:-nothing to recover}; after: $after"
  "$TESTBED" revive --dir "$TB_DIR" "node$k"
done

# One rank killed alone while its node lives on (the OOM killer's pick): hydra ends the job (its
# banner names the node and a pid); the wrapper names the rank, its pid and its node in one line,
# although every other rank then dies before MPI_Finalize too (hydra kills them). A random node's
# second rank (not its leader, whose process starts the node's watcher) or its leader.
# Last, the second rank again under a job script whose launcher outlives the job (mpiexec, then
# a long sleep): once every node said its ranks ended, the wrapper gives it 10 s, then one line
# and SIGTERM.
for victim in second leader outlived; do
  k=$((RANDOM % 3))
  r=$([ $victim = leader ] && echo $k || echo $((k + 3)))
  c=$SHARED/alone.$victim
  mkdir -p "$c"
  launch=(mpiexec -n 6 env LD_PRELOAD="$SLUICE_LIB" "$app" write "$c" 500 --fsync --big 1)
  [ $victim != outlived ] || launch=(sh -c '"$@"; sleep 300' sh "${launch[@]}")
  (cd "$SHARED" && SLUICE_CAPTURE="$c/ckpt.%r" "$TESTBED" run --dir "$TB_DIR" "$SLUICE_BIN_DIR/sluice" --watch-nodes \
    "${launch[@]}") > alone.out 2>&1 &
  job=$!
  timeout 60 bash -c "until [ \$(ls -A '$c' | grep -c '^\.bar\.step1\.') -eq 6 ]; do sleep 0.01; done" \
    || { kill "$job" 2> /dev/null || true; fail "rank $r alone: step 1 never became durable: $(tail -3 alone.out)"; }
  # The rank's process in its node's namespace (the pid it knows itself by).
  pid=$(tb_exec "node$k" sh -c "for p in \$(pgrep -f 'ckpt_commit_steps write'); do
      tr '\\0' '\\n' < /proc/\$p/environ | grep -qx 'PMI_RANK=$r' && tr '\\0' '\\n' < /proc/\$p/environ | grep -q '^LD_PRELOAD=' && echo \$p
    done; true" | head -1 || true)
  [ -n "$pid" ] || { kill "$job" 2> /dev/null || true; fail "rank $r alone: its process not found on node$k"; }
  tb_exec "node$k" kill -9 "$pid"
  bound=$([ $victim = outlived ] && echo 20 || echo 10)
  job_end "$job" "$bound" \
    || { kill "$job" 2> /dev/null || true; fail "rank $r alone: the job still runs $bound s after it was killed: $(tail -3 alone.out)"; }
  rc=$JOB_RC took=$JOB_TOOK
  [ "$rc" -ne 0 ] || fail "rank $r alone: the job ended with 0"
  expect_eq "rank $r alone: lines naming a rank that ended before MPI_Finalize" 1 "$(grep -c 'ended before MPI_Finalize' alone.out || true)"
  # (the rank alone, or with the ranks the launcher killed next where the node's watcher, scheduled
  # late, saw them end together: then all are named, order unknown)
  expect_contains "rank $r alone: the line" "rank $r (pid $pid on node node$k)" "$(grep 'ended before MPI_Finalize' alone.out)"
  grep 'ended before MPI_Finalize' alone.out | grep -qE "^sluice: rank $r \\(pid|at the same moment as" ||
    fail "rank $r alone: the line names another rank alone: $(grep 'ended before MPI_Finalize' alone.out)"
  expect_eq "rank $r alone: lines saying a node was lost" 0 "$(grep -c ' lost: ' alone.out || true)"
  expect_eq "rank $r alone: lines saying the launcher is ended" "$([ $victim = outlived ] && echo 1 || echo 0)" \
    "$(grep -c 'every rank of the job has ended, but the launcher (pid [0-9]*) still runs 10 s after; ending it' alone.out || true)"
  echo "ok: rank $r ($victim of node$k, pid $pid) killed alone: $(grep 'ended before MPI_Finalize' alone.out) (exit $rc, $(echo "$took" | cut -c1-4) s after the kill)"
done

# A job that ends well through the wrapper: status 0, no line, no watcher left on any node.
c=$SHARED/well
mkdir -p "$c"
(cd "$SHARED" && SLUICE_CAPTURE="$c/ckpt.%r" "$TESTBED" run --dir "$TB_DIR" "$SLUICE_BIN_DIR/sluice" --watch-nodes \
  mpiexec -n 6 env LD_PRELOAD="$SLUICE_LIB" "$app" write "$c" 2 --fsync) > well.out 2>&1 || fail "a job that ends well: status $?: $(tail -3 well.out)"
expect_eq "a job that ends well: lines of the wrapper" 0 "$(grep -c '^sluice: ' well.out || true)"
for n in 0 1 2; do
  timeout 15 bash -c "while '$TESTBED' exec --dir '$TB_DIR' $n pgrep -f 'sluice --node-helper' > /dev/null; do sleep 0.1; done" \
    || fail "a watcher still runs on node$n 15 s after the job ended well: $(tb_exec $n ps -eo pid,ppid,lstart,args | grep -v 'sleep 3600' | cut -c1-160)"
done
echo "ok: a job that ends well through sluice --watch-nodes: status 0, no line, no watcher left"
