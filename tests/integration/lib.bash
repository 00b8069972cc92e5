# SPDX-License-Identifier: MIT
# Helpers for integration scripts (sourced; not a test itself: the glob takes *.sh only).
# Each script runs with `set -euo pipefail` in its own scratch folder.

# Open MPI refuses root and oversubscription unless told (MPICH, the default, needs nothing).
if "$MPIEXEC" --version 2>&1 | grep -q -E "Open MPI|OpenRTE"; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fi

# mpirun N cmd...: real mpiexec with N ranks on this machine (oversubscription allowed).
mpirun() {
  local n=$1; shift
  "$MPIEXEC" -n "$n" "$@"
}

# with_sluice cmd...: run cmd with libsluice preloaded (keeps the caller's SLUICE_* variables).
with_sluice() {
  env LD_PRELOAD="$SLUICE_LIB" "$@"
}

fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
  [ "$2" == "$3" ] || fail "$1: expected [$2], got [$3]"
  echo "ok: $1"
}

# expect_contains WHAT NEEDLE HAYSTACK
expect_contains() {
  case "$3" in *"$2"*) echo "ok: $1" ;; *) fail "$1: [$2] not found in [$3]" ;; esac
}
