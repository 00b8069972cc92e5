#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sanitizer jobs of the test command (scripts/test.sh runs this after the suite):
#   1. AddressSanitizer + UndefinedBehaviorSanitizer: every unit test (GoogleTest, engine and util
#      code linked statically) and the tools' integration tests that run the sanitized tools only
#      (container and trace readers on real and hostile files);
#   2. ThreadSanitizer: the unit tests of the threaded parts (progress engine and sleeper, trace
#      buffers and strings, commit engine and its messages), then a TSan build of libsluice.so
#      preloaded (behind libtsan) into programs under real mpiexec: the two-phase commit with its
#      write-behind thread and distributed OpenCL (integration/sanitize/sanitize_tsan_mpi.sh), and the
#      job's test of itself, a library with one race put in on purpose that must fail
#      (integration/sanitize/sanitize_tsan_race.sh). docs/TESTING.md says what each covers.
# Each job builds into its own folder (build-asan, build-tsan; $SANITIZE_BUILD_ROOT to move them).
# Any sanitizer report fails the test (halt_on_error); set SLUICE_SANITIZE_JOBS="" to skip.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${SANITIZE_BUILD_ROOT:-.}
jobs=${SLUICE_SANITIZE_JOBS-asan tsan}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
configure() { # DIR SANITIZERS
  cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Debug -DSLUICE_WERROR=ON -DSLUICE_SANITIZE="$2" "${launcher[@]}" >/dev/null
}
for job in $jobs; do
  case "$job" in
    asan)
      b=$root/build-asan
      configure "$b" address,undefined
      # What its tests run: every unit test (each test_* target; test_trace_* call sluice-trace)
      # and the tools; not libsluice.so, the test programs or the benchmarks, which no test here runs.
      unit_targets=($(cmake --build "$b" --target help | sed -n 's/^\.\.\. \(test_[A-Za-z0-9_]*\).*/\1/p'))
      cmake --build "$b" -j "$(nproc)" --target "${unit_targets[@]}" sluice_ckpt_tool sluice_trace_tool >/dev/null
      export ASAN_OPTIONS=halt_on_error=1:detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
      echo "sanitize: ASan+UBSan, unit tests and the tools' integration tests"
      (cd "$b" && ctest --output-on-failure --timeout 300 -j "$(nproc)" \
         -R '^([A-Z]|integration\.container_tool$)')
      unset ASAN_OPTIONS UBSAN_OPTIONS
      ;;
    tsan)
      b=$root/build-tsan
      configure "$b" thread
      targets=(test_progress_engine test_progress_sleeper test_trace_buffer test_trace_strings test_commit_engine
               test_commit_msg)
      # What the mpiexec tests run: the library (and its racy twin), the tools, the programs.
      mpi_targets=(sluice sluice_racecheck sluice_ckpt_tool sluice_trace_tool app_ckpt_sized app_mpi_ckpt_array app_cl_dist_copy_fill
                   app_cl_threads app_cl_multi_device app_cl_events_callbacks app_cl_dist_async
                   app_cl_failed_transfers)
      cmake --build "$b" -j "$(nproc)" --target "${targets[@]}" "${mpi_targets[@]}" >/dev/null
      # die_after_fork=0: the fork tests' children start threads, which TSan allows only so; the
      # one test whose child starts a thread in a forked multi-threaded process is left to the
      # plain suite (TSan cannot follow it: "dup thread with used id"). UCX_MEM_EVENTS=no: MPICH's
      # UCX installs memory hooks that crash under TSan's interceptors.
      export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0 UCX_MEM_EVENTS=no
      echo "sanitize: TSan, threaded parts"
      for t in "${targets[@]}"; do
        "$b/tests/$t" --gtest_brief=1 --gtest_filter=-ProgressEngine.ForkedChildHasNoThreadUntilItUsesOne
      done
      unset TSAN_OPTIONS UCX_MEM_EVENTS
      echo "sanitize: TSan, libsluice.so under mpiexec"
      (cd "$b" && ctest --output-on-failure --timeout 300 -R '^integration\.sanitize_tsan_')
      ;;
    *) echo "sanitize: unknown job $job (asan, tsan)" >&2; exit 2 ;;
  esac
done
