#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Sample pyopencl program (knows nothing of sluice): enumerates platforms and devices, runs a
kernel and an elementwise expression on every device of the first platform, uses events,
sub-buffers and maps, and prints results (never addresses or timings). Run it with Debian's
/usr/bin/python3, which has python3-pyopencl."""
import numpy as np
import pyopencl as cl
import pyopencl.array as cla

platforms = cl.get_platforms()
print("platforms:", len(platforms))
platform = platforms[0]
print("platform:", platform.name, "|", platform.version)
devices = platform.get_devices()
print("devices:", len(devices))
for d in devices:
    print(" ", d.name.split("-")[0], d.max_compute_units > 0, d.global_mem_size > 0)

ctx = cl.Context(devices)
print("context devices match:", [d.int_ptr for d in ctx.devices] == [d.int_ptr for d in devices])
src = """
__kernel void axpy(__global const float *x, __global float *y, float a) {
    size_t i = get_global_id(0); y[i] = a * x[i] + y[i];
}
"""
prog = cl.Program(ctx, src).build()
n = 10000
x = np.arange(n, dtype=np.float32)
for i, dev in enumerate(devices):
    q = cl.CommandQueue(ctx, dev)
    print("queue device matches:", q.device.int_ptr == dev.int_ptr, "context matches:", q.context.int_ptr == ctx.int_ptr)
    y = np.full(n, float(i), dtype=np.float32)
    mf = cl.mem_flags
    dx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    dy = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
    knl = prog.axpy
    ev = knl(q, (n,), None, dx, dy, np.float32(3.0))
    ev.wait()
    print("kernel event status complete:", ev.command_execution_status == cl.command_execution_status.COMPLETE,
          "queue matches:", ev.command_queue.int_ptr == q.int_ptr)
    out = np.empty_like(y)
    cl.enqueue_copy(q, out, dy).wait()
    print("device", i, "axpy ok:", bool(np.allclose(out, 3.0 * x + i)), "sum:", float(out.sum()))
    # Arrays and elementwise expressions (kernels generated and built by pyopencl).
    a = cla.to_device(q, x)
    b = (a * 2 + 1).get()
    print("device", i, "expression ok:", bool(np.allclose(b, 2 * x + 1)))
    # A sub-buffer and a map.
    align = dev.mem_base_addr_align // 8
    sub = dy.get_sub_region(align, 64 * 4)
    print("sub-buffer parent matches:", sub.get_info(cl.mem_info.ASSOCIATED_MEMOBJECT).int_ptr == dy.int_ptr)
    mapped, _ = cl.enqueue_map_buffer(q, sub, cl.map_flags.READ, 0, (64,), np.float32)
    print("mapped first:", float(mapped[0]) == float(3.0 * x[align // 4] + i))
    del mapped
    q.finish()
print("done")
