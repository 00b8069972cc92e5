#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How many processes (not threads) wrote into container files, counted from outside: an
`strace -f -e trace=write,pwrite64,pwritev,pwritev2,copy_file_range,clone,clone3 -y` log. strace -f
names threads by their own id; a thread created with CLONE_THREAD is counted as the process that
created it (the progress thread and the write-behind thread of one rank are one writer).

Usage: container_writers.py STRACE_LOG   (prints the count, then one line per process)"""
import collections
import re
import sys

WRITE = re.compile(r"^(\d+)\s+(write|pwrite64|pwritev2?|copy_file_range)\(.*\.sluice\.tmp\.\d+>.*= (\d+)")
CLONE = re.compile(r"^(\d+)\s+(clone3?)\((.*)")
RESUMED = re.compile(r"^(\d+)\s+<\.\.\. (clone3?) resumed>.*= (\d+)")
RESULT = re.compile(r"= (\d+)\s*$")


def main():
    leader = {}  # thread id -> the process it belongs to
    pending = {}  # tid -> whether its unfinished clone makes a thread
    writes = collections.Counter()
    for line in open(sys.argv[1], errors="replace"):
        m = CLONE.match(line)
        if m:
            tid, _, args = m.groups()
            thread = "CLONE_THREAD" in args
            if "<unfinished" in line:
                pending[tid] = thread
            else:
                r = RESULT.search(line)
                if r and thread:
                    leader[r.group(1)] = tid
            continue
        m = RESUMED.match(line)
        if m and pending.pop(m.group(1), False):
            leader[m.group(3)] = m.group(1)
            continue
        m = WRITE.match(line)
        if m and int(m.group(3)) > 0:
            writes[m.group(1)] += int(m.group(3))
    procs = collections.Counter()
    for tid, n in writes.items():
        while tid in leader:
            tid = leader[tid]
        procs[tid] += n
    print(len(procs))
    for p, n in sorted(procs.items()):
        print(f"process {p} wrote {n} bytes")


if __name__ == "__main__":
    main()
