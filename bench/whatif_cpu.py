#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The CPU share one run's processes got, for `sluice-trace whatif --cpu-share` (docs/TRACE.md,
# What if; bench/whatif_cluster.sh and bench/whatif_validate.sh start it beside each run).
# Every 25 ms until SIGTERM (or 600 s), it reads /proc/PID/task/*/schedstat of every process named
# COMM whose environment holds MARKER (e.g. SLUICE_TRACE_DIR=the run's own trace folder: no other
# job's processes carry it), keeping each thread's last (time on a CPU, time runnable but waiting
# for one); then prints "S ON WAIT": S = ON / (ON + WAIT), the share of the time the run's threads
# wanted a CPU that they had one (1 on an idle machine; about cores / runnable tasks under load),
# ON and WAIT in seconds; "- 0 0" when no such process was seen. Root (other users' processes).
# READY, when given, is created once the first pass over /proc is done (start the run after it).
# SAMPLES, when given, gets every pass's figures: a line "T" when a pass starts, then one per thread
# "T RANK TID ON WAIT", T when it was read, CLOCK_MONOTONIC ns (the trace's clock), of the marked
# processes whatever their name (a rank is followed from its `env` wrapper on: the same process,
# whose counters go on past its exec); RANK from the environment (PMI_RANK,
# OMPI_COMM_WORLD_RANK; -1 if none), TID the thread's id in its own PID namespace (as the trace
# records it: the testbed's nodes have their own), ON and WAIT in ns.
#   bench/whatif_cpu.py MARKER COMM [READY [SAMPLES]]
# With --window, the share over a time window instead, from SAMPLES: each thread's counters are
# interpolated linearly between its readings at T0 and T1 (a thread first seen in a later pass
# counts from 0 at the start of the pass before: it began after that); only the threads RANK:TID
# when given (`sluice-trace whatif --window TRACE` prints "T0 T1 RANK:TID...": the commit window at its home and the threads that
# recorded commit events in it). Prints "S ON WAIT" as above.
#   bench/whatif_cpu.py --window SAMPLES T0 T1 [RANK:TID...]
# With --dd, a calibration write in place of dd's: BYTES of zeros into FILE in 1 MiB writes, then
# fdatasync; prints "BYTES WALL ON WAIT" in seconds, ON and WAIT the writing thread's own (its
# schedstat before and after): WALL - ON - WAIT is the time it was blocked, the device's.
#   bench/whatif_cpu.py --dd FILE BYTES
import bisect
import os
import signal
import sys
import time


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def report(on, wait):
    on, wait = on / 1e9, wait / 1e9
    print("%s %.6f %.6f" % ("%.4f" % (on / (on + wait)) if on + wait > 0 else "-", on, wait))


def window(samples, t0, t1, keys):
    series, passes = {}, []
    with open(samples) as f:
        for line in f:
            v = list(map(int, line.split()))
            if len(v) == 1:
                passes.append(v[0])
                continue
            t, rank, tid, on, wait = v
            series.setdefault((rank, tid), []).append((t, on, wait))
    passes.sort()

    def at(pts, t):  # (on, wait) at time t, linear between passes
        first = pts[0][0]
        i = bisect.bisect_left(passes, first)
        if i > 1:  # first seen in a later pass: began after the pass before it started
            pts = [(passes[i - 2], 0, 0)] + pts
        if t <= pts[0][0]:
            return pts[0][1:]
        if t >= pts[-1][0]:
            return pts[-1][1:]
        j = bisect.bisect_right([p[0] for p in pts], t)
        (ta, oa, wa), (tb, ob, wb) = pts[j - 1], pts[j]
        u = (t - ta) / (tb - ta)
        return oa + u * (ob - oa), wa + u * (wb - wa)

    on = wait = 0
    for key, pts in series.items():
        if keys is None or key in keys:
            (o0, w0), (o1, w1) = at(pts, t0), at(pts, t1)
            on, wait = on + o1 - o0, wait + w1 - w0
    report(on, wait)


if sys.argv[1] == "--dd":
    block, left = bytes(1 << 20), int(sys.argv[3])
    stat = lambda: list(map(int, open("/proc/thread-self/schedstat").read().split()[:2]))
    (on0, wait0), t0 = stat(), time.monotonic_ns()
    fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    while left > 0:
        left -= os.write(fd, block[: min(left, len(block))])
    os.fdatasync(fd)
    os.close(fd)
    t1, (on1, wait1) = time.monotonic_ns(), stat()
    print("%s %.6f %.6f %.6f" % (sys.argv[3], (t1 - t0) / 1e9, (on1 - on0) / 1e9, (wait1 - wait0) / 1e9))
    sys.exit(0)
if sys.argv[1] == "--window":
    keys = {tuple(map(int, k.split(":"))) for k in sys.argv[5:]} or None
    window(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), keys)
    sys.exit(0)

marker, comm = b"\0" + sys.argv[1].encode() + b"\0", sys.argv[2] + "\n"
ready = sys.argv[3] if len(sys.argv) > 3 else None
samples = sys.argv[4] if len(sys.argv) > 4 else None
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)


def rank_of(env):
    for var in (b"PMI_RANK=", b"OMPI_COMM_WORLD_RANK=", b"PMIX_RANK="):
        for item in env.split(b"\0"):
            if item.startswith(var) and item[len(var):].isdigit():
                return int(item[len(var):])
    return -1


other = set()  # processes without the marker: environments do not change, never look again
ranks = {}  # pid -> rank
nstid = {}  # (pid, tid) -> the thread's id in its own PID namespace
last = {}  # (pid, tid) -> (ns on a CPU, ns waiting for one), of processes named COMM
lines = []
end = time.monotonic() + 600
while not stop and time.monotonic() < end:
    if samples:
        lines.append("%d\n" % time.monotonic_ns())  # a pass starts: threads first seen later began after it
    for name in os.listdir("/proc"):
        if not name.isdigit() or name in other:
            continue
        if ranks.get(name, -1) < 0:  # not yet seen, or seen before its launcher gave it a rank
            env = read("/proc/%s/environ" % name)
            if env is None or marker not in b"\0" + env:
                if env is not None and name not in ranks:
                    other.add(name)
                continue
            ranks[name] = rank_of(env)
        # A rank is followed from its `env` wrapper on (the same process before its exec: its
        # counters go on), so that its threads' counters are known before its commit starts.
        own = read("/proc/%s/comm" % name) == comm.encode()
        if not own and not samples:
            continue  # launcher, wrapper, or a rank not yet exec'ed
        try:
            tids = os.listdir("/proc/%s/task" % name)
        except OSError:
            continue
        for tid in tids:
            stat = read("/proc/%s/task/%s/schedstat" % (name, tid))
            if not stat:
                continue
            t = time.monotonic_ns()
            on, wait = map(int, stat.split()[:2])
            if own:
                last[(name, tid)] = (on, wait)
            if samples:
                if (name, tid) not in nstid:
                    status = read("/proc/%s/task/%s/status" % (name, tid)) or b""
                    ns = [l.split()[-1] for l in status.split(b"\n") if l.startswith(b"NSpid:")]
                    nstid[(name, tid)] = int(ns[0]) if ns else int(tid)
                lines.append("%d %d %d %d %d\n" % (t, ranks[name], nstid[(name, tid)], on, wait))
    if ready:
        open(ready, "w").close()
        ready = None
    time.sleep(0.025)
if samples:
    with open(samples, "w") as f:
        f.writelines(lines)
report(sum(v[0] for v in last.values()), sum(v[1] for v in last.values()))
