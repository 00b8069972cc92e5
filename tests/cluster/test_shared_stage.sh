# SPDX-License-Identifier: MIT
# A stage folder on shared storage (docs/CAPTURE.md, SLUICE_STAGE_DIR on the shared folder, seen
# by every node) with process ids that repeat across nodes, as PID namespaces make them: each
# rank's writer is forked with a chosen pid (the node's /proc/sys/kernel/ns_last_pid), the same
# on every node. The ranks start one after the other, each once the previous rank's member is
# closed and waiting for the commit at exit (a non-MPI program commits at exit), so every writer
# starts while a process of another node with its own pid has a closed member in the folder.
# Odd rounds: 3 ranks on 3 nodes (one each, all pid 500); even rounds: 4 ranks on 2 nodes (two
# each, pids 500 and 600). Each job succeeds, its container verifies and holds every member byte
# for byte, the stage folder is empty, and the trace files of the ranks with equal pids are all
# there. SLUICE_TEST_ROUNDS rounds (default 1; 20 by hand). Then jobs of different nodes on
# their own sets, and `sluice-ckpt recover` from another node (across, below).
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 3
rounds=${SLUICE_TEST_ROUNDS:-1}
export -n SLUICE_TEST_ROUNDS # the test's, not the library's (which would warn of it)
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SHARED/stage

# fork_as.py WAIT PID CMD...: waits (at most 60 s) until file WAIT exists ("-": no wait), then
# forks CMD with pid PID (the node's next pid, set just before the fork), preloaded, and waits
# for it. Not preloaded itself.
cat > "$SHARED/fork_as.py" << 'EOF2'
import os, sys, time
wait, want, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
t = time.time()
while wait != "-" and not os.path.exists(wait) and time.time() - t < 60:
    time.sleep(0.02)
with open("/proc/sys/kernel/ns_last_pid", "w") as f:
    f.write(str(want - 1))
pid = os.fork()
if pid == 0:
    os.execvpe(cmd[0], cmd, dict(os.environ, LD_PRELOAD=os.environ["TEST_LIB"]))
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
EOF2
# writer.py MEMBER REF CLOSED GO [late]: writes REF's bytes to MEMBER (captured) and closes it,
# writes "pid node" to CLOSED, then waits (at most 120 s) for file GO before exiting (which
# commits); "late": waits for GO first.
cat > "$SHARED/writer.py" << 'EOF2'
import os, sys, time
member, ref, closed, go = sys.argv[1:5]
t = time.time()
while len(sys.argv) > 5 and not os.path.exists(go) and time.time() - t < 120:
    time.sleep(0.05)  # "late": writes only after the go
with open(member, "wb") as f:
    f.write(open(ref, "rb").read())
with open(closed, "w") as f:
    f.write("%d %s\n" % (os.getpid(), os.uname().nodename))
t = time.time()
while not os.path.exists(go) and time.time() - t < 120:
    time.sleep(0.05)
EOF2
export TEST_LIB=$SLUICE_LIB
mkdir -p "$SHARED/ref"
for i in 0 1 2 3; do head -c $((100000 + 7777 * i)) /dev/urandom > "$SHARED/ref/ckpt.$i"; done

