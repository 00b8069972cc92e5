#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs sluice's build and test dependencies from Debian's packages (Debian 12, as root).
# Does nothing when they are all present already.
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  mpich libmpich-dev
  ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-headers pocl-opencl-icd clinfo
  libunwind-dev uthash-dev
  googletest libgtest-dev
  python3 python3-pyopencl python3-numpy python3-matplotlib graphviz
  coreutils procps
  clang-format
  clang libclang-rt-14-dev
  man-db groff-base                # man -l renders the generated pages (install_package test)
  slurm-wlm munge                  # the one-node Slurm test (slurm_jobs)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
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
