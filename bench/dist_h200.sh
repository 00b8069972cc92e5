#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Heterogeneous distributed OpenCL on the GPU machine (docs/DISTRIBUTED.md, "On a GPU machine"):
# rank 0 runs the program and has a PoCL CPU device, rank 1 serves an NVIDIA H200 through NVIDIA's
# OpenCL, with sluice built against Open MPI (cmake -S . -B build-ompi -DSLUICE_MPI=openmpi; that
# machine has no MPICH).
#
#   bench/dist_h200.sh [--build DIR] [--samples "cl_nbody ..."] [--gpu-query DQL] [--quick]
#                      [--compare DIR] [--compare-env "VAR=VALUE ..."] [--trace DIR]
#                      [--sizes "16M 64M"] [--no-latency] [--no-bound]
#
#   1. one job, both ICDs on both ranks, SLUICE_DEVICES="SELECT ALL WHERE (node = 0 AND type =
#      cpu) OR (node = 1 AND type = gpu)": the device list rank 0's program sees (the PoCL CPU of
#      rank 0 and the GPU of rank 1; they are two platforms, since sluice merges platforms by
#      name and an OpenCL context never spans platforms);
#   2. each sample of docs/DISTRIBUTED.md, "Sample programs" (default sizes) with only rank 1's GPU
#      selected, run from rank 0, against the same sample in one process on the local GPU without
#      sluice (the loader limited to NVIDIA's ICD, so that its first platform is the GPU's): stdout
#      must be identical ("same" / "DIFFERENT"); the sample on the local PoCL CPU is shown beside
#      it for information;
#   3. bench/dist_opencl.sh --no-scaling with the GPU as both the local device (no sluice) and the
#      remote one (rank 1): the latency and bandwidth tables against raw Open MPI (--compare DIR:
#      also another build's libsluice.so in the same rounds, e.g. the tree before a change).
#   4. the bound of a remote write on this machine without sluice (sluice-bench-dist_write_bound):
#      MPI alone, the device write alone, both one after the other, and both pipelined as sluice's
#      serving rank does, each against MPI (what remote/MPI in 3 can reach at most), with MPI
#      started at MPI_THREAD_SINGLE and at MPI_THREAD_MULTIPLE (sluice's level).
# Exit status: 1 if a sample's remote output differs from the local one or a step fails, else 0.
# The figures themselves never fail anything. --gpu-query replaces "type = gpu" in the queries
# (for a rehearsal on a machine without a GPU, e.g. --gpu-query "type = cpu").
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${SLUICE_BUILD:-$here/../build-ompi}
samples="cl_matmul_split cl_nbody cl_stencil2d cl_broadcast"
gpu="type = gpu"
opencl_opts=() # passed on to dist_opencl.sh
bound_sizes="16M 64M 256M"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --gpu-query) gpu=$2; shift 2 ;;
    --quick) opencl_opts+=(--quick); shift ;;
    --compare) opencl_opts+=(--compare "$2"); shift 2 ;;
    --compare-env) opencl_opts+=(--compare-env "$2"); shift 2 ;;
    --trace) opencl_opts+=(--trace "$2"); shift 2 ;;
    --sizes) opencl_opts+=(--sizes "$2"); bound_sizes=$2; shift 2 ;;
    --no-latency) opencl_opts+=(--no-latency); shift ;;
    --no-bound) bound_sizes=""; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "dist_h200.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
bin=$build/bin/sluice-bench-dist_opencl
lib=$build/lib/libsluice.so
apps=$build/tests/apps
for f in "$bin" "$lib" "$build/CMakeCache.txt"; do
  [ -e "$f" ] || { echo "dist_h200.sh: $f is missing: build first (cmake --build $build)" >&2; exit 2; }
