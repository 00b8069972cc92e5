# SPDX-License-Identifier: MIT
# Distributed OpenCL, images and samplers: tests/apps/cl_dist_image.c (an ordinary program) writes
# a 2D image with a host row pitch through device 1's queue, samples it in a kernel on device 2
# (images and a sampler as kernel arguments), reads the results through device 0's queue, then
# copies images (image to image, image to buffer, buffer to image), fills, maps for reading and
# for writing, writes a 3D image and reads part of it with host pitches on another device, maps a
# CL_MEM_USE_HOST_PTR 2D array (the program's own memory), samples a float image linearly,
# queries images and samplers, and prints the return code of 13 invalid calls (the driver's own:
# CL_INVALID_IMAGE_SIZE, unsupported formats, bounds, overlap, format mismatch, host pointer...).
# Its output and exit code must be those of as many local devices without sluice, on 1, 2 and 3
# ranks, and with SLUICE_OPENCL=on; each distributed run starts with an empty PoCL kernel cache
# in the scratch folder (PoCL forks its linker on the serving ranks). On 3 ranks the trace shows
# the image moving rank 1 -> rank 2 directly, packed (37 x 23 pixels x 4 bytes), and the kernel's
# output from rank 2 to rank 0's device.
export POCL_MAX_PTHREAD_COUNT=1
same_as_local_devices "$SLUICE_APPS_DIR/cl_dist_image"
expect_contains "images work locally" "image support 1" "$(cat local3.out)"
expect_contains "the kernel's image, read on rank 0's device" "kernel output image: 3404 bytes" "$(cat dist3.out)"
expect_contains "an invalid size is the driver's error" "width 0: -61" "$(cat dist3.out)"

"$SLUICE_BIN_DIR/sluice-trace" dump tr3 >dump.txt
bytes=3404 # 37 x 23 RGBA8 pixels, packed
moves=$(grep -E 'MPI_(SEND|RECV) peer rank=' dump.txt | grep "bytes=$bytes," || true)
echo "$moves" | sed 's/^/  /'
expect_contains "rank 1 sends the image it was written on to rank 2" "rank 1 " \
  "$(echo "$moves" | grep 'MPI_SEND peer rank=2,')"
expect_contains "rank 2 receives it from rank 1" "rank 2 " "$(echo "$moves" | grep 'MPI_RECV peer rank=1,')"
expect_contains "the kernel's output image goes from rank 2 to rank 0's device" "rank 2 " \
  "$(echo "$moves" | grep 'MPI_SEND peer rank=0,')"
expect_contains "rank 2's device receives it device to device" "rank 2 " \
  "$(grep -E 'CL_TRANSFER.*=2, bytes='"$bytes" dump.txt)"
