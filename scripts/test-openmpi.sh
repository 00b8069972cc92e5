#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CI's Open MPI job (run by scripts/test.sh after the MPICH suite): builds sluice against Open MPI
# (-DSLUICE_MPI=openmpi) into ./build-openmpi (or $OPENMPI_BUILD_DIR) and runs the integration
# tests below with Open MPI's mpirun. The system's MPI stays MPICH (scripts/install-deps.sh): the
# build finds mpicc.openmpi and mpiexec.openmpi by name, never through the alternatives. Each test
# must pass and must really have run under Open MPI: it gets a fresh TMPDIR, and the per-rank
# claim folders sluice made there (docs/MPI.md) must name Open MPI jobs (ompi-<jobid>@...), none
# a hydra one. Extra arguments go to the configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${OPENMPI_BUILD_DIR:-build-openmpi}
# capture and its restart, distributed OpenCL, traces, MPI's life cycle (lazy start, Fortran).
tests=(capture_mpi_roundtrip commit_restart_rw commit_ranks dist_samples dist_clinfo trace_mpi
  mpi_trace_ranks mpi_lazy_init mpi_fortran)

fail() { echo "test-openmpi: FAIL: $*" >&2; exit 1; }
ompi_info=/usr/bin/ompi_info
[ -x "$ompi_info" ] || fail "$ompi_info not found (apt-get install openmpi-bin libopenmpi-dev)"
echo "test-openmpi: $("$ompi_info" --version | head -1); the system's mpiexec: $(readlink -f "$(command -v mpiexec)")"

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_MPI=openmpi "$@" >/dev/null
# What the tests use: the library, the tools, of the unit tests only the one mpi_lazy_init runs
# under mpirun, and the test programs that the tests' scripts name (app_NAME for each NAME that is
# a word of one of them), not every program of tests/apps.
targets=(sluice sluice_ckpt_tool sluice_trace_tool sluice_launcher cl_conf_native_plugin test_roles_rank_child)
scripts=()
for t in "${tests[@]}"; do
  for f in tests/integration/"$t".sh tests/integration/*/"$t".sh; do
    if [ -e "$f" ]; then scripts+=("$f"); fi
  done
done
[ ${#scripts[@]} -eq ${#tests[@]} ] || fail "not one script per test: ${tests[*]} -> ${scripts[*]}"
for app in $(cmake --build "$build" --target help | sed -n 's/^\.\.\. app_\([A-Za-z0-9_]*\).*/\1/p'); do
  if grep -qw -- "$app" "${scripts[@]}"; then targets+=("app_$app"); fi
done
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
lib=$build/lib/libsluice.so
objdump -p "$lib" | grep -q 'NEEDED *libmpi\.so\.40' || fail "$lib does not link Open MPI's libmpi.so.40"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/sluice-ompi.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
failed=()
i=0
for t in "${tests[@]}"; do
  i=$((i + 1))
  mkdir "$scratch/$i" # short: Open MPI's session folders and sockets live under TMPDIR
  start=$SECONDS
  if ! (cd "$build" && TMPDIR=$scratch/$i ctest -R "^integration\.$t\$" --output-on-failure --timeout 600 >"$scratch/$t.log" 2>&1); then
    cat "$scratch/$t.log"
    failed+=("$t")
    continue
  fi
  grep -q "^1/1 Test .*integration\.$t \.*  *Passed" "$scratch/$t.log" || { cat "$scratch/$t.log"; failed+=("$t (not run)"); continue; }
  jobs=$(ls "$scratch/$i/sluice-$(id -u)/claims" 2>/dev/null || true)
  if [ -z "$jobs" ] || grep -qv '^ompi-' <<<"$jobs"; then
    failed+=("$t (claim folders [${jobs//$'\n'/ }]: not an Open MPI job)")
    continue
  fi
  echo "test-openmpi: integration.$t passed under Open MPI in $((SECONDS - start)) s (job $(head -1 <<<"$jobs"))"
done
[ ${#failed[@]} -eq 0 ] || fail "${#failed[@]} of ${#tests[@]} failed: ${failed[*]}"
echo "test-openmpi: all ${#tests[@]} tests passed under Open MPI"
