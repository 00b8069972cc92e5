#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's test command: installs dependencies, builds, runs the whole test suite, then the
# sanitizer jobs (scripts/sanitize.sh: ASan+UBSan over the unit tests, TSan over the threaded parts),
# then a subset against Open MPI in a second build folder (scripts/test-openmpi.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh -DSLUICE_WERROR=ON # CI: warnings are errors (users' builds do not force it)
# As many tests at once as cores: many wait on timeouts, stopped ranks and launchers rather than
# compute. Tests that share something take turns (RESOURCE_LOCK in tests/CMakeLists.txt); the
# longest start first (COST). CTEST_PARALLEL_LEVEL chooses another level (1: one at a time).
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure --timeout 600 -j "${CTEST_PARALLEL_LEVEL:-$(nproc)}")
./scripts/sanitize.sh
./scripts/test-openmpi.sh -DSLUICE_WERROR=ON
