#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The multi-node row of docs/PERFORMANCE.md's scale table: bench/commit_scale.sh (messages, bytes,
# container metadata and stage-folder calls per version, `mpiexec -n N true`) and bench/lifecycle.sh
# (MPI_Init/MPI_Finalize, idle progress CPU, threads, memory per rank) run on the emulated cluster
# (tests/cluster/testbed.sh, docs/CLUSTER_TESTBED.md), ranks round robin over the nodes, each node
# staging in its own /dev/shm; then bench/scale_projection.py projects the counts to 1k, 10k and
# 100k ranks. Prints tables; never passes or fails. Needs root (the testbed's namespaces).
#
#   bench/testbed_scale.sh [--nodes N (8)] [--max RANKS (32)] [--idle S (3)] [--dir DIR] [BUILD_DIR]
#
# DIR (default BUILD_DIR/testbed-scale) holds the testbed while it runs; it is taken down at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nodes=8
max=32
idle=3
dir=
build=$here/../build
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --idle) idle=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "testbed_scale.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
build=$(cd "$build" && pwd)
dir=$(realpath -m "${dir:-$build/testbed-scale}") # absolute: the runs enter the shared folder first
testbed=$here/../tests/cluster/testbed.sh
"$testbed" up --nodes "$nodes" --dir "$dir" > /dev/null
trap '"$testbed" down --dir "$dir" > /dev/null 2>&1 || true' EXIT
out=$dir/shared/scale
mkdir -p "$out"
cd "$dir/shared"
echo "# testbed: $nodes nodes (tests/cluster/testbed.sh), ranks round robin; load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$testbed" run --dir "$dir" env TMPDIR="$out" NODE_STAGE=1 "$here/commit_scale.sh" "$build" "$max" | tee "$out/commit_scale.out"
ranks=()
n=$nodes
while [ "$n" -le "$max" ]; do ranks+=("$n"); n=$(( n * 2 )); done
echo
"$testbed" run --dir "$dir" env TMPDIR="$out" "$here/lifecycle.sh" --build "$build" --idle "$idle" \
  --modes "plain capture" "${ranks[@]}"
echo
python3 "$here/scale_projection.py" "$out/commit_scale.out"
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
