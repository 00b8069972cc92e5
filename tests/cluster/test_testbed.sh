# SPDX-License-Identifier: MIT
# The testbed itself (tests/cluster/testbed.sh, docs/CLUSTER_TESTBED.md): 3 nodes whose host
# names, /dev/shm, /tmp, process ids and SysV IPC differ; addresses that exist only inside the
# testbed (none on the host); mpiexec placing ranks on the nodes; 10 of 10 MPI jobs ending (the
# finalize fix); a process cannot read another's memory across nodes; a cut link; shaping; bad
# input gets one line; a folder that is not the testbed's is never taken over nor removed;
# teardown leaves no process, and up works again after a killed run.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 3

# Host names, private /dev/shm and /tmp, PID namespaces.
for i in 0 1 2; do
  expect_eq "node$i's host name" "node$i" "$(tb_exec $i hostname)"
  tb_exec $i sh -c "echo $i > /dev/shm/mark; echo $i > /tmp/mark"
done
for i in 0 1 2; do
  expect_eq "node$i sees only its own /dev/shm" "mark $i" "$(tb_exec $i sh -c 'echo $(ls /dev/shm) $(cat /dev/shm/mark)')"
  expect_eq "node$i sees only its own /tmp" "$i" "$(tb_exec $i cat /tmp/mark)"
done
pidns=$(for i in 0 1 2; do tb_exec $i readlink /proc/self/ns/pid; done; readlink /proc/self/ns/pid)
expect_eq "4 PID namespaces (3 nodes and the host)" 4 "$(echo "$pidns" | sort -u | wc -l)"
[ ! -e /dev/shm/mark ] || fail "a node's /dev/shm leaked onto the host"
ipc0=$(tb_exec 0 readlink /proc/self/ns/ipc)
[ "$ipc0" != "$(tb_exec 1 readlink /proc/self/ns/ipc)" ] || fail "nodes 0 and 1 share an IPC namespace"
echo "ok: own IPC namespace per node"

# Addresses only inside the testbed.
if ip -4 addr show | grep -q '169\.254\.77\.'; then fail "a testbed address is on the host"; fi
expect_eq "node1's address" "169.254.77.2/24" "$(tb_exec 1 ip -4 -br addr show eth0 | awk '{print $3}')"

# mpiexec: round robin over the nodes, each rank's host and MPICH's shared-memory split.
out=$(tb_mpiexec -n 4 sh -c 'echo $PMI_RANK $(hostname)' | sort)
expect_eq "4 ranks round robin on 3 nodes" "0 node0,1 node1,2 node2,3 node0" "$(echo "$out" | tr '\n' ',' | sed 's/,$//')"
out=$(tb_mpiexec -hosts node1:2,node2:2 -n 4 sh -c 'echo $PMI_RANK $(hostname)' | sort)
expect_eq "-hosts node1:2,node2:2" "0 node1,1 node1,2 node2,3 node2" "$(echo "$out" | tr '\n' ',' | sed 's/,$//')"

# Job ends: an MPI program (a ring, an allreduce and a gather to rank 0) on 3 nodes, 10 runs,
# each ending within 20 s (MPICH 4.0.2 without the finalize fix hangs in about half of them).
for k in $(seq 10); do
  timeout 20 "$TESTBED" run --dir "$TB_DIR" sh -c "cd '$SHARED' && mpiexec -n 3 '$SLUICE_APPS_DIR/mpi_ring' > ring.out 2>&1" \
    || fail "run $k of mpi_ring on 3 nodes did not end: $(tail -3 "$SHARED/ring.out")"
done
echo "ok: 10 of 10 jobs ended"

# Across nodes a process cannot read another node's process memory (process_vm_readv by a pid
# from another node names nothing, or another process): rank 0 on node0 publishes its pid and
# the address of a word holding a random value; a process on node1 tries to read it.
word=$RANDOM$RANDOM
tb_exec 0 python3 -c "
import ctypes, os, sys, time
v = ctypes.c_uint64($word)
open('$SHARED/addr', 'w').write('%d %d\n' % (os.getpid(), ctypes.addressof(v)))
time.sleep(20)" &
reader=$!
timeout 10 bash -c "until [ -s '$SHARED/addr' ]; do sleep 0.1; done" || fail "no address published"
read -r rpid raddr < "$SHARED/addr"
readword="
import ctypes, sys
class iov(ctypes.Structure): _fields_ = [('b', ctypes.c_void_p), ('n', ctypes.c_size_t)]
libc = ctypes.CDLL(None, use_errno=True)
v = ctypes.c_uint64(0)
l = iov(ctypes.addressof(v), 8); r = iov($raddr, 8)
n = libc.process_vm_readv($rpid, ctypes.byref(l), 1, ctypes.byref(r), 1, 0)
print(v.value if n == 8 else 'errno %d' % ctypes.get_errno())"
expect_eq "same node: the word is read" "$word" "$(tb_exec 0 python3 -c "$readword")"
across=$(tb_exec 1 python3 -c "$readword")
[ "$across" != "$word" ] || fail "node1 read node0's memory"
echo "ok: node1 cannot read node0's word ($across)"
kill "$reader" 2> /dev/null || true
wait "$reader" 2> /dev/null || true

