# SPDX-License-Identifier: MIT
# `sluice-trace io` tells each version's file-system work as strace sees it on that version's
# file: four sets committing at once (4 ranks, uneven members, ckpt_sized), and three sets a step
# over two steps with ranks out of step (mpi_ckpt_multifile, 3 ranks). Per version: the bytes
# and write calls that reached its temporary file, its create, fsync, fdatasync and rename.
# Before, requests and metadata operations carried no set and went to whichever commit's time
# window held them: three of four overlapping versions showed 0 writes, the fourth the others'
# bytes; staging opens were counted as container operations.
trace=$SLUICE_BIN_DIR/sluice-trace
compare=$SOURCE_DIR/tests/integration/trace/trace_io_attribution.py
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
command -v strace >/dev/null || fail "strace not found (apt-get install strace)"
calls=write,pwrite64,pwritev,copy_file_range,open,openat,fsync,fdatasync,rename,renameat,renameat2

dirs=""
for k in 1 2 3 4; do mkdir -p "$PWD/set$k"; dirs="$dirs${dirs:+,}$PWD/set$k"; done
SLUICE_CAPTURE="$PWD/set*/ckpt.%r" SLUICE_TRACE_DIR=$PWD/tr1 timeout 180 strace -f -qq -e signal=none \
  -e trace=$calls -y -o strace1.txt "$MPIEXEC" -n 4 env LD_PRELOAD="$SLUICE_LIB" \
  "$SLUICE_APPS_DIR/ckpt_sized" write "$dirs" 100000 3000000 20000 5000 >w1.out 2>w1.err ||
  fail "four-set job failed: $(tail -3 w1.err)"
"$trace" io tr1 >io1.txt || fail "sluice-trace io failed"
expect_eq "versions reported" 4 "$(grep -c '^  file ' io1.txt)"
python3 "$compare" strace1.txt io1.txt >cmp1.txt || fail "four sets at once: $(cat cmp1.txt)"
cat cmp1.txt
expect_contains "staging opens are counted apart" "staging file opens" "$(cat io1.txt)"
echo "ok: four overlapping versions, each reported as strace saw its file"

mkdir -p ms
SLUICE_CAPTURE="$PWD/ms/s*/ckpt.%r:$PWD/ms/state.%r:$PWD/ms/log.%r" SLUICE_TRACE_DIR=$PWD/tr2 \
  timeout 180 strace -f -qq -e signal=none -e trace=$calls -y -o strace2.txt "$MPIEXEC" -n 3 \
  env LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/mpi_ckpt_multifile" write "$PWD/ms" 2 --stagger 30 \
  >w2.out 2>w2.err || fail "multi-file job failed: $(tail -3 w2.err)"
"$trace" io tr2 >io2.txt || fail "sluice-trace io failed"
python3 "$compare" strace2.txt io2.txt >cmp2.txt || fail "three sets a step: $(cat cmp2.txt)"
cat cmp2.txt
echo "ok: $(grep -c '^  file ' io2.txt) versions of three sets over two steps, each reported as strace saw its file"
