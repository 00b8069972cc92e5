# SPDX-License-Identifier: MIT
# Distributed OpenCL, creations without a round trip (docs/DISTRIBUTED.md, "Object ids"):
# tests/apps/cl_dist_creations.c (an ordinary program) makes, on every device, a queue, N buffers
# each written and filled at once, a sub-buffer of each, N images each written, and a sampler;
# queries them (sizes, the queue's properties, image pitches, the sampler's modes); reads every
# object back; and prints the codes of three invalid creations rank 0 must now refuse itself (a
# buffer above every device's largest allocation, a misaligned sub-buffer). Its output must be that
# of as many local devices on 2 and 3 ranks. From the traces: rank 0 waits for fewer replies
# (MSG_RECV, tag 0x5D01) from each serving rank than the N objects of one kind of one device:
# the setup's only (the context, the device limits, a queue query), none per creation; with
# SLUICE_DIST_IDS=off each of the 3N creations per device would wait for one. On 3 ranks the
# program then runs the loop of the conformance suite's copy_2D (images of changing sizes made,
# written, copied, read back and released on each device), checked against the source.
# Then the same promise where the context's first device is on a serving rank, whose driver
# answers for images and samplers: tests/apps/cl_dist_image_answers.c makes, in a context of every
# device but the first (rank 1's, or ranks 1 and 2's), N images, N samplers and N 1D images of a
# buffer per device, images of every other type, and creations a driver refuses (images of buffers
# among them: wider than the buffer, above CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, bad row pitches, a
# sub-buffer, incompatible flags, 2D images of a buffer); prints every answer
# about them and the refusals' codes (the same as local devices: each at creation), then (3 ranks)
# the copy_2D loop. Rank 0 waits for fewer replies from each serving rank than the N images of one
# device: a serving rank's driver is asked once per kind of image (format, type, flags; for an
# image of a buffer the buffer's flags too) and set of sampler arguments, and for an image's
# pitches and sizes at the program's first query of them; before, each of the 2N creations per
# device waited for one, and until images of buffers were checked on rank 0 (size within the
# buffer, pitch alignment) each of those N did.
export POCL_MAX_PTHREAD_COUNT=1
# replies_below DUMP RANKS LIMIT WHAT: each serving rank's replies rank 0 waited for, under LIMIT.
replies_below() {
  local r replies
  for r in $(seq 1 $(($2 - 1))); do
    replies=$(grep '^rank 0 ' "$1" | grep -c "MSG_RECV peer rank=$r, .*tag=23809" || true)
    echo "$2 ranks, $4: rank 0 waited for $replies replies from rank $r"
    [ "$replies" -lt "$3" ] ||
      fail "$2 ranks, $4: rank 0 waited for $replies replies from rank $r (expected under $3: none per creation)"
  done
}
# counted TAG PROGRAM N WHAT: PROGRAM (N objects of each kind) on 2 and 3 ranks (the copy_2D loop
# on 3), output the same as local devices, under N replies from each serving rank.
counted() {
  local ranks copy
  for ranks in 2 3; do
    copy=()
    [ "$ranks" == 3 ] && copy=(--copy2d 12)
    same_as_local "$ranks" "$1" "$SLUICE_APPS_DIR/$2" "$3" "${copy[@]}"
    "$SLUICE_BIN_DIR/sluice-trace" dump "${1}tr$ranks" >"${1}dump$ranks.txt"
    replies_below "${1}dump$ranks.txt" "$ranks" "$3" "$4"
  done
}
counted "" cl_dist_creations 40 "rank 0's device first"
expect_contains "the copy_2D loop checks every copy" "copy2d: 12 iterations on 3 devices, 0 mismatches" \
  "$(cat dist3.out)"

counted first cl_dist_image_answers 100 "the context's first device on rank 1"
expect_contains "an image of a buffer as wide as it, made twice" \
  "a 1D image buffer as wide as its buffer: 0 (created) 0 (created)" "$(cat firstdist2.out)"
expect_contains "refused twice: wider than its buffer" "a 1D image buffer wider than its buffer: -" \
  "$(cat firstdist2.out)"
expect_contains "images of every type read back" "3D image: read back as written" "$(cat firstdist2.out)"
expect_contains "a refusal at creation" "a format the driver lacks (CL_RGB, CL_UNORM_INT8): -" \
  "$(cat firstdist2.out)"
expect_contains "the copy_2D loop on serving ranks only" "copy2d: 12 iterations on 2 devices, 0 mismatches" \
  "$(cat firstdist3.out)"

# A failure the serving rank meets after rank 0 went on is not lost: rank 1's device limited to
# 256 MiB allocations (POCL_MEMORY_LIMIT=1), rank 0's not, a 300 MiB buffer fits the context (rank
# 0's device), so its creation succeeds; rank 1 fails it there, and its first use on rank 1 fails
# with CL_MEM_OBJECT_ALLOCATION_FAILURE (-4): the fill's event status, its wait and a blocking
# read CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST (-14). Rank 0's device uses it. (The preload
# goes in after the shell has set rank 1's limit.)
set +e
timeout 120 "$MPIEXEC" -n 2 env POCL_DEVICES=pthread SLUICE_OPENCL=distributed sh -c \
  '[ "$PMI_RANK" != 1 ] || export POCL_MEMORY_LIMIT=1; LD_PRELOAD="$1" exec "$0" --oversize 300' \
  "$SLUICE_APPS_DIR/cl_dist_creations" "$SLUICE_LIB" >big.out 2>big.err
rc=$?
set -e
cat big.out
expect_eq "the oversized buffer's run: exit code" 0 "$rc"
expect_contains "the creation succeeds (it fits rank 0's device)" "a buffer of 300 MiB: 0" "$(cat big.out)"
expect_contains "rank 0's device fills and reads it" \
  "device 0: fill 0, wait 0, status 0; blocking read 0, the pattern" "$(cat big.out)"
expect_contains "its first use on rank 1 fails with the allocation failure" \
  "device 1: fill 0, wait -14, status -4; blocking read -14" "$(cat big.out)"
