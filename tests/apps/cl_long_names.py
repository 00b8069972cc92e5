#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Sample pyopencl program (knows nothing of sluice) with strings longer than a guess: it prints
every device's name, version and platform whole, with their lengths, and runs a kernel whose name
is 244 bytes, through clCreateKernel and through clCloneKernel, with an argument of a struct type
whose name is 120 bytes. Run it with Debian's /usr/bin/python3, which has python3-pyopencl."""
import numpy as np
import pyopencl as cl

KERNEL = "k_" + "long_kernel_name_" * 14 + "_end"  # 244 bytes: PoCL 3.1 names a file after it (255 at most)
TYPE = "t_" + "long_struct_type_" * 7 + "end"  # 124 bytes
SRC = """
typedef struct { int add; int mul; } %s;
__kernel void %s(__global int *v, %s p) { v[get_global_id(0)] = (int)get_global_id(0) * p.mul + p.add; }
""" % (TYPE, KERNEL, TYPE)

platform = cl.get_platforms()[0]
devices = platform.get_devices()
print("platform", platform.name, "(%d bytes)" % len(platform.name))
for i, d in enumerate(devices):
    print("device", i, "name", d.name, "(%d bytes)" % len(d.name))
    print("device", i, "version", d.version, "(%d bytes)" % len(d.version))
ctx = cl.Context(devices)
prog = cl.Program(ctx, SRC).build(options="-cl-kernel-arg-info")
print("kernel name length", len(KERNEL))
param = np.array([(5, 3)], dtype=[("add", np.int32), ("mul", np.int32)])
for i, dev in enumerate(devices):
    q = cl.CommandQueue(ctx, dev)
    k = cl.Kernel(prog, KERNEL)
    print("device", i, "kernel's own name is whole", k.function_name == KERNEL,
          "argument type is whole", k.get_arg_info(1, cl.kernel_arg_info.TYPE_NAME) == TYPE)
    for how, kern in (("created", k), ("cloned", k.clone())):
        out = np.zeros(8, dtype=np.int32)
        buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
        kern.set_arg(0, buf)
        kern.set_arg(1, param)
        cl.enqueue_nd_range_kernel(q, kern, (8,), None)
        cl.enqueue_copy(q, out, buf)
        print("device", i, how, "kernel:", out.tolist())
