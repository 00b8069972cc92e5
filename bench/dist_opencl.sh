#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Distributed OpenCL benchmark driver (docs/PERFORMANCE.md, "Distributed OpenCL"): in one
# invocation, on the same machine and the same two ranks, measures side by side
#   1. latency: an empty kernel + clFinish on a local device (one process, no sluice), on a remote
#      device (rank 1, under sluice's distributed OpenCL), and a raw MPI 0-byte ping-pong;
#   2. bandwidth: blocking write and read of 1 KiB..256 MiB to the local and to the remote device,
#      against raw MPI point-to-point between ranks 0 and 1 (send + 0-byte answer, and the
#      reverse), with the ratio remote / MPI (the target: at least 0.90 from 16 MiB up);
#   3. strong scaling of the sample programs of docs/DISTRIBUTED.md ("Sample programs") from 1 to 4
#      ranks (one device per rank): compute time (the sample's --time line on stderr), whole-job
#      wall time, speedup and efficiency against 1 rank, and whether stdout is the same as with 1
#      rank.
# --compare DIR adds a second build's libsluice.so (e.g. the tree before a change, built in another
# folder) as a column "remote B" and its ratio next to each remote figure, measured in the same
# rounds, interleaved with the others (remote B first in even rounds): before and after in one run. --compare-env "VAR=VALUE ..."
# runs remote B with these variables set (with this build's library unless --compare names
# another): one setting against another, e.g. --compare-env SLUICE_HELPER_CPUS=inherit.
# The three measurements of 1 and 2 run --rounds times, interleaved, and each row keeps its best
# round (lowest median latency, highest GB/s), so that a burst of load from other processes on a
# shared machine hits one round, not one column. It prints figures; it never passes or fails on
# them. The binaries are sluice-bench-dist_opencl and sluice-bench-dist_mpi_pingpong (their
# headers say what each number is).
#
#   bench/dist_opencl.sh [--build DIR] [--rounds N] [--quick] [--sizes "1K 16M"] [--volume SIZE]
#                        [--max-reps N] [--lat-reps N] [--no-latency] [--no-bandwidth]
#                        [--no-scaling] [--max-ranks N] [--samples "cl_nbody ..."]
#                        [--args SAMPLE "ARGS"]... [--local-device N] [--remote-query DQL]
#                        [--label TEXT] [--compare DIR] [--compare-env "VAR=VALUE ..."]
#                        [--trace DIR] [--keep]
#
# --trace DIR keeps a sluice trace of the first round's remote run in DIR/remote (and of the
# --compare build's in DIR/remoteB): `sluice-trace perfetto` shows where a round trip's time goes
# (each message's send and receive, the serving rank's device command).
# Devices: POCL_DEVICES=pthread with POCL_MAX_PTHREAD_COUNT=1 (unless set) on every rank, so a
# device is one core wherever it is. "Local" is device --local-device (default 0, as numbered by
# sluice-bench-dist_opencl --list) of a process without sluice; "remote" is the first device
# that --remote-query (default "SELECT ALL WHERE node = 1") selects on a 2-rank job. With all
# ranks on one node, remote means another process over MPI's shared memory. MPIEXEC picks the
# launcher (default mpiexec; Open MPI is told to allow root and oversubscription).
# Defaults: 2 rounds, 1K..256M; --quick is 1 round of 1K 64K 1M and scaling on 2 ranks. --label
# names the build in the header when it is not a git checkout (e.g. a `git archive` of a commit).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${SLUICE_BUILD:-$here/../build}
bench_opts=()
rounds=2
do_latency=1
do_bandwidth=1
do_scaling=1
max_ranks=4
samples="cl_matmul_split cl_nbody cl_stencil2d cl_broadcast"
# Problem sizes for scaling: about a second of compute on one device of this machine.
declare -A sample_args=([cl_matmul_split]="640" [cl_nbody]="4096 10" [cl_stencil2d]="2048 2048 100"
                        [cl_broadcast]="2097152 8" [cl_multi_device]="")
