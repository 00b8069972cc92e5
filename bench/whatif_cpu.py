#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The CPU share one run's processes got, for `sluice-trace whatif --cpu-share` (docs/TRACE.md,
# What if; bench/whatif_cluster.sh and bench/whatif_validate.sh start it beside each run).
# Every 50 ms until SIGTERM (or 600 s), it reads /proc/PID/task/*/schedstat of every process named
# COMM whose environment holds MARKER (e.g. SLUICE_TRACE_DIR=the run's own trace folder: no other
# job's processes carry it), keeping each thread's last (time on a CPU, time runnable but waiting
# for one); then prints "S ON WAIT": S = ON / (ON + WAIT), the share of the time the run's threads
# wanted a CPU that they had one (1 on an idle machine; about cores / runnable tasks under load),
# ON and WAIT in seconds; "- 0 0" when no such process was seen. Root (other users' processes).
# READY, when given, is created once the first pass over /proc is done (start the run after it).
#   bench/whatif_cpu.py MARKER COMM [READY]
import os
import signal
import sys
import time

marker, comm = b"\0" + sys.argv[1].encode() + b"\0", sys.argv[2] + "\n"
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


other = set()  # processes without the marker: environments do not change, never look again
last = {}  # (pid, tid) -> (ns on a CPU, ns waiting for one)
end = time.monotonic() + 600
ready = sys.argv[3] if len(sys.argv) > 3 else None
while not stop and time.monotonic() < end:
    for name in os.listdir("/proc"):
        if not name.isdigit() or name in other:
            continue
        env = read("/proc/%s/environ" % name)
        if env is None or marker not in b"\0" + env:
            if env is not None:
                other.add(name)
            continue
        if read("/proc/%s/comm" % name) != comm.encode():
            continue  # launcher, wrapper, or a rank not yet exec'ed
        try:
            tids = os.listdir("/proc/%s/task" % name)
        except OSError:
            continue
        for tid in tids:
            stat = read("/proc/%s/task/%s/schedstat" % (name, tid))
            if stat:
                on, wait = map(int, stat.split()[:2])
                last[(name, tid)] = (on, wait)
    if ready:
        open(ready, "w").close()
        ready = None
    time.sleep(0.05)
on = sum(v[0] for v in last.values()) / 1e9
wait = sum(v[1] for v in last.values()) / 1e9
print("%s %.6f %.6f" % ("%.4f" % (on / (on + wait)) if on + wait > 0 else "-", on, wait))
