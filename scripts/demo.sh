#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's demo command: installs dependencies, builds, then shows a naive per-rank
# checkpoint program under `mpiexec -n 4` leaving one container per checkpoint set instead of one
# file per rank, a restart with another rank count reading every byte back through the per-rank
# names, the container tool, and the trace summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" >/dev/null
build=${BUILD_DIR:-$root/build}
case "$build" in /*) ;; *) build=$root/$build ;; esac
bin=$build/bin
app=$build/tests/apps/ckpt_writer

demo=$(mktemp -d /tmp/sluice-demo.XXXXXX)
stage=$demo/.stage
cd "$demo"
say() { printf '\n== %s\n' "$*"; }

say "Without sluice: 4 ranks, 3 checkpoint steps, every rank writes its own files"
mkdir plain && (cd plain && mpiexec -n 4 "$app" write 3)
echo "files created: $(find plain -type f | wc -l)"
find plain -type f | sort | sed -n '1,6s/^/  /p'; echo "  ..."

say "With sluice: the same unmodified binary, SLUICE_CAPTURE set"
mkdir captured && cd captured
mpiexec -n 4 -env LD_PRELOAD "$build/lib/libsluice.so" \
    -env SLUICE_CAPTURE 'ckpt.%r:restart_*_%r.dat:chk_*/rank_%r.bin:rank%r/ckpt.dat' \
    -env SLUICE_STAGE_DIR "$stage" -env SLUICE_TRACE_DIR "$demo/trace" \
    "$app" write 3
echo "files on disk: $(find . -type f | wc -l) (one container per checkpoint set)"
find . -type f | sort | sed 's/^/  /'

say "Restart with 3 ranks reading the 4 writers' members through the per-rank names"
mpiexec -n 3 -env LD_PRELOAD "$build/lib/libsluice.so" \
    -env SLUICE_CAPTURE 'ckpt.%r:restart_*_%r.dat:chk_*/rank_%r.bin:rank%r/ckpt.dat' \
    -env SLUICE_STAGE_DIR "$stage" \
    "$app" verify 3 4

say "sluice-ckpt ls / verify"
"$bin/sluice-ckpt" ls -r . | sed -n '1,14p'
"$bin/sluice-ckpt" verify -r . && echo "all members verified"

say "sluice-ckpt extract reproduces the files written without sluice"
"$bin/sluice-ckpt" extract -r -o "$demo/extracted" . >/dev/null
diff -r "$demo/plain" "$demo/extracted" && echo "extracted tree == plain tree (byte for byte)"

say "sluice-trace summary of the capture run"
# (the per-kind event table is long: shown here are the processes, the time decomposition and
# the warnings; run the command yourself for everything)
"$bin/sluice-trace" summary "$demo/trace" | awk '/^== Events by kind|^== OpenCL/{skip=1} /^== Time|^== Warn/{skip=0} !skip'
echo
echo "demo folder: $demo"
