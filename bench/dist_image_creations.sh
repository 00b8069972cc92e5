#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Images and samplers created where the context's first device is on a serving rank
# (docs/PERFORMANCE.md, "Object ids"; docs/DISTRIBUTED.md, "Object ids"): in one invocation, on 2
# and 3 ranks (one PoCL device each), tests/apps/cl_dist_image_answers in a context of every device
# but rank 0's:
#   1. replies rank 0 waited for from each serving rank (its MSG_RECV records of tag 0x5D01 in
#      `sluice-trace dump`) for N images, N samplers and N images of a buffer per device (with the
#      program's queries, the other image types and the refusals it makes; see the program's
#      header), and the program's wall time;
#   2. the conformance suite's copy_2D loop (--copy2d ITER --time: two images of changing size per
#      iteration and device, one written, copied, read back blocking), microseconds per image pair,
#      --rounds rounds interleaved.
# --compare DIR adds a second build's libsluice.so (e.g. the tree before a change, a `git archive`
# of a commit built in another folder) as column B, measured in the same rounds, alternating
# (B first in even rounds). Each run's output is checked against the first run's of its rank count
# (a difference is reported, not hidden). It prints figures; it never passes or fails on them.
#
#   bench/dist_image_creations.sh [--build DIR] [--compare DIR] [--n N] [--iters ITER] [--rounds N]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${SLUICE_BUILD:-$here/../build}
compare=""
n=100
iters=50
rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --compare) compare=$(cd "$2" && pwd); shift 2 ;;
    --n) n=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "dist_image_creations.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
lib=$build/lib/libsluice.so
app=$build/tests/apps/cl_dist_image_answers
trace_tool=$build/bin/sluice-trace
for f in "$lib" "$app" "$trace_tool" ${compare:+"$compare/lib/libsluice.so"}; do
  [ -e "$f" ] || { echo "dist_image_creations.sh: $f is missing: build first (cmake --build $build)" >&2; exit 2; }
done
MPIEXEC=${MPIEXEC:-mpiexec}
export POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=${POCL_MAX_PTHREAD_COUNT:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/dist_image_creations.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run LIB RANKS OUT [VAR=value...] args...: the program on RANKS ranks, its stdout in OUT.
run() {
  local l=$1 ranks=$2 out=$3 envs=(); shift 3
  while [[ $1 == *=* ]]; do envs+=("$1"); shift; done
  "$MPIEXEC" -n "$ranks" env SLUICE_OPENCL=distributed "${envs[@]}" LD_PRELOAD="$l" "$app" "$@" \
    >"$out" 2>"$out.err" || echo "(exit $?: $(head -2 "$out.err" | tr '\n' ' '))"
}

# check OUT REF: reports a difference from the reference output (lines of timing left out).
check() {
  [ -e "$2" ] || { grep -v seconds "$1" >"$2"; return; }
  grep -v seconds "$1" | diff -q - "$2" >/dev/null || echo "(output of $1 differs from the first run's)"
}

commit=$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$here/.." diff --quiet HEAD -- runtime 2>/dev/null || commit="$commit (runtime modified)"
echo "== images and samplers on serving ranks, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); B: ${compare:-none}"
labels=(A)
libs=("$lib")
[ -z "$compare" ] || { labels+=(B); libs+=("$compare/lib/libsluice.so"); }

echo
echo "-- replies per serving rank, cl_dist_image_answers $n ($n images, $n samplers and $n images of a buffer per device)"
printf '%-6s %-5s %-28s %s\n' ranks build "replies from rank 1, 2..." "wall s"
for ranks in 2 3; do
  for i in "${!labels[@]}"; do
    t=$work/tr.${labels[$i]}.$ranks
    mkdir -p "$t"
    t0=$(date +%s.%N)
    run "${libs[$i]}" "$ranks" "$work/count.${labels[$i]}.$ranks" SLUICE_TRACE_DIR="$t" "$n"
    t1=$(date +%s.%N)
    check "$work/count.${labels[$i]}.$ranks" "$work/ref.count.$ranks"
    "$trace_tool" dump "$t" >"$t.txt"
    counts=""
    for r in $(seq 1 $((ranks - 1))); do
      counts="$counts $(grep '^rank 0 ' "$t.txt" | grep -c "MSG_RECV peer rank=$r, .*tag=23809" || true)"
    done
    printf '%-6s %-5s %-28s %.2f\n' "$ranks" "${labels[$i]}" "$counts" "$(echo "$t1 - $t0" | bc)"
  done
done

echo
echo "-- copy_2D loop, cl_dist_image_answers 0 --copy2d $iters --time: microseconds per image pair"
printf '%-6s %-5s %s\n' ranks build "rounds..."
declare -A us
for ranks in 2 3; do
  for round in $(seq 1 "$rounds"); do
    order=("${!labels[@]}")
    [ $((round % 2)) = 1 ] || [ ${#labels[@]} = 1 ] || order=(1 0)
    for i in "${order[@]}"; do
      out=$work/copy.${labels[$i]}.$ranks.$round
      run "${libs[$i]}" "$ranks" "$out" 0 --copy2d "$iters" --time
      check "$out" "$work/ref.copy.$ranks"
      v=$(sed -n 's/.*(\([0-9.]*\) us per image pair).*/\1/p' "$out")
      us[${labels[$i]}.$ranks]="${us[${labels[$i]}.$ranks]:-} ${v:-nan}"
    done
  done
  for l in "${labels[@]}"; do
    printf '%-6s %-5s %s\n' "$ranks" "$l" "${us[$l.$ranks]}"
  done
done