keep=0
compare=""
compare_env=() # remote B's extra variables (--compare-env)
trace=""
build_label=""
local_device=0
remote_query="SELECT ALL WHERE node = 1"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --quick) bench_opts+=(--quick); rounds=1; max_ranks=2; shift ;;
    --sizes|--volume|--max-reps|--lat-reps) bench_opts+=("$1" "$2"); shift 2 ;;
    --no-latency) do_latency=0; shift ;;
    --no-bandwidth) do_bandwidth=0; shift ;;
    --no-scaling) do_scaling=0; shift ;;
    --max-ranks) max_ranks=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --args) sample_args[$2]=$3; shift 3 ;;
    --local-device) local_device=$2; shift 2 ;;
    --remote-query) remote_query=$2; shift 2 ;;
    --label) build_label=$2; shift 2 ;;
    --compare) compare=$(cd "$2" && pwd); shift 2 ;;
    --compare-env) read -r -a compare_env <<<"$2"; shift 2 ;;
    --trace) mkdir -p "$2" && trace=$(cd "$2" && pwd); shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,41p' "$0"; exit 0 ;;
    *) echo "dist_opencl.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
bin=$build/bin/sluice-bench-dist_opencl
pingpong=$build/bin/sluice-bench-dist_mpi_pingpong
lib=$build/lib/libsluice.so
apps=$build/tests/apps
for f in "$bin" "$pingpong" "$lib" ${compare:+"$compare/lib/libsluice.so"}; do
  [ -e "$f" ] || { echo "dist_opencl.sh: $f is missing: build first (cmake --build $build)" >&2; exit 2; }
done
MPIEXEC=${MPIEXEC:-mpiexec}
if "$MPIEXEC" --version 2>&1 | grep -q -E "Open MPI|OpenRTE"; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fi
export POCL_DEVICES=${POCL_DEVICES:-pthread} POCL_MAX_PTHREAD_COUNT=${POCL_MAX_PTHREAD_COUNT:-1}
remote_b_env="${compare_env[*]}"
work=$(mktemp -d "${TMPDIR:-/tmp}/dist_opencl.XXXXXX")
trap 'if [ $keep = 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi' EXIT

# dist ranks [VAR=value...] cmd...: cmd on rank 0 of `ranks` under sluice's distributed OpenCL.
# One `env` only: a second one would load the preloaded library first and take the rank's MPI.
dist() {
  local n=$1 envs=() lib=${dist_lib:-$lib}; shift
  while [[ $1 == *=* ]]; do envs+=("$1"); shift; done
  "$MPIEXEC" -n "$n" env SLUICE_OPENCL=distributed "${envs[@]}" LD_PRELOAD="$lib" "$@"
}

# measure LABEL cmd...: runs one measurement into $work/LABEL.out; a failed job is reported and
# its rows are left out (the table then shows nan), the run goes on.
measure() {
  local label=$1; shift
  if ! "$@" >"$work/$label.out" 2>"$work/$label.err"; then
    echo "($label: exit $?: $(grep -v '^ *$' "$work/$label.err" | head -2 | tr '\n' ' '))"
  fi
}

src=$(cd "$here/.." && pwd)
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$src" diff --quiet HEAD -- runtime shim 2>/dev/null || commit="$commit (runtime/shim modified)"
[ -z "$build_label" ] || commit=$build_label
echo "== distributed OpenCL benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $commit"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
echo "launcher: $MPIEXEC ($("$MPIEXEC" --version 2>&1 | grep -m1 -E 'Version:|Open MPI|OpenRTE' | tr -s ' \t' ' '))"
echo "devices: POCL_DEVICES=$POCL_DEVICES POCL_MAX_PTHREAD_COUNT=$POCL_MAX_PTHREAD_COUNT on every rank"

if [ $do_latency = 1 ] || [ $do_bandwidth = 1 ]; then
  sel=()
  [ $do_latency = 1 ] || sel+=(--no-latency)
  [ $do_bandwidth = 1 ] || sel+=(--no-bandwidth)
  for r in $(seq 1 "$rounds"); do
    tr=() trB=() # the first round's remote runs traced (--trace)
    if [ -n "$trace" ] && [ "$r" = 1 ]; then
      mkdir -p "$trace/remote" ${compare:+"$trace/remoteB"}
      tr=("SLUICE_TRACE_DIR=$trace/remote") trB=("SLUICE_TRACE_DIR=$trace/remoteB")
    fi
    measure "local.$r" "$bin" --device "$local_device" "${sel[@]}" "${bench_opts[@]}"
    # remote B goes first in even rounds: the job right after another measured slower on the GPU
    # machine whichever build it ran (docs/PERFORMANCE.md), so neither column always pays for it
    columns="remote remoteB"
    [ -z "$compare$remote_b_env" ] && columns=remote
    [ -n "$compare$remote_b_env" ] && [ $((r % 2)) = 0 ] && columns="remoteB remote"
    for col in $columns; do
      if [ $col = remote ]; then
        measure "remote.$r" dist 2 "${tr[@]}" "SLUICE_DEVICES=$remote_query" "$bin" --device 0 "${sel[@]}" \
          "${bench_opts[@]}"
      else
        dist_lib=${compare:+$compare/lib/libsluice.so} measure "remoteB.$r" dist 2 "${trB[@]}" "${compare_env[@]}" \
          "SLUICE_DEVICES=$remote_query" "$bin" --device 0 "${sel[@]}" "${bench_opts[@]}"
      fi
    done
    measure "mpi.$r" "$MPIEXEC" -n 2 "$pingpong" "${bench_opts[@]}"
  done
  [ -z "$compare" ] || echo "remote B: $compare/lib/libsluice.so (commit $(git -C "$compare/.." rev-parse --short HEAD 2>/dev/null || echo unknown))"
  [ -z "$remote_b_env" ] || echo "remote B:${compare:+ that library} with $remote_b_env"
  python3 - "$work" "$rounds" "$compare$remote_b_env" <<'EOF'
