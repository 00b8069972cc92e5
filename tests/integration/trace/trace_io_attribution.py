#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compares `sluice-trace io`'s report with what strace saw, per container version: the bytes and
write calls that reached each version's temporary file, its creates, fsync/fdatasync calls and
renames. Prints one line per version and exits 1 on the first difference.

Usage: trace_io_attribution.py STRACE_LOG IO_REPORT"""
import collections
import re
import sys

TMP = r"[^<>\"]*\.sluice\.tmp\.\d+"


def from_strace(path):
    seen = collections.defaultdict(collections.Counter)
    pending = {}
    for line in open(path, errors="replace"):
        pid = line.split(None, 1)[0]
        m = re.match(r"^\d+\s+<\.\.\. (\w+) resumed>.*= (-?\d+)", line)
        if m and pid in pending:
            name, f = pending.pop(pid)
            if int(m.group(2)) > 0 and name in ("write", "pwrite64", "pwritev", "copy_file_range"):
                seen[f]["writes"] += 1
                seen[f]["bytes"] += int(m.group(2))
            elif int(m.group(2)) >= 0 and name in ("create", "open"):
                seen[f][name] += 1
            continue
        m = re.match(r"^\d+\s+(\w+)\((.*)", line)
        if not m:
            continue
        name, rest = m.groups()
        if name in ("write", "pwrite64", "pwritev", "copy_file_range"):
            t = re.search(r"<(" + TMP + r")>", rest if name != "copy_file_range" else rest.split(",", 2)[-1])
            if not t:
                continue
            if rest.rstrip().endswith("<unfinished ...>"):
                pending[pid] = (name, t.group(1))
                continue
            d = re.search(r"= (\d+)$", rest.rstrip())
            if d and int(d.group(1)) > 0:
                seen[t.group(1)]["writes"] += 1
                seen[t.group(1)]["bytes"] += int(d.group(1))
        elif name in ("openat", "open"):
            t = re.search(r'"(' + TMP + r')", ([A-Z_|]+)', rest)
            if not t:
                continue
            kind = "create" if "O_CREAT" in t.group(2) else "open"
            if rest.rstrip().endswith("<unfinished ...>"):
                pending[pid] = (kind, t.group(1))
            elif not re.search(r"= -1", rest):
                seen[t.group(1)][kind] += 1
        elif name in ("fsync", "fdatasync"):
            t = re.search(r"<(" + TMP + r")>", rest)
            if t:
                seen[t.group(1)][name] += 1
        elif name in ("rename", "renameat", "renameat2"):
            t = re.search(r'"(' + TMP + r')"', rest)
            if t and not re.search(r"= -1", rest):
                seen[t.group(1)]["rename"] += 1
    return seen


def from_report(path):
    """Version blocks of the report (from its "... version N (home rank R)" line), by file."""
    out, cur, file = {}, None, None

    def close():
        if cur is not None and file:
            out[file] = cur

    for line in open(path):
        if re.match(r"^\S.* version \d+ \(home rank", line):
            close()
            cur, file = collections.Counter(), None
            continue
        if cur is None:
            continue
        m = re.match(r"^  file +(\S+)", line)
        if m:
            file = m.group(1)
        m = re.match(r"^  requests +(\d+) writes, (\d+) bytes", line)
        if m:
            cur["writes"], cur["bytes"] = int(m.group(1)), int(m.group(2))
        m = re.match(r"^  metadata ops +(.*)\(", line)
        if m:
            for op, n in re.findall(r"(\w+) (\d+)", m.group(1)):
                cur["report " + op] = int(n)
    close()
    return out


def main():
    seen, report = from_strace(sys.argv[1]), from_report(sys.argv[2])
    bad = 0
    if not report:
        print("the report names no version file")
        return 1
    for f, s in sorted(seen.items()):
        r = report.get(f)
        if r is None:
            print(f"{f}: strace saw {dict(s)}, the report has no such version")
            bad = 1
            continue
        checks = [("bytes", s["bytes"], r["bytes"]), ("writes", s["writes"], r["writes"]),
                  ("creates", s["create"], r["report create"]), ("renames", s["rename"], r["report rename"]),
                  ("fdatasyncs", s["fdatasync"], r["report fdatasync"])]
        # The report's fsync count also holds the folder's fsync for this version: at least
        # every fsync of the file itself.
        if r["report fsync"] < s["fsync"]:
            checks.append(("fsyncs (at least)", s["fsync"], r["report fsync"]))
        diff = [f"{what}: strace {a}, report {b}" for what, a, b in checks if a != b]
        print(f"{f}: {s['bytes']} bytes in {s['writes']} writes, {s['create']} create, "
              f"{s['fsync']} fsync, {s['fdatasync']} fdatasync, {s['rename']} rename"
              + ("" if not diff else "  DIFFERS: " + "; ".join(diff)))
        bad |= bool(diff)
    for f in report:
        if f not in seen:
            print(f"{f}: in the report, strace saw nothing")
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
