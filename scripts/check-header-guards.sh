#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every header's include guard is derived from its path, so that a moved header cannot keep the
# name of an old layout: runtime/cl/rank0/dag.h guards SLUICE_CL_RANK0_DAG_H, shim/x.h
# SLUICE_SHIM_X_H, tools/sluice-trace/io.h SLUICE_TOOLS_SLUICE_TRACE_IO_H. The installed public
# headers (runtime/sluice*.h) keep the guards programs may already test. Run by
# integration.build_header_guards, also on a tree made to fail.
#   check-header-guards.sh [--fix] [SOURCE_DIR]
set -euo pipefail
fix=0
if [ "${1:-}" = --fix ]; then fix=1; shift; fi
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
exec python3 - "$root" "$fix" <<'PY'
import os, re, sys

root, fix = sys.argv[1], sys.argv[2] == "1"
public = {"runtime/sluice.h", "runtime/sluice_dsm.h"}

def wanted(rel):
    path = rel[len("runtime/"):] if rel.startswith("runtime/") else rel
    return "SLUICE_" + re.sub(r"[^A-Za-z0-9]", "_", path).upper()

bad = 0
for top in ("runtime", "shim", "tools"):
    for d, _, fs in os.walk(os.path.join(root, top)):
        for f in sorted(fs):
            if not f.endswith(".h"):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, root)
            if rel in public:
                continue
            text = open(path).read()
            m = re.search(r"^#ifndef (\w+)\n#define (\w+)\n", text, re.M)
            if not m or m.group(1) != m.group(2):
                print(f"check-header-guards: {rel}: no #ifndef/#define include guard", file=sys.stderr)
                bad = 1
                continue
            want, have = wanted(rel), m.group(1)
            if have == want:
                continue
            if fix:
                text = re.sub(r"\b%s\b" % re.escape(have), want, text)
                open(path, "w").write(text)
            else:
                print(f"check-header-guards: {rel} guards {have}, its path gives {want}", file=sys.stderr)
                bad = 1
sys.exit(bad)
PY