import sys
work, rounds, compare = sys.argv[1], int(sys.argv[2]), sys.argv[3]
nan = float('nan')
def load(name):
    """Best of the rounds: the lowest median latency, the highest GB/s per size."""
    d = {'what': '?', 'lat': None, 'bw': {}}
    for r in range(1, rounds + 1):
        try:
            lines = open(f'{work}/{name}.{r}.out').read().splitlines()
        except OSError:
            continue
        for line in lines:
            w = line.split()
            if not w:
                continue
            if w[0] in ('device', 'mpi'):
                d['what'] = line.split(' ', 1)[1].strip()
            elif w[0] == 'latency_us':
                lat = [float(x) for x in w[1:4]]
                if d['lat'] is None or lat[0] < d['lat'][0]:
                    d['lat'] = lat
            elif w[0] in ('write', 'read', 'send', 'recv'):
                key = ({'send': 'write', 'recv': 'read'}.get(w[0], w[0]), int(w[1]))
                # GB/s from bytes and the median time: the printed GB/s is rounded to 0.001
                gbps = int(w[1]) / (float(w[4]) * 1e3) if float(w[4]) > 0 else float(w[3])
                d['bw'][key] = max(d['bw'].get(key, 0.0), gbps)
    return d
loc, rem, mpi = load('local'), load('remote'), load('mpi')
remb = load('remoteB') if compare else None
print(f"local device:  {loc['what']} (one process, no sluice)")
print(f"remote device: {rem['what']} (rank 1, seen from rank 0)")
print(f"MPI:           {mpi['what']}")
print(f"each row: the best of {rounds} interleaved round(s)")
if loc['lat'] or rem['lat']:
    print("\nround trip, microseconds           median      p10      p90")
    rows = [("local: empty kernel + clFinish", loc), ("remote: empty kernel + clFinish", rem)]
    if remb:
        rows.append(("remote B: empty kernel + clFinish", remb))
    for label, d in rows + [("raw MPI: 0-byte ping-pong", mpi)]:
        l = d['lat'] or [nan] * 3
        print(f"{label:33s} {l[0]:8.1f} {l[1]:8.1f} {l[2]:8.1f}")
    if loc['lat'] and rem['lat'] and mpi['lat']:
        print(f"remote / local {rem['lat'][0] / loc['lat'][0]:.1f}x, remote / MPI ping-pong "
              f"{rem['lat'][0] / mpi['lat'][0]:.1f}x, remote - MPI {rem['lat'][0] - mpi['lat'][0]:.1f} us")
