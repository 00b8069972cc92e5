#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# No function in the source tree (C and C++, tests and tools included; generated code lives in
# the build folder and is not looked at) is longer than 120 lines, counted from the line of its
# opening brace to the line of its closing brace. A function's body opens with a '{' alone at
# the start of a line and closes with the next '}' at the start of a line (the layout
# clang-format gives every function here). Run by integration.build_function_length, also on a
# tree made to fail. Test programs written before the check as one long main are listed below.
#   check-function-length.sh [SOURCE_DIR] [LIMIT]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
limit=${2:-120}
exec python3 - "$root" "$limit" <<'PY'
import os, re, sys

root, limit = sys.argv[1], int(sys.argv[2])
tops = ("runtime", "shim", "tools", "tests", "bench", "fuzz", "contrib")
# Test programs that are one straight scenario in one function, each written before this check;
# they are to be split like the rest (the list may only shrink).
known = {
    "tests/apps/cl_conf_enqueue.c:device_cases", "tests/apps/cl_dist_api_refs.c:main",
    "tests/apps/cl_dist_async.c:main", "tests/apps/cl_dist_image.c:main",
    "tests/apps/cl_dist_image_buffer.c:main",
    "tests/apps/cl_scatter_gather.c:main", "tests/apps/cl_stencil2d.c:main",
}
name_re = re.compile(r"([A-Za-z_][A-Za-z0-9_:~]*)\s*\(")

def name_of(lines, brace):
    """The function's name: the word before the first '(' of the lines above its '{' back to
    the previous declaration, or None where no '(' stands there (a struct, an initializer)."""
    i = brace - 1
    while i >= 0 and lines[i].strip() and not lines[i].rstrip().endswith((";", "}", "*/")) \
            and not lines[i].startswith("#"):
        i -= 1
    head = " ".join(l.strip() for l in lines[i + 1:brace])
    head = re.sub(r"__attribute__\s*\(\(.*?\)\)", "", head)
    if "=" in head.split("(")[0]:
        return None
    m = name_re.search(head)
    return m.group(1) if m else None

def functions(lines):
    """(name, first line, last line) of every function body in the file."""
    start = None
    for i, line in enumerate(lines):
        if line.rstrip() == "{" and start is None:
            start = i
        elif start is not None and line.startswith("}"):
            name = name_of(lines, start)
            if name:
                yield name, start + 1, i + 1
            start = None

bad = 0
for top in tops:
    for d, dirs, fs in os.walk(os.path.join(root, top)):
        dirs[:] = sorted(x for x in dirs if x not in ("build",))
        for f in sorted(fs):
            if not f.endswith((".c", ".h", ".cpp", ".cc", ".hpp")):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, root)
            with open(path, errors="replace") as fh:
                lines = fh.read().split("\n")
            for name, first, last in functions(lines):
                n = last - first + 1
                if n > limit and f"{rel}:{name}" not in known:
                    print(f"check-function-length: {rel}:{first}: {name} is {n} lines (at most {limit})",
                          file=sys.stderr)
                    bad = 1
sys.exit(bad)
PY
