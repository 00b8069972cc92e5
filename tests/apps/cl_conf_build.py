#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Sample pyopencl program (knows nothing of sluice): a program per device built for that device
alone, its build log and status asked on every device of the program (pyopencl raises on a
failed query), and its kernel run on the device it was built for. Run it with Debian's
/usr/bin/python3, which has python3-pyopencl."""
import numpy as np
import pyopencl as cl

devices = cl.get_platforms()[0].get_devices()
ctx = cl.Context(devices)
src = "__kernel void k(__global int *v, int x) { v[get_global_id(0)] = x; }"
for i, dev in enumerate(devices):
    prog = cl.Program(ctx, src).build(devices=[dev])
    logs = [prog.get_build_info(d, cl.program_build_info.LOG) for d in devices]
    print("device", i, "built alone: logs", len(logs), "all empty", all(l.strip() == "" for l in logs),
          "its status", prog.get_build_info(dev, cl.program_build_info.STATUS))
    q = cl.CommandQueue(ctx, dev)
    out = np.zeros(4, dtype=np.int32)
    buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    prog.k(q, (4,), None, buf, np.int32(i + 1))
    cl.enqueue_copy(q, out, buf)
    print("kernel of device", i, "program:", out.tolist())
