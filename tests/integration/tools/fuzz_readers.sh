# SPDX-License-Identifier: MIT
# The libFuzzer targets of the two readers of untrusted files (fuzz/): the container reader
# and the trace reader, each run for a bounded time (FUZZ_SECONDS, default 15 in the suite; longer by hand) from seeds made
# here by the real tools. Fails on any crash, leak, sanitizer report or timeout the fuzzer
# finds. Skipped with a message where clang's libFuzzer is not installed.
clang_bin=$(command -v clang || command -v clang-15 || command -v clang-14 || true)
if [ -z "$clang_bin" ] || ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){return 0;}' |
  "$clang_bin" -x c -fsanitize=fuzzer - -o fuzz_probe 2>/dev/null; then
  echo "skipped: clang with libFuzzer not found (Debian: clang libclang-rt-14-dev)"
  exit 0
fi
secs=${FUZZ_SECONDS:-15}
timeout 300 cmake -S "$SOURCE_DIR/fuzz" -B fuzz-build -DCMAKE_C_COMPILER="$clang_bin" >/dev/null
timeout 300 nice cmake --build fuzz-build -j2 >/dev/null

# Seeds: a container with a small, a random, an empty and a sparse member; a trace of `ls`.
mkdir -p w corpus-container corpus-trace traces
printf hello >w/r.0
head -c 5000 /dev/urandom >w/r.1
: >w/r.2
truncate -s 100000 w/r.3 && printf x >>w/r.3
"$SLUICE_BIN_DIR/sluice-ckpt" pack -b 512 -o corpus-container/seed.sluice "$PWD/w/r.%r" w/r.[0-3]
# A layout spec, as text (the layout parser) and in a container's header (its array record).
printf 'header=64,dtype=f8,shape=20x18x16,grid=2x2x1,order=C,nprocs=4,headers=4096,array=8192' >corpus-container/layout.txt
mkdir -p wa
SLUICE_CAPTURE="$PWD/wa/ckpt.%r" SLUICE_LAYOUT="$PWD/wa/ckpt.%r:header=8,dtype=f8,shape=4x3x2" SLUICE_BLOCK_SIZE=512 \
  run_sluice "$SLUICE_APPS_DIR/mpi_ckpt_array" write "$PWD/wa" 4 3 2 8 || fail "the array seed's writer failed"
cp wa/ckpt.@r.sluice corpus-container/array.sluice
# The same on 2 ranks: written by the two-phase writer (512-byte stripes keep the seed small),
# its member records carry chunk checksums.
mkdir -p wa2
SLUICE_CAPTURE="$PWD/wa2/ckpt.%r" SLUICE_LAYOUT="$PWD/wa2/ckpt.%r:header=8,dtype=f8,shape=4x3x2" SLUICE_BLOCK_SIZE=512 SLUICE_STRIPING_UNIT=512 \
  run_dist 2 "$SLUICE_APPS_DIR/mpi_ckpt_array" write "$PWD/wa2" 4 3 2 8 || fail "the 2-rank array seed's writer failed"
cp wa2/ckpt.@r.sluice corpus-container/array2.sluice
SLUICE_TRACE_DIR=$PWD/traces SLUICE_BACKTRACE=4 run_sluice ls w >/dev/null
cp traces/*.sluicetrace corpus-trace/

for t in container trace; do
  # Inputs the fuzzers found once (fuzz/regress/<target>/): each must now pass quickly.
  if ls "$SOURCE_DIR/fuzz/regress/$t/"* >/dev/null 2>&1; then
    timeout 120 ./fuzz-build/fuzz/fuzz_$t -timeout=5 -rss_limit_mb=512 "$SOURCE_DIR/fuzz/regress/$t/"* \
      >regress-$t.log 2>&1 || { tail -30 regress-$t.log >&2; fail "fuzz_$t: a known input fails again"; }
    echo "ok: fuzz_$t passes its $(ls "$SOURCE_DIR/fuzz/regress/$t" | wc -l) regression input(s)"
  fi
  status=0
  timeout $((secs + 60)) nice ./fuzz-build/fuzz/fuzz_$t -max_total_time="$secs" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$PWD/crash-$t-" corpus-$t \
    >fuzz-$t.log 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' fuzz-$t.log)
  cov=$(grep -o 'cov: [0-9]*' fuzz-$t.log | tail -1)
  echo "fuzz_$t: ${runs:-0} executions in ${secs} s, $cov, status $status"
  if [ "$status" -ne 0 ] || ls crash-$t-* >/dev/null 2>&1; then
    tail -40 fuzz-$t.log >&2
    fail "fuzz_$t found a problem (inputs kept as $PWD/crash-$t-*)"
  fi
  [ "${runs:-0}" -gt 100 ] || fail "fuzz_$t ran only ${runs:-0} inputs"
  echo "ok: fuzz_$t clean"
done
