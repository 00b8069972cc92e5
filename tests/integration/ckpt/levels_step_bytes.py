#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks that the per-rank files found under DIR (any depth, by name ckpt.<rank>) hold step STEP
# of tests/apps/mpi_ckpt_levels for ranks 0..NRANKS-1: sizes cycle over the list below and
# byte i = i*31 + rank*17 + step*101 + i/512 (mod 256), 512-byte blocks of one pattern, shifted.
#   levels_step_bytes.py DIR STEP NRANKS     exit 0 if every file is right, else 1 and one line
import os
import sys

d, step, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sizes = [0, 1, (3 << 20) + 12345, 777777, 4096, 65537]
base = bytes((31 * k) & 255 for k in range(512))
shift = [bytes((x + s) & 255 for x in range(256)) for s in range(256)]
files = {f: os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs}
for rank in range(n):
    size = sizes[(rank + step) % 6]
    c = rank * 17 + step * 101
    want = b"".join(base.translate(shift[(c + j) & 255]) for j in range(size // 512 + 1))[:size]
    name = "ckpt.%d" % rank
    got = open(files[name], "rb").read() if name in files else None
    if got != want:
        print("%s: %s, not step %d's %d bytes" % (name, "missing" if got is None else "%d bytes" % len(got), step, size))
        sys.exit(1)
