# SPDX-License-Identifier: MIT
# Distributed OpenCL, images made from buffers: tests/apps/cl_dist_image_buffer.c (an ordinary
# program) makes 1D images of two buffers (CL_MEM_OBJECT_IMAGE1D_BUFFER). A buffer written from
# the host on device 0 is read through its image by a kernel on device 1, which writes the other
# image; device 2 reads that image's buffer; a kernel on device 0 changes the buffer and device 1
# reads it through the image; a partial image write, a map of the image for writing and a
# buffer-to-image copy are each read back through the other object on another device; the image
# outlives its buffer; the queries of the pair (CL_IMAGE_BUFFER, CL_MEM_ASSOCIATED_MEMOBJECT, the
# inherited flags, the buffer's reference count) and the codes of invalid creations. Output and
# exit code must be those of as many local devices without sluice, on 1, 2 and 3 ranks, and with
# SLUICE_OPENCL=on. On 3 ranks the trace shows the storage the kernel wrote through the image on
# rank 1 going to rank 2 as the buffer's 16000 bytes, directly; on 2 ranks, that repeated image
# queries, creations and releases wait for no reply.
export POCL_MAX_PTHREAD_COUNT=1
same_as_local_devices "$SLUICE_APPS_DIR/cl_dist_image_buffer"
expect_contains "the image is its buffer locally" "image buffer is the buffer: 1, associated: 1" "$(cat local3.out)"
expect_contains "the kernel's image, read as its buffer on another rank" \
  "kernel's image read as buffer: 16000 bytes, fnv 57b9c8f560fef281" "$(cat dist3.out)"
expect_contains "the buffer's change, read through the image on another rank" \
  "buffer's kernel read as image: 16000 bytes, fnv 7a19eb5adbdc80b9" "$(cat dist3.out)"

"$SLUICE_BIN_DIR/sluice-trace" dump tr3 >dump.txt
moves=$(grep -E 'MPI_(SEND|RECV) peer rank=' dump.txt | grep 'bytes=16000,' || true)
expect_contains "rank 1 sends the storage its kernel wrote through the image to rank 2" "rank 1 " \
  "$(grep 'MPI_SEND peer rank=2,' <<<"$moves")"
expect_contains "rank 2 receives it from rank 1" "rank 2 " "$(grep 'MPI_RECV peer rank=1,' <<<"$moves")"

# The program's 100 rounds of queries (supported formats, CL_IMAGE_ROW_PITCH, CL_MEM_SIZE) are
# answered on rank 0, its 100 image creations on rank 1 wait for no reply (rank 0's own device is
# the context's first: its driver checks each image in-process; docs/DISTRIBUTED.md, "Object ids")
# and its 100 releases neither: of rank 0's replies from rank 1 (tag 0x5D01, runtime/mpi/tags.def)
# none is the loop's, all are the setup's (about 30); each query, creation or release waiting for
# one again would add 100.
"$SLUICE_BIN_DIR/sluice-trace" dump tr2 >dump2.txt
replies=$(grep '^rank 0 ' dump2.txt | grep -c 'MSG_RECV peer rank=1, .*tag=23809' || true)
echo "rank 0 waited for $replies replies on 2 ranks"
[ "$replies" -lt 100 ] || fail "rank 0 waited for $replies replies from rank 1 (expected the setup's, about 30)"
