#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Sample pyopencl program (knows nothing of sluice): images and samplers on every device of the
first platform. An image is written from a numpy array through the first device's queue, each
device turns it with a kernel that samples it (nearest and linear filtering) into another image,
the next device reads the result back, and pyopencl's image helpers (Image.shape, image_from_array,
enqueue_copy between images and buffers, enqueue_fill_image) are used. Prints results, never
addresses. Run it with Debian's /usr/bin/python3, which has python3-pyopencl."""
import hashlib

import numpy as np
import pyopencl as cl

platform = cl.get_platforms()[0]
devices = platform.get_devices()
print("devices:", len(devices))
ctx = cl.Context(devices)
queues = [cl.CommandQueue(ctx, d) for d in devices]
print("image support:", [bool(d.image_support) for d in devices])
fmts = cl.get_supported_image_formats(ctx, cl.mem_flags.READ_WRITE, cl.mem_object_type.IMAGE2D)
print("formats:", len(fmts), sorted((f.channel_order, f.channel_data_type) for f in fmts)[:4])

src = """
__kernel void turn(read_only image2d_t in, sampler_t s, write_only image2d_t out) {
    int x = get_global_id(0), y = get_global_id(1);
    int w = get_image_width(in), h = get_image_height(in);
    float4 p = read_imagef(in, s, (float2)((y + 0.5f) * w / h, (x + 0.5f) * h / w));
    write_imagef(out, (int2)(x, y), p * 0.5f + (float4)(0.25f));
}
"""
prog = cl.Program(ctx, src).build()
h, w = 19, 27
data = (np.arange(h * w * 4, dtype=np.float32).reshape(h, w, 4) % 97) / 97.0
fmt = cl.ImageFormat(cl.channel_order.RGBA, cl.channel_type.FLOAT)
img = cl.Image(ctx, cl.mem_flags.READ_ONLY, fmt, shape=(w, h))
print("image shape:", img.shape, "element size:", img.element_size, "row pitch:", img.row_pitch)
cl.enqueue_copy(queues[0], img, data, origin=(0, 0), region=(w, h)).wait()

def digest(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]

for filt in (cl.filter_mode.NEAREST, cl.filter_mode.LINEAR):
    sampler = cl.Sampler(ctx, False, cl.addressing_mode.CLAMP_TO_EDGE, filt)
    print("sampler:", sampler.normalized_coords, sampler.addressing_mode, sampler.filter_mode)
    for i, q in enumerate(queues):
        out = cl.Image(ctx, cl.mem_flags.WRITE_ONLY, fmt, shape=(w, h))
        prog.turn(q, (w, h), None, img, sampler, out)
        res = np.empty((h, w, 4), np.float32)
        cl.enqueue_copy(queues[(i + 1) % len(queues)], res, out, origin=(0, 0), region=(w, h)).wait()
        print("device", i, "filter", filt, "result", digest(res), "corner", res[0, 0].tolist())

# image_from_array, a fill, copies to and from a buffer, on different devices.
gray = (np.arange(h * w, dtype=np.uint8).reshape(h, w) * 3)
gimg = cl.image_from_array(ctx, gray, 1)
print("from array:", gimg.shape, gimg.format.channel_order, gimg.format.channel_data_type)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, size=h * w)
q_last = queues[-1]
cl.enqueue_copy(q_last, buf, gimg, offset=0, origin=(0, 0), region=(w, h))
back = np.empty_like(gray)
cl.enqueue_copy(queues[0], back, buf).wait()
print("image to buffer:", bool((back == gray).all()))
filled = cl.Image(ctx, cl.mem_flags.READ_WRITE, cl.ImageFormat(cl.channel_order.R, cl.channel_type.UNSIGNED_INT8),
                  shape=(w, h))
cl.enqueue_fill_image(queues[0], filled, np.array([1, 0, 0, 0], np.uint32), (0, 0), (w, h))
cl.enqueue_fill_image(queues[0], filled, np.array([7, 0, 0, 0], np.uint32), (2, 3), (5, 4)).wait()
cl.enqueue_copy(q_last, filled, buf, offset=w, origin=(0, 8), region=(w, 2))
got = np.zeros_like(gray)
cl.enqueue_copy(queues[len(queues) // 2], got, filled, origin=(0, 0), region=(w, h)).wait()
print("fill and buffer to image:", digest(got), int(got[3, 2]), int(got[8, 0]))
