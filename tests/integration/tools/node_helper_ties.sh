# SPDX-License-Identifier: MIT
# A node's watcher (`sluice --node-helper`, tools/sluice/node_helper.c) tells the wrapper when
# each rank of its node ended before MPI_Finalize. Ranks it finds ended in one wake-up carry one
# time: it cannot know their order, and the wrapper names the earliest (a killed rank and those the
# launcher killed next, seen together by a watcher scheduled late, were once ordered by the
# watcher's loop and the killed rank went unnamed). A rank still running its exit (a killed
# process of 1 GiB takes tens of ms to end) when another ends counts as ended with it. Ends seen
# in separate wake-ups keep their order. A fake wrapper (python3, a TCP port) records what the
# watcher says.
sluice=$SLUICE_BIN_DIR/sluice
mkdir marks

# A wrapper that writes every line it is sent to heard.txt, its port to port.txt.
python3 - > wrapper.log 2>&1 <<'PY' &
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
open("port.txt.new", "w").write(str(s.getsockname()[1]))
import os
os.rename("port.txt.new", "port.txt")
s.settimeout(120)
c, _ = s.accept()
c.settimeout(120)
with open("heard.txt", "wb") as out:
    while True:
        b = c.recv(65536)
        if not b:
            break
        out.write(b)
        out.flush()
PY
wrapper=$!
pids=() watcher=
# Nothing outlives the test (a sleep left holding ctest's pipe would hold the test too).
trap 'kill -9 "${pids[@]}" $watcher $wrapper 2> /dev/null || true' EXIT
timeout 30 bash -c 'until [ -s port.txt ]; do sleep 0.01; done' || fail "the fake wrapper never listened"
port=$(cat port.txt)

# 300 ranks: 299 sleeps of this shell (the watcher's loop over 300 ends takes milliseconds) and
# a last rank of 1 GiB (python3 writing every page of it).
n=300
ranks=()
for ((r = 0; r < n - 1; r++)); do
  sleep 600 &
  pids+=($!) ranks+=($r)
done
python3 -c 'import sys, time
b = bytearray(b"\x01") * (1 << 30)
print("ready", flush=True)
time.sleep(600)' > big.txt &
pids+=($!) ranks+=($((n - 1)))
timeout 60 bash -c 'until [ -s big.txt ]; do sleep 0.01; done' || fail "the 1 GiB rank never got its memory"
list() { local IFS=,; echo "$*"; }
"$sluice" --node-helper "127.0.0.1:$port:tok:/bin/false" nodeT "$(list "${ranks[@]}")" "$(list "${pids[@]}")" "$PWD/marks" \
  || fail "the watcher did not start: status $?"
# (its argv is cut where ':' and ',' were: "." matches either)
watcher=$(pgrep -f -- "--node-helper 127.0.0.1.$port.tok" | head -1 || true)
[ -n "$watcher" ] || fail "the watcher's process is not running"

# Ranks 0 and 1 end in separate wake-ups, 0 first; rank 2 ends after its MPI_Finalize (marked).
kill -9 "${pids[0]}"; wait "${pids[0]}" 2> /dev/null || true
timeout 30 bash -c 'until grep -q "^died 0 " heard.txt 2> /dev/null; do sleep 0.01; done' || fail "rank 0's end never told"
sleep 0.05
kill -9 "${pids[1]}"; wait "${pids[1]}" 2> /dev/null || true
timeout 30 bash -c 'until grep -q "^died 1 " heard.txt 2> /dev/null; do sleep 0.01; done' || fail "rank 1's end never told"
touch marks/fin.2
# The rest but the last two end while the watcher is stopped: it finds them all in one wake-up.
kill -STOP "$watcher"
# kill returns before the watcher stops: one not yet scheduled would scan its pidfds on its way to
# the stop, and ranks killed by then made a wake-up of their own (seen under load, two times).
timeout 30 bash -c "until [ \"\$(sed 's/.*) //' /proc/$watcher/stat | cut -d' ' -f1)\" = T ]; do sleep 0.01; done" ||
  fail "the watcher never stopped"
kill -9 "${pids[@]:2:n-4}"
wait "${pids[@]:2:n-4}" 2> /dev/null || true
kill -CONT "$watcher"
timeout 30 bash -c "until grep -q '^died $((n - 3)) ' heard.txt 2> /dev/null; do sleep 0.01; done" || fail "the batch's ends never told"
# The 1 GiB rank killed first, then a small one, the watcher running: the small one ends first
# (the large one's exit frees 1 GiB, tens of ms), and the large one, being killed, counts as
# ended with it.
kill -9 "${pids[n - 1]}" "${pids[n - 2]}"
wait "${pids[n - 2]}" 2> /dev/null || true
big_state=$(sed 's/.*) //' "/proc/${pids[n - 1]}/stat" 2> /dev/null | cut -d' ' -f1)
wait "${pids[n - 1]}" 2> /dev/null || true
timeout 60 bash -c 'until grep -qx end heard.txt 2> /dev/null; do sleep 0.01; done' || fail "the watcher never said end: $(tail -3 heard.txt)"
wait "$wrapper" || fail "the fake wrapper failed: $(cat wrapper.log)"

expect_contains "the first line names the node and its ranks" "sluice-node tok nodeT 0,1,2,3," "$(head -1 heard.txt)"
expect_eq "ends told (every rank but the one that finalized)" $((n - 1)) "$(grep -c '^died ' heard.txt)"
expect_eq "rank 2, finalized, is not told" 0 "$(grep -c '^died 2 ' heard.txt)"
t0=$(awk '$1 == "died" && $2 == 0 { print $4 }' heard.txt)
t1=$(awk '$1 == "died" && $2 == 1 { print $4 }' heard.txt)
[ "$t0" -lt "$t1" ] || fail "ends seen in separate wake-ups keep their order: rank 0 at $t0, rank 1 at $t1"
expect_eq "the ends seen in one wake-up carry one time" 1 "$(awk -v m=$((n - 3)) '$1 == "died" && $2 >= 3 && $2 <= m { print $4 }' heard.txt | sort -u | wc -l)"
expect_eq "the 1 GiB rank, killed first but ending last, told with the small one" \
  "$(awk -v r=$((n - 2)) '$1 == "died" && $2 == r { print $4 }' heard.txt)" "$(awk -v r=$((n - 1)) '$1 == "died" && $2 == r { print $4 }' heard.txt)"
expect_eq "each told with its pid" "died 299 ${pids[299]}" "$(grep '^died 299 ' heard.txt | cut -d' ' -f1-3)"
echo "ok: the 1 GiB rank was in state $big_state once the small one had ended (R: still in its exit)"
echo "ok: $((n - 5)) ends in one wake-up told at one time ($(awk '$1 == "died" && $2 >= 3 { print $4; exit }' heard.txt)); rank 0 at $t0, rank 1 at $t1"
