#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checkpoint write benchmark driver: the same per-rank data written five ways on one file
# system, side by side, one table per total size (docs/TWOPHASE.md explains each column).
#
#   bench/ckpt_io.sh [-n RANKS] [--dir DIR] [--sizes "64M 256M"] [--all] [--build DIR]
#                    [--unit SIZE] [--cb-buffer SIZE] [--chunk SIZE] [--keep] [--strace]
#                    [--work DIR] [--trace-out DIR] [--reps N]
#
#   1 fpp            file per process, write() then fsync of each (no sluice)
#   2 fpp+sluice     the same unmodified writer under sluice (one container, two-phase);
#                    durable = when MPI_Finalize returns (sluice's exit flush). Timed without
#                    the trace (its exit clock sync would count); a second, untimed run with
#                    SLUICE_TRACE_DIR gives its requests
#   3a romio-auto    MPI_File_write_at_all to one shared file, ROMIO's default hints
#   3b romio-enable  romio_cb_write=enable, cb_buffer_size and striping_unit = sluice's
#   4 limit          one process, one file, sequential --chunk requests, fsync
#
# DIR (default: a folder under the build tree) is the file system under test; do not use
# /dev/shm (RAM: durability means nothing there). Default sizes are a quick subset; --all runs
# 64M 128M 256M 512M 1G 2G. Needs no root; it never drops caches (each case fsyncs).
# --strace: each case runs once more under strace (not timed): the file-system creates and opens
# of files in the checkpoint folder per checkpoint, all ranks together (openat/open/creat calls
# on its paths that succeed; with O_CREAT: a create; opens that fail, e.g. looking for a previous
# version, counted apart). The metadata argument: N files against 1.
# --work: where the ranks' results go (default a new folder under TMPDIR; on a cluster a folder
# every node sees). On the multi-node testbed: bench/cluster_ckpt.sh.
# --reps N: the timed cases N times, interleaved; times are each case's median (and range).
# --trace-out: the sluice case's traces are copied to DIR/<size> (for sluice-trace summary/io).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ranks=4
build=${SLUICE_BUILD:-$here/../build}
dir=""
sizes="64M 256M"
unit=1M
cb=16M
chunk=4M
keep=0
do_strace=0
work_in=${TMPDIR:-/tmp}
trace_out=""
reps=1
while [ $# -gt 0 ]; do
  case "$1" in
    -n) ranks=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --all) sizes="64M 128M 256M 512M 1G 2G"; shift ;;
    --build) build=$2; shift 2 ;;
    --unit) unit=$2; shift 2 ;;
    --cb-buffer) cb=$2; shift 2 ;;
    --chunk) chunk=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --strace) do_strace=1; shift ;;
    --work) work_in=$2; shift 2 ;;
    --trace-out) trace_out=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) echo "ckpt_io.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
bin=$build/bin/sluice-bench-ckpt_io
lib=$build/lib/libsluice.so
trace_tool=$build/bin/sluice-trace
for f in "$bin" "$lib" "$trace_tool"; do
  [ -e "$f" ] || { echo "ckpt_io.sh: $f is missing: build first (cmake --build $build)" >&2; exit 2; }
