# SPDX-License-Identifier: MIT
# Capture across nodes (docs/CLUSTER_TESTBED.md): 6 ranks on 3 nodes (2 each) write per-rank
# files on the shared folder with capture on and the default stage folder (/dev/shm/sluice-<uid>,
# node-local). While the writers hold their closed members (a non-MPI program commits at exit),
# each node's own /dev/shm holds exactly the members of its own ranks, named by their node-local
# process ids, and nothing of other nodes. Then the job commits with one aggregator per node
# (SLUICE_CB_NODES=0, the default): the trace shows 3 aggregators, one on each node, only they
# write the container, no stripe of it (header and index included) is written by two, and only
# the pieces of stripes where two nodes' data meet cross a link. Jobs on 1, 2 and 4 nodes (3, 4
# and 5 ranks) read every member back byte for byte. Then the direct path (no shuffle): one
# writer per node, each copying its node's members from their staging files; the container holds
# every byte.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 4
sizes="200001 333333 150000 77777 262147 100003"
d=$SHARED/run
mkdir -p "$d"
export SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_STRIPING_UNIT=64K SLUICE_CB_WRITE=enable

# The writer: ckpt_sized's bytes (ckpt_sized.c's byte_at), written in odd-sized pieces; then it
# says so and waits for the test's go (at most 120 s) before exiting, which commits.
cat > "$SHARED/writer.py" << 'EOF'
import os, sys, time
d, sizes = sys.argv[1], sys.argv[2].split()
r = int(os.environ["PMI_RANK"])
n = int(sizes[r % len(sizes)])
M = (1 << 64) - 1
def byte_at(m, off):
    x = (off * 0x9E3779B1 + m * 0x85EBCA77 + (off >> 13)) & M
    return (x ^ (x >> 17)) & 0xFF
data = bytes(byte_at(r, o) for o in range(n))
fd = os.open("%s/ckpt.%d" % (d, r), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
for o in range(0, n, 65537):
    os.write(fd, data[o:o + 65537])
os.close(fd)
with open("%s/../closed.%d" % (d, r), "w") as f:
    f.write("%d %d %s\n" % (os.getpid(), n, os.uname().nodename))
t = time.time()
while not os.path.exists("%s/../go" % d) and time.time() - t < 120:
    time.sleep(0.1)
EOF

tb_mpiexec -hosts node0:2,node1:2,node2:2 -n 6 env SLUICE_TRACE_DIR="$SHARED/trace" LD_PRELOAD="$SLUICE_LIB" \
  python3 "$SHARED/writer.py" "$d" "$sizes" > writer.out 2>&1 &
job=$!
timeout 120 bash -c "until [ \$(ls '$SHARED' | grep -c '^closed\.') -eq 6 ]; do sleep 0.2; done" \
  || { kill "$job"; fail "the writers did not all close their members: $(cat writer.out)"; }

# Each node's /dev/shm: the staged members of its two ranks (m-<pid>-<seq>.data, pid the
# writer's own, as its node sees it, size its member's), nothing else.
for i in 0 1 2; do
  want=$(for r in $((2 * i)) $((2 * i + 1)); do
    read -r pid n host < "$SHARED/closed.$r"
    [ "$host" = "node$i" ] || fail "rank $r ran on $host, not node$i"
    echo "$pid $n"
  done | sort)
  got=$(tb_exec $i sh -c 'cd /dev/shm/sluice-0 2>/dev/null && for f in m-*.data; do [ -e "$f" ] && echo "$f $(stat -c %s "$f")"; done' \
    | sed -E 's/^m-[0-9a-f]{16}-([0-9]+)-[0-9]+\.data /\1 /' | sort)
  expect_eq "node$i's /dev/shm stages exactly its own ranks' members (pid size)" "$(echo $want)" "$(echo $got)"
done
expect_eq "node3 (no rank) stages nothing" "" "$(tb_exec 3 sh -c 'ls /dev/shm/sluice-0 2>/dev/null | grep "^m-" || true')"

# link_bytes: bytes node0 (rank 0's node) has sent and received on its link so far.
link_bytes() { tb_exec 0 cat /sys/class/net/eth0/statistics/tx_bytes /sys/class/net/eth0/statistics/rx_bytes | tr '\n' ' '; }
read -r tx0 rx0 <<< "$(link_bytes)"
touch "$SHARED/go"
wait "$job" || fail "the writer job failed: $(cat writer.out)"
read -r tx1 rx1 <<< "$(link_bytes)"
echo "figure: the commit of $(echo $sizes | tr ' ' '+' | bc) bytes moved $((tx1 - tx0)) bytes out of and $((rx1 - rx0)) into node0's link"
[ ! -s writer.out ] || fail "the writer job printed: $(head -5 writer.out)"
expect_eq "one container" "ckpt.@r.sluice" "$(ls -A "$d")"
"$SLUICE_BIN_DIR/sluice-ckpt" verify "$d/ckpt.@r.sluice" > /dev/null || fail "the container does not verify"
for i in 0 1 2; do
  expect_eq "node$i's /dev/shm is empty after the commit" "" "$(tb_exec $i sh -c 'ls /dev/shm/sluice-0 2>/dev/null | grep "^m-" || true')"
done

# One aggregator per node: COMMIT_MEMORY aggregator=1 (plus the home, which begins the commit)
# on ranks 0-1 (node0), 2-3 (node1), 4-5 (node2): one of each pair; the container's writers are
# among them.
"$SLUICE_BIN_DIR/sluice-trace" dump "$SHARED/trace" > trace.dump || fail "trace unreadable"
aggs=$({ grep ' COMMIT_MEMORY .*aggregator=1' trace.dump | awk '{print $2}'
  grep ' COMMIT_BEGIN ' trace.dump | awk '{print $2}'; } | sort -un | tr '\n' ' ')
expect_eq "3 aggregators" 3 "$(echo $aggs | wc -w)"
expect_eq "one aggregator on each node" "0 1 2" "$(for r in $aggs; do echo $((r / 2)); done | sort -u | tr '\n' ' ' | sed 's/ $//')"
writers=$(grep ' COMMIT_FS_WRITE ' trace.dump | awk '{print $2}' | sort -un | tr '\n' ' ')
for r in $writers; do
  case " $aggs " in *" $r "*) ;; *) fail "rank $r wrote the container but is not an aggregator ($aggs)" ;; esac
