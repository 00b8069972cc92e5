# SPDX-License-Identifier: MIT
# Errors that say why (docs/ENV.md SLUICE_DEBUG, trace/debug.h): a call the distributed backend
# refuses writes its reason to the debug stream under the subsystem "dist", and SLUICE_DEBUG's
# subsystem tags select which lines the stream carries.
# - cl_exec_info_svm hands a kernel SVM pointers: locally PoCL takes them (exit 0); on 2 ranks the
#   distributed platform has no SVM, the call fails with CL_INVALID_OPERATION (exit 1) and
#   SLUICE_DEBUG=dist:FILE holds the reason line and no event line (events are other subsystems).
# - on 3 ranks with SLUICE_DEBUG=mpi,commit:FILE the stream is on (MPI_INIT lines) but carries no
#   dist reason.
# - an unknown tag: one line naming it and the known ones, the program runs as without sluice.
export POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=1
app=$SLUICE_APPS_DIR/cl_exec_info_svm
reason='dist: kernel_exec_info: CL_KERNEL_EXEC_INFO_SVM_PTRS: the devices of a distributed platform have no SVM -> CL_INVALID_OPERATION'

rc_of "$app" >local.out 2>&1
expect_eq "locally, SVM pointers are taken: exit code" 0 "$rc"

rc_of run_dist 2 SLUICE_OPENCL=distributed SLUICE_DEBUG="dist:$PWD/dist-%r.log" "$app" >dist.out 2>dist.err
expect_eq "on 2 ranks the call fails: exit code" 1 "$rc"
expect_contains "the program's own line" "failed: -59" "$(cat dist.err)"
expect_contains "SLUICE_DEBUG=dist: the reason on rank 0" "$reason" "$(cat dist-0.log)"
grep -q 'MPI_INIT\|PROCESS_START' dist-0.log && fail "SLUICE_DEBUG=dist carried event lines: $(head -3 dist-0.log)"
echo "ok: only the dist subsystem's lines"

rc_of run_dist 3 SLUICE_OPENCL=distributed SLUICE_DEBUG="mpi,commit:$PWD/other-%r.log" "$app" >other.out 2>other.err
expect_eq "on 3 ranks the call fails: exit code" 1 "$rc"
expect_contains "SLUICE_DEBUG=mpi,commit: the stream is on" "MPI_INIT" "$(cat other-0.log)"
grep -q 'dist:' other-*.log && fail "SLUICE_DEBUG=mpi,commit carried a dist reason: $(grep 'dist:' other-*.log)"
echo "ok: no dist reason when dist is not selected"

rc_of run_sluice SLUICE_DEBUG=dist,bogus "$app" >tag.out 2>tag.err
expect_eq "an unknown tag: exit code as locally" 0 "$rc"
expect_eq "an unknown tag: stdout as locally" "$(cat local.out)" "$(cat tag.out)"
expect_eq "an unknown tag: one line" 1 "$(wc -l <tag.err)"
expect_contains "an unknown tag: the line" \
  'SLUICE_DEBUG=dist,bogus: unknown subsystem "bogus" (subsystems: core, mpi, ckpt, commit, dsm, opencl, dist, serve, all); debug stream off' \
  "$(cat tag.err)"
