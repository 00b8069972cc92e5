#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configures and builds sluice into ./build (or $BUILD_DIR). Extra arguments go to the configure
# step (e.g. -DSLUICE_BUILD_TESTS=OFF, -DSLUICE_MPI=openmpi; CI adds -DSLUICE_WERROR=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