done
[ -n "$dir" ] || dir=$build/bench-ckpt-io
case "$(cd "$(dirname "$dir")" && pwd)/" in
  /dev/shm/*) echo "ckpt_io.sh: $dir is in RAM (/dev/shm): durability would mean nothing" >&2; exit 2 ;;
esac
work=$(mktemp -d "$work_in/ckpt_io.XXXXXX")
trap '[ $keep = 1 ] || rm -rf "$work"' EXIT
mkdir -p "$dir"
dir=$(cd "$dir" && pwd) # (absolute: strace's paths are compared with it)
MPIEXEC=${MPIEXEC:-mpiexec}
traced=() # variables of the untimed rerun only (the trace of the sluice case)

run_case() { # label ranks extra-env... -- args...   (in $where, default $dir/run)
  local label=$1 n=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local at=${where:-$dir/run}
  rm -rf "$at" && mkdir -p "$at"
  sync
  # The stage copy's folder is node-local on a cluster: each rank makes it (no sluice there: a
  # shell under sluice before the program would start MPI twice).
  local mk=()
  [ "$label" != stage_copy ] || mk=(sh -c 'mkdir -p "$0" && exec "$@"' "$at")
  env "${envs[@]}" "$MPIEXEC" -n "$n" "${mk[@]}" "$bin" --dir "$at" --unit "$unit" --cb-buffer "$cb" \
      --chunk "$chunk" --result "$work/$label.r$rep.txt" "$@"
  echo "files=$(find "$at" -type f | wc -l)" > "$work/$label.files"
  rm -rf "$at"
  [ "$rep" = "$reps" ] || return 0 # the untimed runs once
  if [ ${#traced[@]} -gt 0 ]; then
    # The untimed traced run (sluice's requests come from its trace; not under strace, whose
    # stops would distort the trace's times).
    mkdir -p "$at"
    env "${envs[@]}" "${traced[@]}" "$MPIEXEC" -n "$n" "$bin" --dir "$at" --unit "$unit" --cb-buffer "$cb" \
      --chunk "$chunk" --result "$work/traced.$label.txt" "$@"
    rm -rf "$at"
  fi
  [ "$do_strace" = 1 ] && [ "$label" != stage_copy ] || return 0
  # The same case once more under strace: its creates and opens of files in the checkpoint folder.
  mkdir -p "$at" "$work/st.$label"
  # One strace output per rank (MPMD: process ids repeat across a cluster's nodes).
  local r mpmd=()
  for ((r = 0; r < n; r++)); do
    [ "$r" -eq 0 ] || mpmd+=(:)
    mpmd+=(-n 1 strace -f -qq -e trace=open,openat,creat -o "$work/st.$label/rank$r" -ff "$bin" --dir "$at" \
      --unit "$unit" --cb-buffer "$cb" --chunk "$chunk" --result "$work/st.$label.txt" "$@")
  done
  env "${envs[@]}" "$MPIEXEC" "${mpmd[@]}"
  cat "$work/st.$label"/rank* | awk -v at="$at/" -v list="$work/$label.opens" '
    /^(open|openat|creat)\(/ && index($0, "\"" at) && / = -1 / { l++ }
    /^(open|openat|creat)\(/ && index($0, "\"" at) && !/ = -1 / {
      if (/O_CREAT|^creat/) c++; else o++
      f = substr($0, index($0, "\"" at) + length(at) + 1); sub(/".*/, "", f); gsub(/[0-9]+/, "N", f)
      print f (/O_CREAT|^creat/ ? " (create)" : "") >> list }
    END { printf "creates=%d opens=%d failed=%d\n", c, o, l }' > "$work/$label.meta"
  rm -rf "$at" "$work/st.$label"
}
# The staging copy: the same writer, without sluice, into a folder beside sluice's stage folder
# (node-local RAM by default): what sluice's app-visible time is to be compared with.
stage_root=${SLUICE_STAGE_DIR:-/dev/shm/sluice-$(id -u)}