done
echo "ok: container written by $writers, aggregators $aggs"
# Domains follow each node's data (docs/TWOPHASE.md): only pieces of the stripes where one node's
# members meet the next node's cross a link, at most half a 64 KiB stripe at each of the 2
# boundaries (domains balanced by bytes sent about 160 KB of node0's 533 KB to node1).
cross=$(grep ' COMMIT_SHUFFLE ' trace.dump | sed -E 's/^rank ([0-9]+) .*to rank=([0-9]+), bytes=([0-9]+).*/\1 \2 \3/' \
  | awk 'int($1 / 2) != int($2 / 2) { s += $3 } END { print s + 0 }')
echo "figure: $cross bytes of the shuffle crossed a link"
[ "$cross" -le 65536 ] || fail "$cross bytes of the shuffle crossed links (at most 65536: domains should follow the nodes)"
# No 64 KiB stripe of the container (header and index included) is written by two processes.
shared_stripes=$(grep ' COMMIT_FS_WRITE ' trace.dump | sed -E 's/^rank ([0-9]+) .*offset=([0-9]+), bytes=([0-9]+),.*/\1 \2 \3/' \
  | awk '$3 > 0 { for (s = int($2 / 65536); s <= int(($2 + $3 - 1) / 65536); s++) print s, $1 }' | sort -u \
  | awk '{ n[$1]++ } END { for (s in n) if (n[s] > 1) print s }')
expect_eq "stripes written by two processes" "" "$shared_stripes"

# Restart on 1, 2 and 4 nodes: every member read back byte for byte.
restart() {
  local label=$1
  shift
  tb_mpiexec "$@" env LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/ckpt_sized" verify "$d" 6 $sizes > "verify.$label" 2>&1 \
    || fail "restart on $label: $(head -5 "verify.$label")"
  echo "ok: restart on $label read all 6 members byte for byte"
}
restart "1 node (3 ranks on node3)" -hosts node3:3 -n 3
restart "2 nodes (2 ranks on node0 and node3)" -hosts node0:2,node3:2 -n 4
restart "4 nodes (5 ranks)" -hosts node0,node1,node2,node3 -n 5

# The direct path across nodes (SLUICE_CB_WRITE=disable: no shuffle): each node's aggregator
# copies its own node's members from their node-local staging files, so the container's writers
# are one rank on each node, not all six; the container verifies and holds every byte.
dd=$SHARED/direct
mkdir -p "$dd"
SLUICE_CAPTURE="$dd/ckpt.%r" SLUICE_CB_WRITE=disable tb_mpiexec -hosts node0:2,node1:2,node2:2 -n 6 \
  env SLUICE_TRACE_DIR="$SHARED/trace-direct" LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/ckpt_sized" write "$dd" $sizes \
  > direct.out 2>&1 || fail "direct writer job failed: $(head -5 direct.out)"
"$SLUICE_BIN_DIR/sluice-ckpt" verify "$dd/ckpt.@r.sluice" > /dev/null || fail "direct: the container does not verify"
"$SLUICE_BIN_DIR/sluice-trace" dump "$SHARED/trace-direct" > direct.dump || fail "direct: trace unreadable"
dwriters=$(grep ' COMMIT_FS_WRITE ' direct.dump | awk '{print $2}' | sort -un | tr '\n' ' ')
expect_eq "direct path: one writer on each node" "0 1 2" "$(for r in $dwriters; do echo $((r / 2)); done | sort -u | tr '\n' ' ' | sed 's/ $//')"
expect_eq "direct path: three writers for six members" 3 "$(echo $dwriters | wc -w)"
"$SLUICE_BIN_DIR/sluice-ckpt" extract -o "$SHARED/direct.x" "$dd/ckpt.@r.sluice" > /dev/null \
  || fail "direct: extract failed"
"$SLUICE_APPS_DIR/ckpt_sized" verify "$SHARED/direct.x" 6 $sizes > direct.verify 2>&1 \
  || fail "direct: the container holds wrong bytes: $(head -5 direct.verify)"
echo "ok: direct path across 3 nodes written by ranks $dwriters, every byte in the container"
