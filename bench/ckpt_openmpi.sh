#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The checkpoint benchmark (bench/ckpt_io.sh) under Open MPI with its shared-memory single-copy
# mechanism off and on, and sluice's MPI-busy mode on (SLUICE_PROGRESS_BUSY_SLEEP=0, the default)
# and in effect off (2000 us: the idle back-off's own 2 ms bound), in one run:
#
#   bench/ckpt_openmpi.sh [-n RANKS] [--sizes "256M 1G"] [--build DIR] [--dir DIR]
#
# ROMIO is Open MPI's romio321 component (OMPI_MCA_io), so that "ROMIO" means ROMIO and not OMPIO.
# Prints ckpt_io.sh's tables, each headed by its configuration. Figures never fail anything.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ranks=16
sizes="256M 1G"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) ranks=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --build | --dir) args+=("$1" "$2"); shift 2 ;;
    -h | --help) sed -n '3,10p' "$0"; exit 0 ;;
    *) echo "ckpt_openmpi.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_io=romio321
for mech in none cma; do
  for busy in 0 2000; do
    echo "=== Open MPI single-copy mechanism: $mech; SLUICE_PROGRESS_BUSY_SLEEP=$busy ==="
    OMPI_MCA_btl_vader_single_copy_mechanism=$mech SLUICE_PROGRESS_BUSY_SLEEP=$busy \
      "$here/ckpt_io.sh" -n "$ranks" --sizes "$sizes" "${args[@]}"
  done
done