done
flavour=$(sed -n 's/^SLUICE_MPI:STRING=//p' "$build/CMakeCache.txt")
[ "$flavour" = openmpi ] || echo "(note: $build is built against '$flavour' MPI, not openmpi)"
# The launcher the build found, by its real path (/bin/mpiexec.openmpi makes Open MPI abort).
MPIEXEC=${MPIEXEC:-$(readlink -f "$(sed -n 's/^SLUICE_MPIEXEC:FILEPATH=//p' "$build/CMakeCache.txt")")}
export MPIEXEC
if "$MPIEXEC" --version 2>&1 | grep -q -E "Open MPI|OpenRTE"; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fi
export POCL_DEVICES=${POCL_DEVICES:-pthread}
work=$(mktemp -d "${TMPDIR:-/tmp}/dist_h200.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0

# Which ICDs a process sees. ICD loaders differ: ocl-icd 2.3.1 (Debian 12) honours an
# OCL_ICD_VENDORS folder; the GPU machine's ocl-icd 2.3.2 lists NVIDIA's library in
# OCL_ICD_FILENAMES (not in /etc/OpenCL/vendors), loads it on top of the vendors folder, and
# ignored a private OCL_ICD_VENDORS folder. So each set of ICDs gets the first of three loader
# settings under which the benchmark's --list shows exactly the platforms wanted.
vendors=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}
icd_files=${OCL_ICD_FILENAMES:-}
unset OCL_ICD_FILENAMES OCL_ICD_VENDORS
libs_matching() { # PATTERN: colon list of the ICD libraries whose name matches, each library once
  local out="" f stem
  for f in $(cat "$vendors"/*.icd 2>/dev/null) ${icd_files//:/ }; do
    stem=$(basename "${f%%.so*}")
    echo "$f" | grep -q -i -E "$1" || continue
    case ":$out:" in *"/$stem.so"* | *":$stem.so"*) continue ;; esac
    out=${out:+$out:}$f
  done
  echo "$out"
}
loader_env() { # LIBRARY_PATTERN PLATFORM_PATTERN: prints VAR=value words for `env`
  local libs dir cand out
  libs=$(libs_matching "$1")
  [ -n "$libs" ] || { echo "dist_h200.sh: no ICD library matching '$1'" >&2; return 1; }
  dir=$(mktemp -d "$work/icd.XXXXXX")
  for f in ${libs//:/ }; do echo "$f" >"$dir/$(basename "$f").icd"; done
  for cand in "OCL_ICD_VENDORS=$dir" "OCL_ICD_VENDORS=/nonexistent OCL_ICD_FILENAMES=$libs" \
    "OCL_ICD_FILENAMES=$libs"; do
    out=$(env $cand "$bin" --list 2>/dev/null) || continue
    [ -n "$out" ] || continue
    if echo "$out" | grep -v -q -E "$2"; then continue; fi
    echo "$cand"
    return 0
  done
  echo "dist_h200.sh: no loader setting shows only '$2' (ICDs: $libs)" >&2
  return 1
}
pocl_env=$(loader_env pocl 'Portable Computing Language') || exit 2
nvidia_env=$pocl_env # rehearsal without a GPU
[ "$gpu" != "type = gpu" ] || nvidia_env=$(loader_env 'nvidia|cuda' 'NVIDIA') || exit 2
all_env=$(loader_env . .) || exit 2
export $all_env # every process below sees every ICD unless told otherwise
# Open MPI's daemon (orted) discovers devices with hwloc, whose OpenCL component opens every ICD
# of its environment: NVIDIA's then initializes CUDA in the daemon, and the ranks it forks lose
# the GPU (measured: `mpiexec -n 2 clinfo -l` without sluice listed no NVIDIA platform). Keep
# hwloc away from OpenCL.
export HWLOC_COMPONENTS=-opencl
echo "(ICD loader: PoCL alone: $pocl_env; NVIDIA alone: $nvidia_env; all: $all_env)"

# dist [VAR=value...] cmd...: cmd on rank 0 of 2 ranks under distributed OpenCL (one env only).
dist() {
  local envs=()
  while [[ $1 == *=* ]]; do envs+=("$1"); shift; done
  "$MPIEXEC" -n 2 env SLUICE_OPENCL=distributed "${envs[@]}" LD_PRELOAD="$lib" "$@"
}

echo "== heterogeneous distributed OpenCL, $(date -u '+%Y-%m-%d %H:%M UTC')," \
  "commit $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "machine: $(nproc) cores; launcher $MPIEXEC ($("$MPIEXEC" --version 2>&1 | head -1)); build MPI: $flavour"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/gpu: /'
echo "devices of this machine (one process, no sluice):"
"$bin" --list | sed 's/^/  /'

echo
both="SELECT ALL WHERE (node = 0 AND type = cpu) OR (node = 1 AND $gpu)"
echo "1. one job, SLUICE_DEVICES=\"$both\": what rank 0's program sees"
if dist "SLUICE_DEVICES=$both" "$bin" --list >"$work/both.out" 2>"$work/both.err"; then
  sed 's/^/  /' "$work/both.out"
else
  echo "  FAILED: $(head -3 "$work/both.err")"
  status=1
fi

hash() { sed -n 's/^hash: //p' "$1" | head -1; }
echo
remote="SELECT ALL WHERE node = 1 AND $gpu"
echo "2. samples on rank 1's GPU from rank 0 (SLUICE_DEVICES=\"$remote\") against one local process"
printf '  %-16s %-22s %-22s %-22s %s\n' sample "local GPU hash" "remote GPU hash" "local PoCL CPU hash" "remote vs local"
for s in $samples; do
  [ -x "$apps/$s" ] || { echo "  $s: not built in $apps"; status=1; continue; }
  env -u OCL_ICD_VENDORS -u OCL_ICD_FILENAMES $nvidia_env "$apps/$s" >"$work/$s.local" 2>"$work/$s.local.err" || true
  env -u OCL_ICD_VENDORS -u OCL_ICD_FILENAMES $pocl_env "$apps/$s" >"$work/$s.cpu" 2>/dev/null || true
  dist "SLUICE_DEVICES=$remote" "$apps/$s" >"$work/$s.remote" 2>"$work/$s.remote.err" || true
  verdict=same
  if [ ! -s "$work/$s.local" ] || ! cmp -s "$work/$s.local" "$work/$s.remote"; then
    verdict=DIFFERENT
    status=1
  fi
  printf '  %-16s %-22s %-22s %-22s %s\n' "$s" "$(hash "$work/$s.local")" "$(hash "$work/$s.remote")" \
    "$(hash "$work/$s.cpu")" "$verdict"
  if [ $verdict = DIFFERENT ]; then
    diff "$work/$s.local" "$work/$s.remote" | head -6 | sed 's/^/    /' || true
    head -3 "$work/$s.local.err" "$work/$s.remote.err" | sed 's/^/    /' || true
  fi
done

echo
echo "3. latency and bandwidth: the GPU from a local process (no sluice) and from rank 0 (rank 1's GPU)"
gpu_index=$("$bin" --list | awk -v t="$([ "$gpu" = "type = gpu" ] && echo gpu || echo cpu)" \
  '$NF == t { print $2; exit }')
if [ -z "$gpu_index" ]; then
  echo "  no local device of that type: skipped"
  status=1
else
  "$here/dist_opencl.sh" --build "$build" --no-scaling "${opencl_opts[@]}" --local-device "$gpu_index" \
    --remote-query "$remote" | sed 's/^/  /'
fi

[ -n "$bound_sizes" ] || exit $status # --no-bound
echo
echo "4. the bound of a remote write without sluice: MPI + OpenCL by hand, rank 1's device, MPI started"
echo "   at MPI_THREAD_SINGLE, then at MPI_THREAD_MULTIPLE (the level sluice asks for)"
for level in "" --thread-multiple; do
  "$MPIEXEC" -n 2 "$build/bin/sluice-bench-dist_write_bound" --type "$([ "$gpu" = "type = gpu" ] && echo gpu || echo cpu)" \
    --sizes "$bound_sizes" $level 2>&1 | sed 's/^/  /' || status=1
done
exit $status
