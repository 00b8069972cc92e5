#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Global-array checkpoint benchmark (docs/LAYOUT.md): an E^3 array of doubles, block-decomposed
# over MPI_Dims_create's grid, side by side in one run, for each rank count:
#
#   romio-auto     the first seed's code: MPI_File_set_view (nested hvector) + MPI_File_write_all
#                  + MPI_File_sync, ROMIO's default hints (romio_cb_write=automatic)
#   romio-enable   the same with romio_cb_write=enable and striping_unit = sluice's stripe unit
#   sluice         the unmodified per-rank program (ckpt.<rank> = 64-byte header + block) under
#                  sluice with SLUICE_LAYOUT: one container holding the array (two-phase);
#                  durable = when MPI_Finalize returns (sluice's exit flush)
#   (each write also to MPI_Finalize's return: the column "to finalize", and the ratio of both
#   writers to that one end point, since sluice's time includes MPI_Finalize's own cost)
#   read romio     M ranks (another grid) MPI_File_read_all their blocks from the ROMIO file
#   read sluice    M ranks read ckpt.<rank> under sluice: their blocks cut from the container
#
#   bench/layout_io.sh [--ranks "8 27"] [--edge 128] [--dir DIR] [--build DIR] [--unit 1M]
#                      [--lib LIBSLUICE]   (another libsluice.so than the build's, to compare)
#
# DIR (default: build/bench-layout-io) is the file system under test, never /dev/shm. Times
# are the slowest rank's, from a common start (CLOCK_REALTIME) to durable (writes) or to the
# last byte read (reads). Each case is one mpiexec; nothing passes or fails on timing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${SLUICE_BUILD:-$here/../build}
ranks="8 27"
edge=128
dir=""
unit=1M
lib_arg=""
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks=$2; shift 2 ;;
    --edge) edge=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --unit) unit=$2; shift 2 ;;
    --lib) lib_arg=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "layout_io.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
bin=$build/bin/sluice-bench-layout_io
lib=${lib_arg:-$build/lib/libsluice.so}
for f in "$bin" "$lib"; do
  [ -e "$f" ] || { echo "layout_io.sh: $f is missing: build first (cmake --build $build)" >&2; exit 2; }
done
[ -n "$dir" ] || dir=$build/bench-layout-io
case "$(mkdir -p "$dir" && cd "$dir" && pwd)/" in
  /dev/shm/*) echo "layout_io.sh: $dir is in RAM (/dev/shm): durability would mean nothing" >&2; exit 2 ;;
esac
dir=$(cd "$dir" && pwd)
MPIEXEC=${MPIEXEC:-mpiexec}
# Under Open MPI, "ROMIO" is its romio321 component (its default MPI-IO is OMPIO, which ignores
# romio_cb_write); root and more ranks than cores (64 on the 16-core device machine) allowed.
if "$MPIEXEC" --version 2>&1 | grep -q -E "Open MPI|OpenRTE"; then
  export OMPI_MCA_io=${OMPI_MCA_io:-romio321} OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMPI_MCA_rmaps_base_oversubscribe=1
fi
unit_bytes=$(numfmt --from=iec "$unit")
bytes=$((edge * edge * edge * 8))

# time N ENV... -- ARGS: the slowest rank's end and its return from MPI_Finalize, each minus the
# common start, in seconds ("END FIN").
timed() {
  local n=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "$MPIEXEC" -n "$n" "$@" |
    awk '$1 == "T" { s = $3; if ($4 > e) e = $4; if ($5 > f) f = $5 } END { printf "%.3f %.3f", e - s, f - s }'
}

printf '== %dx%dx%d doubles (%d MiB), stripe unit %s, %s ==\n' "$edge" "$edge" "$edge" $((bytes >> 20)) "$unit" "$dir"
printf '%-6s %-14s %-6s %10s %9s %14s %12s %14s\n' ranks case readers "seconds" "MiB/s" "sluice / this" \
  "to finalize" "sluice / this"
for n in $ranks; do
  m=$(( n == 8 ? 6 : n == 27 ? 8 : n / 2 > 0 ? n / 2 : 1 ))
  r=$dir/romio s=$dir/sluice
  rm -rf "$r" "$s"; mkdir -p "$r" "$s"; sync
  t_auto=$(timed "$n" LAYOUT_BENCH_CB=automatic -- "$bin" romio-write "$r" "$edge")
  rm -rf "$r"; mkdir -p "$r"; sync
  t_on=$(timed "$n" LAYOUT_BENCH_CB=enable LAYOUT_BENCH_UNIT="$unit_bytes" -- "$bin" romio-write "$r" "$edge")
  sync
  t_sl=$(timed "$n" LD_PRELOAD="$lib" SLUICE_CAPTURE="$s/ckpt.%r" SLUICE_STRIPING_UNIT="$unit" \
    SLUICE_LAYOUT="$s/ckpt.%r:header=64,dtype=f8,shape=${edge}x${edge}x${edge}" -- "$bin" fpp-write "$s" "$edge" 64)
  [ "$(ls -A "$s")" == "ckpt.@r.sluice" ] || echo "layout_io.sh: sluice left $(ls -A "$s" | wc -l) files, not one container" >&2
  t_rr=$(timed "$m" -- "$bin" romio-read "$r" "$edge")
  t_sr=$(timed "$m" LD_PRELOAD="$lib" SLUICE_CAPTURE="$s/ckpt.%r" -- "$bin" fpp-read "$s" "$edge" 64)
  # row CASE READERS "END FIN" "SLUICE_END SLUICE_FIN": the time, the rate and sluice's ratio
  # to the same end; the finalize columns only for writes.
  row() {
    local t=($3) q=($4)
    printf '%-6s %-14s %-6s %10s %9.0f %14s' "$n" "$1" "$2" "${t[0]}" \
      "$(awk -v b="$bytes" -v t="${t[0]}" 'BEGIN { print b / 1048576 / t }')" "$(ratio "${q[0]}" "${t[0]}")"
    if [ "${5:-}" = write ]; then printf ' %12s %14s' "${t[1]}" "$(ratio "${q[1]}" "${t[1]}")"; fi
    printf '\n'
  }
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
  row romio-auto - "$t_auto" "$t_sl" write
  row romio-enable - "$t_on" "$t_sl" write
  row sluice - "$t_sl" "$t_sl" write
  row "read romio" "$m" "$t_rr" "$t_sr"
  row "read sluice" "$m" "$t_sr" "$t_sr"
  rm -rf "$r" "$s"
done