# job NAME N HOSTS PER_NODE: one job; checks what the header says.
job() {
  local d=$SHARED/$1 n=$2 i
  mkdir -p "$d"
  SLUICE_CAPTURE="$d/ckpt.%r" tb_mpiexec -hosts "$3" -n "$n" env SLUICE_TRACE_DIR="$d/trace" sh -c \
    'r=$PMI_RANK; exec python3 "$0/fork_as.py" "$([ "$r" -gt 0 ] && echo "$1/closed.$((r - 1))" || echo -)" \
       $((500 + 100 * (r % $2))) python3 "$0/writer.py" "$1/ckpt.$r" "$0/ref/ckpt.$r" "$1/closed.$r" "$1/go"' \
    "$SHARED" "$d" "$4" > "$1.out" 2>&1 &
  local pid=$!
  for ((i = 0; i < 600 && $(ls "$d" | grep -c '^closed\.') < n; i++)); do sleep 0.1; done
  touch "$d/go"
  wait "$pid" || fail "$1: the job failed: $(tail -5 "$1.out")"
  expect_eq "$1: every writer closed its member" "$n" "$(ls "$d" | grep -c '^closed\.')"
  local pids
  pids=$(for ((i = 0; i < n; i++)); do awk '{print $1}' "$d/closed.$i"; done | sort | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' ')
  echo "$1: writers' pids (count x pid): $pids; nodes: $(cat "$d"/closed.* | awk '{print $2}' | sort | uniq -c | tr -s ' ' | tr '\n' ',')"
  case $n in
    3) expect_eq "$1: the same pid on the 3 nodes (forced)" "3x500 " "$pids" ;;
    4) expect_eq "$1: the same pids on the 2 nodes (forced)" "2x500 2x600 " "$pids" ;;
  esac
  "$ckpt" verify "$d/ckpt.@r.sluice" > verify.out 2>&1 || fail "$1: container: $(cat verify.out)"
  for ((i = 0; i < n; i++)); do
    SLUICE_CAPTURE="$d/ckpt.%r" env LD_PRELOAD="$SLUICE_LIB" cmp "$d/ckpt.$i" "$SHARED/ref/ckpt.$i" \
      || fail "$1: member $i differs or is lost"
  done
  expect_eq "$1: nothing left staged" "" "$(ls -A "$SLUICE_STAGE_DIR" | grep -v '^vd$' || true)"
  expect_eq "$1: a trace file per rank" "$n" "$(ls "$d/trace" | grep -c '\.sluicetrace$')"
}
# until_file FILE: waits (at most 60 s) for FILE.
until_file() { timeout 60 bash -c "until [ -e '$1' ]; do sleep 0.05; done" || fail "$1 never came"; }
# pair NODE SET: a job of 2 ranks on NODE, set DIR/SET; rank 0 (pid 700) closes its member and
# waits for DIR/SET.go, rank 1 writes only after it: rank 0's member stays staged till then.
pair() {
  SLUICE_CAPTURE="$d/$2/ckpt.%r" tb_mpiexec -hosts "node$1:2" -n 2 sh -c \
    'if [ "$PMI_RANK" = 0 ]; then exec python3 "$0/fork_as.py" - 700 python3 "$0/writer.py" "$1/ckpt.0" "$0/ref/ckpt.0" "$1.closed" "$1.go"
     else exec env LD_PRELOAD="$TEST_LIB" python3 "$0/writer.py" "$1/ckpt.1" "$0/ref/ckpt.1" "$1.closed1" "$1.go" late; fi' \
    "$SHARED" "$d/$2"
}
# across NAME: jobs of different nodes on their own sets, each with a rank of pid 700, one stage
# folder. A (node0) has a closed member staged; `sluice-ckpt recover` on node1 leaves it to its
# live writer (another host's); B (node1) starts a process of pid 700 that closes a member of
# its own (a single process: committed at once); then A ends: both sets hold their members.
# C (node2) loses its node's processes with rank 0's member staged: recover on node1 leaves it,
# and takes it with --other-hosts.
across() {
  local d=$SHARED/$1
  mkdir -p "$d/a" "$d/b" "$d/c"
  pair 0 a > "$1.a.out" 2>&1 &
  local a=$!
  until_file "$d/a.closed"
  tb_exec 1 "$ckpt" recover > "$1.recover1" 2>&1 || fail "$1: recover on node1: $(cat "$1.recover1")"
  expect_contains "$1: recover on node1 leaves node0's live writer's member" "staged on another host" "$(cat "$1.recover1")"
  tb_exec 1 env SLUICE_CAPTURE="$d/b/ckpt.%r" python3 "$SHARED/fork_as.py" - 700 python3 "$SHARED/writer.py" \
    "$d/b/ckpt.2" "$SHARED/ref/ckpt.2" "$d/b.closed" "$d/a.closed" > "$1.b.out" 2>&1 || fail "$1: B (node1) failed: $(cat "$1.b.out")"
  touch "$d/a.go"
  wait "$a" || fail "$1: A (node0) failed: $(cat "$1.a.out")"
  expect_eq "$1: A and B said nothing" "" "$(cat "$1.a.out" "$1.b.out")"
  pair 2 c > "$1.c.out" 2>&1 &
  local c=$!
  until_file "$d/c.closed"
  "$TESTBED" crash --dir "$TB_DIR" node2
  wait "$c" || true
  tb_exec 1 "$ckpt" recover > "$1.recover2" 2>&1 || fail "$1: recover on node1: $(cat "$1.recover2")"
  expect_contains "$1: recover on node1 leaves node2's member" "staged on another host" "$(cat "$1.recover2")"
  tb_exec 1 "$ckpt" recover --other-hosts > "$1.recover3" 2>&1 || fail "$1: recover --other-hosts: $(cat "$1.recover3")"
  expect_contains "$1: recover --other-hosts on node1 takes node2's member" "recovered version" "$(cat "$1.recover3")"
  local x m
  for x in a:0 a:1 b:2 c:0; do
    m=${x#*:}
    SLUICE_CAPTURE="$d/${x%:*}/ckpt.%r" env LD_PRELOAD="$SLUICE_LIB" cmp "$d/${x%:*}/ckpt.$m" "$SHARED/ref/ckpt.$m" \
      || fail "$1: set ${x%:*}: member $m differs or is lost"
  done
  for x in a b c; do
    "$ckpt" verify "$d/$x/ckpt.@r.sluice" > verify.out 2>&1 || fail "$1: set $x: $(cat verify.out)"
  done
  expect_eq "$1: nothing left staged" "" "$(ls -A "$SLUICE_STAGE_DIR" | grep -v '^vd$' || true)"
  echo "ok: $1: jobs with a rank of pid 700 on 3 nodes, sets a, b, c intact"
}
t0=$(date +%s.%N)
for ((round = 1; round <= rounds; round++)); do
  if [ $((round % 2)) = 1 ]; then job "r$round.n3" 3 node0,node1,node2 1; else job "r$round.n2" 4 node0:2,node1:2 2; fi
done
across across  # last: it crashes node2
echo "ok: $rounds round(s), one job each, in $(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5) s"
