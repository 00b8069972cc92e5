# SPDX-License-Identifier: MIT
# Whole stripes, counted from outside: a step that writes four checkpoint sets at once (4 ranks,
# 3 MB members, 1 MiB stripes; ckpt_sized closes the four files together so that the commits
# overlap), traced with strace in every process. No stripe of any container is written in pieces
# by two processes, and at least 95 % of container bytes go in whole stripes (a file's last
# partial stripe counts as whole). Before, each container's first stripe held the home's header
# and an aggregator's first 1,044,480 bytes, and its last data stripe shared room with the index
# (80.9 % in whole stripes). A set smaller than one stripe stays packed (docs/COMMIT.md): its one
# or two stripes are listed, not failed. The restart reads every byte back.
app=$SLUICE_APPS_DIR/ckpt_sized
check=$SOURCE_DIR/tests/integration/ckpt/stripe_writers.py
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE SLUICE_STRIPING_UNIT=1M
command -v strace >/dev/null || fail "strace not found (apt-get install strace)"
dirs=""
for k in 1 2 3 4; do mkdir -p "$PWD/set$k"; dirs="$dirs${dirs:+,}$PWD/set$k"; done
export SLUICE_CAPTURE="$PWD/set*/ckpt.%r"
timeout 180 strace -f -qq -e signal=none -e trace=write,pwrite64,pwritev,pwritev2,copy_file_range -y \
  -o strace.txt "$MPIEXEC" -n 4 env LD_PRELOAD="$SLUICE_LIB" "$app" write "$dirs" 3000000 \
  >write.out 2>write.err || fail "writer job failed: $(tail -3 write.err)"
python3 "$check" strace.txt 1048576 >stripes.txt || fail "stripe_writers.py failed"
cat stripes.txt
read -r _ bytes whole shared < <(grep '^total' stripes.txt)
[ "$bytes" -gt 12000000 ] || fail "only $bytes bytes reached the containers (4 x 4 x 3 MB expected)"
expect_eq "stripes written in pieces by two processes" 0 "$shared"
[ $((whole * 100)) -ge $((bytes * 95)) ] ||
  fail "$(awk -v a="$whole" -v b="$bytes" 'BEGIN{printf "%.1f", 100*a/b}') % of container bytes in whole stripes, under 95 %"
echo "ok: $(awk -v a="$whole" -v b="$bytes" 'BEGIN{printf "%.1f", 100*a/b}') % of $bytes container bytes in whole stripes, no stripe shared by two processes"
for k in 1 2 3 4; do
  run_dist 3 SLUICE_CAPTURE="$PWD/set$k/ckpt.%r" \
    "$app" verify "$PWD/set$k" 4 3000000 || fail "set$k: the restart read wrong bytes"
done
echo "ok: a restart on 3 ranks read every byte of the four sets"
