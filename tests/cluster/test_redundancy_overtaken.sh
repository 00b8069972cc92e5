# SPDX-License-Identifier: MIT
# Redundancy overtaken by the program (docs/REDUNDANCY.md, "Encoding on the I/O threads"): on 2
# testbed nodes with 20 Mbit/s links, 4 ranks (2 per node) of `mpi_ckpt_levels` write 8 steps of
# 2 MiB each without pausing, with SLUICE_KEEP=2 and nothing drained before the exit: a version's
# encoding (4 MiB per node, 1.7 s at that rate) is overtaken by the next versions, whose staging
# may remove its files before they are read (one line, "not protected: ... changed while it was
# encoded" or "could not be listed": most XOR versions, few partner ones), and encodings end after
# their version was drained at the exit. For partner and XOR, each job:
#   - ends with status 0;
#   - leaves both nodes' stage folders empty: no copy, parity, mark or temporary file of a version
#     the exit made durable (a mark or copy of an encoding that ended after the drain stayed
#     behind: 1 of 3 runs of the library before);
#   - a restart of 4 ranks reads step 8 byte for byte from the container.
source "$SOURCE_DIR/tests/cluster/lib.bash"
tb_up 2 --rate 20mbit
app=$SLUICE_APPS_DIR/mpi_ckpt_levels
stage=/dev/shm/sluice-$(id -u)

for red in partner xor; do
  d=$SHARED/$red
  mkdir -p "$d"
  # released 2 s after the last step is written: the streams are still under way
  (for i in $(seq 1200); do [ -e "$d/.written" ] && break; sleep 0.1; done; sleep 2; touch "$d/.release") &
  releaser=$!
  set +e
  tb_mpiexec -hosts node0:2,node1:2 -n 4 env SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_DRAIN_EVERY=100 SLUICE_KEEP=2 \
    SLUICE_REDUNDANCY=$red LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 8 0 bytes=2097152 > "$red.out" 2>&1
  rc=$?
  set -e
  wait "$releaser" || true
  [ "$rc" -eq 0 ] || fail "$red: the job ended with $rc: $(tail -5 "$red.out")"
  for n in 0 1; do
    left=$(tb_exec $n sh -c "ls -A '$stage' 2> /dev/null" | tr '\n' ' ')
    [ -z "$left" ] || fail "$red: node$n's stage folder is not empty after the job: $left"
  done
  tb_mpiexec -n 4 env LD_PRELOAD="$SLUICE_LIB" SLUICE_CAPTURE="$d/ckpt.%r" "$app" verify "$d" 8 4 bytes=2097152 > "$red.verify.out" 2>&1 ||
    fail "$red: the restart did not read step 8: $(tail -3 "$red.verify.out")"
  echo "$red: ok ($(grep -c 'not protected' "$red.out" || true) versions not protected on the way)"
done