def human(n):
    for unit, shift in (('G', 30), ('M', 20), ('K', 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)
for kind, mpi_name in (('write', 'send 0->1 + 0-byte answer'), ('read', '0-byte request + send 1->0')):
    sizes = sorted({s for d in (loc, rem, mpi) for (k, s) in d['bw'] if k == kind})
    if not sizes:
        continue
    print(f"\n{kind}, GB/s (blocking clEnqueue{kind.capitalize()}Buffer; raw MPI: {mpi_name})")
    head = f"{'size':>6} {'local ' + kind:>12} {'remote ' + kind:>13} {'raw MPI':>9} {'remote/MPI':>11}"
    print(head + (f" {'remote B':>9} {'B/MPI':>6}" if remb else ""))
    big = []
    for s in sizes:
        l, r, m = (d['bw'].get((kind, s), nan) for d in (loc, rem, mpi))
        ratio = r / m if m > 0 else nan
        if s >= 16 << 20 and ratio == ratio:
            big.append(ratio)
        row = f"{human(s):>6} {l:12.3f} {r:13.3f} {m:9.3f} {ratio:11.2f}"
        if remb:
            b = remb['bw'].get((kind, s), nan)
            row += f" {b:9.3f} {(b / m if m > 0 else nan):6.2f}"
        print(row)
    if big:
        print(f"remote/MPI from 16M up: lowest {min(big):.2f}, highest {max(big):.2f} "
              f"(target, docs/PERFORMANCE.md \"Distributed OpenCL\": at least 0.90)")
EOF
fi

[ $do_scaling = 1 ] || exit 0
found=()
for s in $samples; do
  if [ -x "$apps/$s" ]; then found+=("$s"); else echo "(sample $s not built in $apps: skipped)"; fi
done
if [ ${#found[@]} = 0 ]; then
  # None of those samples built: cl_multi_device, the pass-through sample (docs/OPENCL.md,
  # "Transparency") that splits its work over every device.
  found=(cl_multi_device)
  echo "(none of the sample programs of docs/DISTRIBUTED.md found: scaling cl_multi_device, which has no --time: job wall time only," \
    "and its output names the device count, so same_out is not compared)"
fi
echo
echo "strong scaling, one device per rank, best of $rounds run(s) per row"
printf '%-16s %-14s %5s %10s %10s %8s %10s %9s\n' sample args ranks compute_s job_s speedup efficiency same_out
for s in "${found[@]}"; do
  timeflag=--time
  [ "$s" = cl_multi_device ] && timeflag=
  args=${sample_args[$s]:-}
  for n in $(seq 1 "$max_ranks"); do
    for r in $(seq 1 "$rounds"); do
      t0=$(date +%s.%N)
      # shellcheck disable=SC2086 # args is a word list on purpose
      if ! dist "$n" "$apps/$s" $args $timeflag >"$work/$s.$n.$r.out" 2>"$work/$s.$n.$r.err"; then
        echo "($s on $n ranks failed: $(grep -v '^ *$' "$work/$s.$n.$r.err" | head -2 | tr '\n' ' '))"
        rm -f "$work/$s.$n.$r.out"
      fi
      awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { print a - b }' >"$work/$s.$n.$r.job"
    done
    python3 - "$work" "$s" "$n" "$rounds" "$timeflag" "${args:--}" <<'EOF'
import re, sys, os
work, s, n, rounds, timeflag, args = sys.argv[1:7]
n, rounds = int(n), int(rounds)
best = None  # (time used for speedup, compute, job, stdout lines)
for r in range(1, rounds + 1):
    if not os.path.exists(f'{work}/{s}.{n}.{r}.out'):
        continue
    job = float(open(f'{work}/{s}.{n}.{r}.job').read())
    compute = None
    # The samples' --time line: "<name>: compute <seconds> s on <N> devices".
    for line in open(f'{work}/{s}.{n}.{r}.err'):
        m = re.search(r'compute ([0-9.]+) s', line)
        if m:
            compute = float(m.group(1))
    t = compute if timeflag and compute is not None else job
    out = [l for l in open(f'{work}/{s}.{n}.{r}.out') if not l.startswith('devices:')]
    if best is None or t < best[0]:
        best = (t, compute, job, out)
if best is None:
    sys.exit(0)
base_file = f'{work}/{s}.base'
if n == 1:
    open(base_file, 'w').write(repr(best[0]) + '\n' + ''.join(best[3]))
base_t, base_out = None, None
if os.path.exists(base_file):
    lines = open(base_file).read().split('\n', 1)
    base_t, base_out = float(lines[0]), lines[1]
speed = base_t / best[0] if base_t else float('nan')
if not timeflag or base_out is None:
    same = '-'
else:
    same = 'yes' if ''.join(best[3]) == base_out else 'NO'
c = f'{best[1]:10.3f}' if best[1] is not None else f'{"-":>10}'
print(f'{s:16s} {args:14s} {n:5d} {c} {best[2]:10.3f} {speed:8.2f} {speed / n:10.2f} {same:>9}')
EOF
  done
done
echo "(speedup and efficiency: 1-rank time / n-rank time, from compute_s when the sample prints it," \
  "else job_s; $(nproc) cores host all ranks and the launcher, so above $(nproc) ranks it measures oversubscription)"