# A cut link: node2 unreachable from node0 (bounded), back after link up.
"$TESTBED" link --dir "$TB_DIR" 2 down
if tb_exec 0 timeout 3 bash -c 'exec 3<>/dev/tcp/node2/1' 2> /dev/null; then fail "node2 reachable with its link down"; fi
"$TESTBED" link --dir "$TB_DIR" 2 up
echo "ok: link down and up"

# Shaping: a 20 Mbit/s tbf on node1 bounds what it sends (4 MiB takes >= 1.3 s; unshaped, well
# under that).
tb_exec 2 sh -c 'python3 -c "
import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((\"0.0.0.0\", 5001)); s.listen(1); c, _ = s.accept(); n = 0
while True:
    b = c.recv(1 << 16)
    if not b: break
    n += len(b)
print(n)" > /tmp/got' &
sleep 1
send4m='import socket, time; s = socket.create_connection(("node2", 5001)); t = time.time(); s.sendall(bytes(4 << 20)); s.shutdown(socket.SHUT_WR); s.recv(1); print("%.2f" % (time.time() - t))'
"$TESTBED" shape --dir "$TB_DIR" 1 20mbit
secs=$(tb_exec 1 python3 -c "$send4m")
wait
expect_eq "4 MiB arrived on node2" $((4 << 20)) "$(tb_exec 2 cat /tmp/got)"
awk -v s="$secs" 'BEGIN { exit !(s >= 1.3) }' || fail "4 MiB at 20 Mbit/s took only $secs s"
echo "ok: 4 MiB through node1's 20 Mbit/s link in $secs s"

# Bad input: one line each, exit 2.
for bad in "up --nodes 9" "up --nodes 1" "up --frobnicate" "frobnicate" "exec --dir $TB_DIR 7 true"; do
  set +e
  msg=$("$TESTBED" $bad 2>&1)
  rc=$?
  set -e
  [ "$rc" -ne 0 ] || fail "testbed.sh $bad succeeded"
  expect_eq "testbed.sh $bad: one line" 1 "$(echo "$msg" | wc -l)"
done

# A folder that is not the testbed's is never taken over nor removed.
mkdir notmine
echo keep > notmine/file
if "$TESTBED" up --dir "$PWD/notmine" 2> up.err; then fail "up took over a folder with other files"; fi
if "$TESTBED" down --dir "$PWD/notmine" 2> down.err; then fail "down accepted a folder that is not a testbed"; fi
expect_eq "a foreign folder keeps its files" keep "$(cat notmine/file)"
expect_contains "down names the folder" "not a testbed folder" "$(cat down.err)"

# Down leaves no process behind, even when a job is still running; up again after a kill -9 of
# every holder works.
tb_exec 1 sleep 300 &
sleep 0.5
pids=$(for n in head node0 node1 node2; do awk '{print $1}' "$TB_DIR/$n.pid"; done)
"$TESTBED" down --dir "$TB_DIR"
wait || true
for p in $pids; do # gone, or a zombie that waits for the host's reaper
  [ "$(awk '{print $3}' /proc/$p/stat 2> /dev/null || echo Z)" = Z ] || fail "process $p survived down"
done
[ ! -e "$TB_DIR" ] || fail "down left $TB_DIR"
"$TESTBED" up --dir "$TB_DIR" --nodes 2 > /dev/null
for n in head node0 node1; do kill -9 "$(awk '{print $1}' "$TB_DIR/$n.pid")"; done
"$TESTBED" up --dir "$TB_DIR" --nodes 2 > /dev/null
expect_eq "up after a killed testbed" "0 node0,1 node1" "$(tb_mpiexec -n 2 sh -c 'echo $PMI_RANK $(hostname)' | sort | tr '\n' ',' | sed 's/,$//')"
