#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Who wrote which stripes of each container, counted from outside: an `strace -f -y -e
trace=write,pwrite64,pwritev,pwritev2,copy_file_range` log of a job, the stripe unit, and this
prints, per container version (temporary file) of at least one stripe of data, its bytes, the bytes written in whole stripes (a
write covering a stripe from its start to its end, or to the end of the file for the file's last
stripe) and every stripe that more than one process wrote into (a smaller version is packed by
design and only listed), then one total line over the larger ones:

    total BYTES WHOLE SHARED_STRIPES

Usage: stripe_writers.py STRACE_LOG STRIPE_UNIT"""
import collections
import re
import sys

CALL = re.compile(r"^(\d+)\s+(write|pwrite64|pwritev2?|copy_file_range)\((.*)$")
RESUMED = re.compile(r"^(\d+)\s+<\.\.\. (\w+) resumed>.*= (-?\d+)")
TMP = re.compile(r"<([^<>]*\.sluice\.tmp\.\d+)>")
DONE = re.compile(r"= (-?\d+)(?: \w+.*)?$")


def parse_offset(name, args):
    """The file offset of a positional write, from strace's argument text (None: not one)."""
    if name == "pwrite64":
        m = re.search(r", (\d+)\) +=|, (\d+)\)?\s*<unfinished", args)
        return int(m.group(1) or m.group(2)) if m else None
    if name.startswith("pwritev"):
        m = re.search(r"\], \d+, (\d+)", args)
        return int(m.group(1)) if m else None
    if name == "copy_file_range":
        # copy_file_range(in, [off_in], out<path>, [off_out], len, flags): the output offset.
        m = re.search(r"<[^<>]*\.sluice\.tmp\.\d+>, \[(\d+)", args)
        return int(m.group(1)) if m else None
    return None


def main():
    log, unit = sys.argv[1], int(sys.argv[2])
    writes = collections.defaultdict(list)  # file -> [(pid, offset, length)]
    pending = {}  # pid -> (file, offset)
    unplaced = 0
    for line in open(log, errors="replace"):
        m = CALL.match(line)
        if m:
            pid, name, args = m.groups()
            t = TMP.search(args)
            if not t:
                continue
            off = parse_offset(name, args)
            if off is None:
                unplaced += 1
                continue
            if line.rstrip().endswith("<unfinished ...>"):
                pending[pid] = (t.group(1), off)
                continue
            d = DONE.search(line)
            if d and int(d.group(1)) > 0:
                writes[t.group(1)].append((pid, off, int(d.group(1))))
            continue
        m = RESUMED.match(line)
        if m and m.group(1) in pending:
            f, off = pending.pop(m.group(1))
            if int(m.group(3)) > 0:
                writes[f].append((m.group(1), off, int(m.group(3))))
    all_bytes = all_whole = all_shared = 0
    for f, ws in sorted(writes.items()):
        end = max(o + n for _, o, n in ws)
        owners = collections.defaultdict(set)
        whole = total = 0
        for pid, o, n in ws:
            total += n
            k = o // unit
            while k * unit < o + n:
                lo, hi = k * unit, min((k + 1) * unit, end)
                owners[k].add(pid)
                if o <= lo and o + n >= hi:
                    whole += hi - lo
                k += 1
        shared = sorted(k for k, p in owners.items() if len(p) > 1)
        if end < 2 * unit:
            # Under one stripe of data: packed by design (docs/COMMIT.md), listed, not counted.
            print(f"{f} bytes {total} packed (ends at {end}) shared-stripes {shared}")
            continue
        print(f"{f} bytes {total} whole {whole} shared-stripes {len(shared)} {shared[:8]}")
        all_bytes, all_whole, all_shared = all_bytes + total, all_whole + whole, all_shared + len(shared)
    if unplaced:
        print(f"unplaced {unplaced} (writes to a container without an offset)")
        all_shared += unplaced
    print(f"total {all_bytes} {all_whole} {all_shared}")


if __name__ == "__main__":
    main()
