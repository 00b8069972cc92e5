#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs one integration script in a fresh scratch folder with the shared helpers loaded.
set -euo pipefail
script=$1
name=$(basename "$script" .sh)
scratch="${SCRATCH_ROOT:-/tmp/sluice-tests}/$name"
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch"
SLUICE_TEST_SCRATCH=$scratch
# A private stage folder per test, so that tests never see each other's staged data.
SLUICE_TEST_STAGE=$scratch/.stage
# The harness's own variables stay shell variables: exported, their SLUICE_ prefix would make the
# library warn about unknown variables in every process the test starts. SLUICE_TEST_ROUNDS too
# (a test's rounds by hand: `SLUICE_TEST_ROUNDS=30 ctest -R ...`).
export -n SLUICE_LIB SLUICE_BIN_DIR SLUICE_APPS_DIR SLUICE_TEST_ROUNDS
source "$(dirname "$0")/integration/lib.bash"
source "$script"
