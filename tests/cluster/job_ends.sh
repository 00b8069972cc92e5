#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How many MPI jobs across nodes end (docs/CLUSTER_TESTBED.md, "Job ends"), by hand:
#   job_ends.sh [--runs N] [--ranks R] [--nodes M] [--finalize-fix auto|on|off] PROGRAM [ARGS...]
# brings up its own testbed (/var/tmp/sluice-job-ends), runs `mpiexec -n R PROGRAM ARGS` N times
# (default 50 runs, 3 ranks on 3 nodes, round robin), each given 20 s to end, prints how many
# ended and the mean time of a run, and takes the testbed down. Example, without and with the fix:
#   job_ends.sh --finalize-fix off build/tests/apps/mpi_ring
#   job_ends.sh build/tests/apps/mpi_ring
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=50 ranks=3 nodes=3 fix=auto
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --finalize-fix) fix=$2; shift 2 ;;
    -*) echo "job_ends.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "job_ends.sh: no program (job_ends.sh [options] PROGRAM [ARGS...])" >&2; exit 2; }
case $1 in */*) prog=$(readlink -f "$1") ;; *) prog=$(command -v "$1") || { echo "job_ends.sh: $1 not found" >&2; exit 2; } ;; esac
shift
dir=/var/tmp/sluice-job-ends
trap '"$here/testbed.sh" down --dir "$dir"' EXIT
"$here/testbed.sh" up --dir "$dir" --nodes "$nodes" --finalize-fix "$fix"
cd "$dir/shared"
ended=0
t0=$(date +%s.%N)
for ((i = 1; i <= runs; i++)); do
  if timeout -k 5 20 "$here/testbed.sh" run --dir "$dir" mpiexec -n "$ranks" "$prog" "$@" > "run.$i.out" 2>&1; then
    ended=$((ended + 1))
  fi
done
echo "job_ends: $ended of $runs runs of $(basename "$prog")${1:+ $*} on $ranks ranks over $nodes nodes ended within 20 s" \
  "(finalize fix $fix), $(echo "scale=2; ($(date +%s.%N) - $t0) / $runs" | bc) s per run"
