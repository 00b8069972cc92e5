# SPDX-License-Identifier: MIT
# The S-DSM paper's video pipeline over sluice's DSM (tests/apps/mpi_dsm_video.c): an input
# role makes synthetic frames into shared buffers, 1 to 4 process roles run a 3x3 edge stencil
# then a Hough transform, the output role writes the frames; roles are driven only by exclusive
# writes and notifications. Its output must equal, frame by frame, the single-process
# reference's, with 3 to 6 ranks (odd and even); so must the hand-written MPI version's, and the
# DSM version's with --opencl (the stencil as an OpenCL kernel on each process role's PoCL device,
# through sluice's OpenCL layer: the trace must show every frame's kernel on a process role).
app="$SLUICE_APPS_DIR/mpi_dsm_video"
frames=10 w=160 h=120
fs=$((w * h))
timeout 60 "$app" --reference $frames $w $h ref.raw 2>/dev/null
expect_eq "reference size" $((frames * fs)) "$(stat -c %s ref.raw)"
# The frames must be worth comparing: lines and edges drawn, no two frames alike.
distinct=$(for i in $(seq 0 $((frames - 1))); do tail -c +$((i * fs + 1)) ref.raw | head -c $fs | md5sum; done |
           sort -u | wc -l)
expect_eq "reference frames all differ" $frames "$distinct"
lines=$(head -c $fs ref.raw | tr -cd '\377' | wc -c)
[ "$lines" -gt 100 ] || fail "frame 0 has only $lines line pixels"
compare() { # label file: frame by frame against the reference
  expect_eq "$1: size" $((frames * fs)) "$(stat -c %s "$2")"
  for i in $(seq 0 $((frames - 1))); do
    cmp -s <(tail -c +$((i * fs + 1)) ref.raw | head -c $fs) <(tail -c +$((i * fs + 1)) "$2" | head -c $fs) ||
      fail "$1: frame $i differs from the reference"
  done
  echo "ok: $1: $frames frames equal to the reference"
}
for n in 3 4 5 6; do
  rm -f out.raw
  SLUICE_DSM_TIMEOUT=30 timeout 120 "$MPIEXEC" -n $n "$app" $frames $w $h out.raw 2>err || fail "n=$n exited $?"
  expect_contains "n=$n all frames out" "frames $frames " "$(cat err)"
  compare "dsm pipeline, $((n - 2)) process roles" out.raw
done
rm -f out.raw
timeout 120 "$MPIEXEC" -n 4 "$SLUICE_APPS_DIR/mpi_dsm_video_p2p" $frames $w $h out.raw 2>/dev/null
compare "hand-written MPI pipeline" out.raw
# OpenCL process roles: a fresh PoCL kernel cache (the kernel is built in every role), one
# PoCL thread per device (2 cores).
export POCL_CACHE_DIR="$PWD/pocl-cache" POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=1
for n in 3 4; do
  rm -rf out.raw trace
  SLUICE_TRACE_DIR="$PWD/trace" SLUICE_DSM_TIMEOUT=60 timeout 120 "$MPIEXEC" -n $n "$app" --opencl $frames $w $h out.raw \
    2>err || fail "--opencl n=$n exited $?"
  for r in $(seq 1 $((n - 2))); do
    expect_contains "n=$n role $r on its device" "process role $r: edge kernel on OpenCL device" "$(cat err)"
  done
  compare "dsm pipeline, $((n - 2)) OpenCL process roles" out.raw
  kernels=$("$SLUICE_BIN_DIR/sluice-trace" dump trace | grep 'CL_ENQUEUE function="clEnqueueNDRangeKernel"')
  expect_eq "n=$n one kernel per frame, through sluice" $frames "$(wc -l <<<"$kernels")"
  roles=$(sed 's/^rank \([0-9]*\) .*/\1/' <<<"$kernels" | sort -u | tr '\n' ' ')
  expect_eq "n=$n kernels on the process roles only" "$(seq -s ' ' 1 $((n - 2))) " "$roles"
done
