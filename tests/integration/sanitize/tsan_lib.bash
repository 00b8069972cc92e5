# SPDX-License-Identifier: MIT
# Helpers of the sanitize_tsan_* tests (sourced; not a test itself): programs under real mpiexec
# with a ThreadSanitizer build of libsluice.so preloaded behind libtsan, which must be the first
# library of the process (MPICH and PoCL are not instrumented). They need the build of the TSan job
# of scripts/sanitize.sh (-DSLUICE_SANITIZE=thread), which runs them; any other build skips them.
tsan_rt=$(ldd "$SLUICE_LIB" | awk '/libtsan\.so/ {print $3}')
if [ -z "$tsan_rt" ]; then
  echo "SKIP: $SLUICE_LIB is not a ThreadSanitizer build (scripts/sanitize.sh runs this test)"
  exit 77
fi
# The first report ends its rank with status 66, so the job fails. Suppressions name frames of
# MPICH and PoCL only (tests/tsan.supp); never sluice's. UCX_MEM_EVENTS=no: MPICH's UCX installs
# memory hooks that crash under TSan's interceptors.
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$SOURCE_DIR/tests/tsan.supp"
export UCX_MEM_EVENTS=no POCL_MAX_PTHREAD_COUNT=1 POCL_DEVICES=pthread

# tsan_run NAME LIB RANKS CMD...: CMD on RANKS ranks (bounded by timeout) with libtsan and LIB
# preloaded; stdout in NAME.out, stderr in NAME.err, each rank's own exit status in
# NAME.status.RANK (mpiexec merges them); returns mpiexec's exit status.
tsan_run() {
  local name=$1 lib=$2 n=$3
  shift 3
  timeout 120 "$MPIEXEC" -n "$n" sh -c 'p=$1 s=$2; shift 2; LD_PRELOAD=$p "$@"; r=$?; echo $r >"$s.$PMI_RANK"; exit $r' \
    sh "$tsan_rt $lib" "$PWD/$name.status" "$@" >"$name.out" 2>"$name.err"
}

# tsan_clean NAME RANKS CMD...: tsan_run with the TSan libsluice; fails on any ThreadSanitizer
# report (quoting it) or a non-zero exit status.
tsan_clean() {
  local name=$1 rc=0
  shift
  tsan_run "$name" "$SLUICE_LIB" "$@" || rc=$?
  if grep -q -E '(WARNING|ERROR|FATAL): ThreadSanitizer' "$name.err"; then
    fail "$name: ThreadSanitizer report: $(grep -m1 -A24 'WARNING: ThreadSanitizer' "$name.err")"
  fi
  expect_eq "$name: exit code (no ThreadSanitizer report)" 0 "$rc"
}
