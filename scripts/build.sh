#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configures and builds sluice into ./build (or $BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_WERROR=ON >/dev/null
cmake --build "$build" -j "$(nproc)"
