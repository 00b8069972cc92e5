#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs sluice's build and test dependencies from Debian's packages (Debian 12, as root).
# Does nothing when they are all present already, but for the MPI alternatives (below).
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  mpich libmpich-dev
  openmpi-bin libopenmpi-dev       # the Open MPI build of scripts/test-openmpi.sh (full paths only)
  ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-headers pocl-opencl-icd clinfo
  libunwind-dev uthash-dev
  googletest libgtest-dev
  python3 python3-pyopencl python3-numpy python3-matplotlib graphviz
  libhdf5-dev hdf5-tools python3-h5py   # the HDF5 view of a global array (docs/LAYOUT.md)
  coreutils procps
  strace                           # the tests that count system calls (metadata operations, looks at start)
  clang-format
  clang libclang-rt-14-dev
  man-db groff-base                # man -l renders the generated pages (install_package test)
  slurm-wlm munge                  # Slurm: the one-node test (slurm_jobs), the testbed's (cluster.slurm)
  bindfs                           # testbed.sh up --localflock: flock local to each node (cluster.two_jobs)
)
# Debian's alternatives choose the MPI behind mpicc, mpiexec, libmpi.so and mpi.h by priority,
# and Open MPI's (50) beats MPICH's (40): installing Open MPI would make it the system's MPI. The
# system's MPI stays MPICH (the default build and the main suite use it; the Open MPI build names
# Open MPI's binaries by their full paths), set explicitly (manual mode, which later installs of
# either package keep) before and after installing; each change is said on one line.
mpich_alternatives() { # NAME PATH of each MPI alternative that has an MPICH choice
  echo "mpi /usr/bin/mpicc.mpich"
  echo "mpirun /usr/bin/mpirun.mpich"
  update-alternatives --get-selections 2>/dev/null |
    awk '$1 ~ /^mpi-.*-linux-gnu.*$/ {print $1, "/usr/include/" substr($1, 5) "/mpich"}'
}
pin_mpich() {
  local name path query value status
  while read -r name path; do
    [ -e "$path" ] || continue # MPICH not installed (yet)
    query=$(update-alternatives --query "$name" 2>/dev/null || true)
    value=$(sed -n 's/^Value: //p' <<<"$query")
    status=$(sed -n 's/^Status: //p' <<<"$query")
    [ "$value" != "$path" ] || [ "$status" != manual ] || continue
    if [ "$(id -u)" -ne 0 ]; then
      [ "$value" == "$path" ] || echo "install-deps: the system's $name is $value, not MPICH's $path (as root: update-alternatives --set $name $path)" >&2
      continue
    fi
    update-alternatives --set "$name" "$path" >/dev/null
    echo "install-deps: alternative $name set to MPICH ($path; was ${value:-none}, $status)"
  done < <(mpich_alternatives)
}
pin_mpich

# One dpkg-query for all (one per package took 22 s on a loaded 2-core machine: each reads the
# whole status database); it fails for a package never seen, which then counts as missing.
status=$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null || true)
missing=()
for p in "${packages[@]}"; do
  grep -qx "$p install ok installed" <<<"$status" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing Debian packages: ${missing[*]} (run as root, or install them yourself)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
pin_mpich
