# SPDX-License-Identifier: MIT
# Distributed OpenCL images from Python: tests/apps/cl_pyopencl_image.py (pyopencl's Image,
# Sampler, image_from_array, enqueue_copy between images, arrays and buffers, enqueue_fill_image,
# a kernel sampling an image with nearest and linear filtering on every device, each result read
# back through the next device's queue) prints on 2 and 3 ranks exactly what it prints with as
# many local devices, with an empty pyopencl and PoCL cache; stderr empty, exit 0. Skipped where
# python3-pyopencl is not installed.
export POCL_MAX_PTHREAD_COUNT=1
/usr/bin/python3 -c 'import pyopencl' 2>/dev/null || { echo "python3-pyopencl is not installed: skipped"; exit 77; }
script="$SOURCE_DIR/tests/apps/cl_pyopencl_image.py"
for n in 2 3; do
  devs=$(printf 'pthread%.0s ' $(seq "$n"))
  mkdir "xdg.local$n" "xdg.dist$n" "pocl.$n"
  POCL_DEVICES="$devs" XDG_CACHE_HOME="$PWD/xdg.local$n" timeout 120 /usr/bin/python3 "$script" >"local$n.out" 2>&1 ||
    fail "the pyopencl program fails with $n local devices: $(tail -3 "local$n.out")"
  POCL_CACHE_DIR="$PWD/pocl.$n" POCL_DEVICES=pthread XDG_CACHE_HOME="$PWD/xdg.dist$n" rc_of timeout 120 "$MPIEXEC" -n "$n" \
    env SLUICE_OPENCL=distributed LD_PRELOAD="$SLUICE_LIB" /usr/bin/python3 "$script" >"dist$n.out" 2>"dist$n.err"
  expect_eq "pyopencl images on $n ranks: exit code" 0 "$rc"
  diff "local$n.out" "dist$n.out" >diff.out || fail "pyopencl images on $n ranks differ: $(head -20 diff.out)"
  [ ! -s "dist$n.err" ] || fail "stderr not empty on $n ranks: $(head -5 "dist$n.err")"
  expect_eq "every device sampled twice ($n ranks)" $((2 * n)) "$(grep -c '^device .* result ' "dist$n.out")"
  expect_contains "the image went through a buffer and back ($n ranks)" "image to buffer: True" "$(cat "dist$n.out")"
  echo "ok: pyopencl images identical on $n ranks"
done