for size in $sizes; do
  rm -f "$work"/*.txt "$work"/*.files "$work"/*.meta "$work"/*.opens
  rm -rf "$work/trace" && mkdir -p "$work/trace" "$work/stage"
  for ((rep = 1; rep <= reps; rep++)); do
  run_case fpp "$ranks" -- --case fpp --total "$size"
  where="$stage_root.bench-copy" run_case stage_copy "$ranks" -- --case fpp --total "$size"
  traced=(SLUICE_TRACE_DIR="$work/trace")
  run_case fpp_sluice "$ranks" LD_PRELOAD="$lib" SLUICE_CAPTURE="$dir/run/ckpt.%r" \
      SLUICE_STRIPING_UNIT="$unit" SLUICE_CB_BUFFER_SIZE="$cb" \
      ${SLUICE_STAGE_DIR:+SLUICE_STAGE_DIR=$SLUICE_STAGE_DIR} -- --case fpp --total "$size"
  traced=()
  run_case romio_auto "$ranks" -- --case romio --romio-hints auto --total "$size"
  run_case romio_enable "$ranks" -- --case romio --romio-hints enable --total "$size"
  run_case limit 1 -- --case limit --total "$size" --chunk 16M
  done
  "$trace_tool" dump "$work/trace" > "$work/trace.txt"
  [ -z "$trace_out" ] || { mkdir -p "$trace_out/$size" && cp -r "$work/trace/." "$trace_out/$size/"; }
  python3 - "$work" "$size" "$ranks" "$unit" "$reps" <<'EOF'
import glob, re, statistics, sys, os
work, size, ranks, unit_s, nreps = sys.argv[1:6]
def parse_size(s):
    m = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}
    return int(float(s[:-1]) * m[s[-1].upper()]) if s[-1].upper() in m else int(s)
unit = parse_size(unit_s)
BINS = ['<4K', '<64K', '<1M', '<4M', '<16M', '>=16M']
LIMITS = [4096, 65536, 1 << 20, 4 << 20, 16 << 20]
def kv(line):
    return dict(p.split('=', 1) for p in line.split())
rows = {}
for label in ['fpp', 'fpp_sluice', 'romio_auto', 'romio_enable', 'limit', 'stage_copy']:
    runs = []
    for f in sorted(glob.glob(os.path.join(work, label + '.r*.txt'))):
        lines = [kv(l) for l in open(f) if l.strip()]
        t0 = min(float(l['t0']) for l in lines)
        runs.append((max(float(l['visible']) for l in lines) - t0, max(float(l['durable']) for l in lines) - t0))
    files = int(open(os.path.join(work, label + '.files')).read().split('=')[1])
    total = int(lines[0]['total'])
    vis = statistics.median(r[0] for r in runs)
    dur = statistics.median(r[1] for r in runs)
    spread = (min(r[1] for r in runs), max(r[1] for r in runs))
    reqs = sum(int(l['requests']) for l in lines)
    rbytes = sum(int(l['req_bytes']) for l in lines)
    full = sum(int(l['full_bytes']) for l in lines)
    bins = [sum(int(l['bins'].split(',')[i]) for l in lines) for i in range(6)]
    writers = sum(1 for l in lines if int(l['requests']) > 0)
    if label == 'fpp_sluice':
        # File-system requests come from sluice's trace (COMMIT_FS_WRITE), not the counter.
        reqs = rbytes = full = 0
        bins = [0] * 6
        wr = set()
        for t in open(os.path.join(work, 'trace.txt')):
            m = re.match(r'rank (\d+) .* COMMIT_FS_WRITE offset=(\d+), bytes=(\d+)', t)
            if not m:
                continue
            r, off, n = int(m.group(1)), int(m.group(2)), int(m.group(3))
            wr.add(r)
            reqs += 1
            rbytes += n
            if off % unit == 0 and n % unit == 0:
                full += n
            b = 0
            while b < 5 and n >= LIMITS[b]:
                b += 1
            bins[b] += 1
        writers = len(wr)
        peak = [int(m.group(1)) for m in
                (re.search(r'COMMIT_MEMORY peak shuffle buffer bytes=(\d+)', t)
                 for t in open(os.path.join(work, 'trace.txt'))) if m]
        peak_mem = max(peak) if peak else 0
    rows[label] = dict(spread=spread, files=files, reqs=reqs, rbytes=rbytes, full=full, bins=bins,
                       writers=writers, vis=vis, dur=dur, bw=total / dur / (1 << 20), total=total)
print(f"\n== total {size} ({rows['fpp']['total']} bytes), {ranks} ranks, stripe unit {unit_s}, "
      f"cb_buffer as set, median of {nreps} runs ==")
hdr = f"{'case':<14}{'files':>6}{'requests':>9}  {'sizes ' + '/'.join(BINS):<38}{'%full':>7}" \
      f"{'writers':>8}{'visible s':>10}{'durable s':>10}{'MiB/s':>9}  durable range"
print(hdr)
names = {'fpp': '1 fpp', 'fpp_sluice': '2 sluice', 'romio_auto': '3a romio-auto',
         'romio_enable': '3b romio-on', 'limit': '4 limit'}
for label, r in rows.items():
    if label == 'stage_copy':
        continue
    pct = 100.0 * r['full'] / r['rbytes'] if r['rbytes'] else 0.0
    print(f"{names[label]:<14}{r['files']:>6}{r['reqs']:>9}  {'/'.join(map(str, r['bins'])):<38}"
          f"{pct:>6.1f}%{r['writers']:>8}{r['vis']:>10.3f}{r['dur']:>10.3f}{r['bw']:>9.0f}"
          f"  {r['spread'][0]:.3f}-{r['spread'][1]:.3f}")
s = rows['fpp_sluice']['dur']
print("ratios of time until durable, sluice / other: "
      + ", ".join(f"{names[k]} {s / rows[k]['dur']:.2f}"
                  for k in ['fpp', 'romio_auto', 'romio_enable', 'limit']))
print(f"sluice vs better ROMIO: {s / min(rows['romio_auto']['dur'], rows['romio_enable']['dur']):.2f}")
print(f"app-visible under sluice {rows['fpp_sluice']['vis']:.3f} s vs the staging copy alone "
      f"{rows['stage_copy']['vis']:.3f} s ({rows['stage_copy']['files']} files in the stage "
      f"folder's file system, no sluice): ratio {rows['fpp_sluice']['vis'] / rows['stage_copy']['vis']:.2f}")
if all(os.path.exists(os.path.join(work, l + '.meta')) for l in names):
    print("file-system creates and opens in the checkpoint folder per checkpoint, all ranks (strace):")
    for label in names:
        m = kv(open(os.path.join(work, label + '.meta')).read())
        opens = os.path.join(work, label + '.opens')
        which = ''
        if os.path.exists(opens):
            import collections
            cnt = collections.Counter(l.strip() for l in open(opens))
            which = '  (' + ', '.join(f"{v} x {k}" for k, v in sorted(cnt.items())) + ')'
        print(f"  {names[label]:<14} creates {m['creates']:>5}  opens {m['opens']:>5}  failed lookups "
              f"{m['failed']:>3}{which}")
print(f"sluice peak shuffle memory of one process: {peak_mem / (1 << 20):.1f} MiB (COMMIT_MEMORY)")
EOF
done
