#!/usr/bin/env bash
# Runs one integration script in a fresh scratch folder with the shared helpers loaded.
set -euo pipefail
script=$1
name=$(basename "$script" .sh)
scratch="${SCRATCH_ROOT:-/tmp/sluice-tests}/$name"
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch"
export SLUICE_TEST_SCRATCH=$scratch
# A private stage folder per test, so that tests never see each other's staged data.
export SLUICE_TEST_STAGE=$scratch/.stage
source "$(dirname "$0")/integration/lib.bash"
source "$script"
