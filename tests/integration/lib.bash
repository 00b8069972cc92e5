# SPDX-License-Identifier: MIT
# Helpers for integration scripts (sourced; not a test itself: the glob takes *.sh only).
# Each script runs with `set -euo pipefail` in its own scratch folder.

# MPI_FLAVOUR: openmpi or mpich, the MPI of $MPIEXEC (its path is the real one, e.g. orterun, so
# the flavour comes from its version). Open MPI refuses root and oversubscription unless told
# (MPICH, the default, needs nothing), and kills every rank as soon as one has exited with a
# non-zero status, even after MPI_Finalize, while the others still run their exit (a trace not
# yet written): told not to, it lets each rank end as hydra does (docs/MPI.md, "Open MPI").
if "$MPIEXEC" --version 2>&1 | grep -q -E "Open MPI|OpenRTE"; then
  MPI_FLAVOUR=openmpi
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  export OMPI_MCA_orte_abort_on_non_zero_status=0
else
  MPI_FLAVOUR=mpich
fi

# mpirun N cmd...: real mpiexec with N ranks on this machine (oversubscription allowed).
mpirun() {
  local n=$1; shift
  "$MPIEXEC" -n "$n" "$@"
}

# run_sluice [VAR=value...] cmd...: cmd in one process with libsluice preloaded (keeps the
# caller's SLUICE_* variables; VAR=value words are set for cmd only).
run_sluice() {
  env LD_PRELOAD="$SLUICE_LIB" "$@"
}

# run_dist N [VAR=value...] cmd...: cmd on N ranks of real mpiexec, libsluice preloaded in every
# rank, ended after RUN_TIMEOUT seconds (120) so that a hung job fails the test instead of
# holding it until ctest's limit.
run_dist() {
  local n=$1; shift
  timeout "${RUN_TIMEOUT:-120}" "$MPIEXEC" -n "$n" env LD_PRELOAD="$SLUICE_LIB" "$@"
}

# without_hydra_banner: stdin less MPICH hydra's "BAD TERMINATION" banner (its lines of '='
# and the blank line before it). hydra prints it on the job's stdout when a rank ends badly; it
# is the launcher's, never the program's (docs/FAULTS.md says when it appears with sluice).
without_hydra_banner() {
  awk '/^=+$/ { inside = !inside; next } inside { next } /^$/ { held++; next }
       { while (held > 0) { print ""; held-- } print }'
}

# hydra_proxy_epipe FILE: true when FILE (a job's stderr) holds MPICH hydra's proxy dying of a
# write to a rank it had just killed (its PMI answer met EPIPE; mpiexec then exits 255). A race
# inside MPICH 4.0.2's launcher, not sluice's (docs/FAULTS.md); a test may run such a job again.
hydra_proxy_epipe() {
  grep -q 'HYDU_sock_write.*Broken pipe' "$1" && grep -q 'error sending PMI response' "$1"
}

# rc_of cmd...: runs cmd (a simple command, redirections and VAR=value prefixes allowed) and
# sets rc to its exit status without ending the test (set -e stays on around it).
rc_of() {
  rc=0
  "$@" || rc=$?
}

# flip_byte FILE OFFSET: inverts every bit of the byte at OFFSET, in place. Corrupts whatever
# the byte was (writing a fixed value into random data changed nothing once in 256 runs).
flip_byte() {
  local byte
  byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  [ -n "$byte" ] || fail "flip_byte: $1 has no byte at $2"
  printf "$(printf '\\%03o' $((byte ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# ranks_gone PATTERN: kills (SIGKILL) every process whose command line matches PATTERN (pgrep
# -f) and waits, bounded (10 s), until none is left. hydra's proxy puts each rank in a session
# of its own, so killing mpiexec's process group does not reach the ranks: until they are gone,
# their staged members count as a running process's (commit_read.c), not as a kept version.
ranks_gone() {
  local t
  for t in $(seq 200); do
    pgrep -f -- "$1" > /dev/null || return 0
    pkill -9 -f -- "$1" 2> /dev/null || true
    sleep 0.05
  done
  fail "processes matching [$1] still there after 10 s"
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

# first_blocked UID PATH: the first folder on the way to PATH that UID may not search (its own
# group, no supplementary groups), or nothing if UID reaches PATH.
first_blocked() {
  local uid=$1 d="" part gid
  gid=$(id -g "$uid" 2> /dev/null || echo "$uid")
  local IFS=/
  for part in $2; do
    [ -n "$part" ] || continue
    [ -d "$d/$part" ] || break
    d="$d/$part"
    setpriv --reuid="$uid" --regid="$gid" --clear-groups test -x "$d" || { echo "$d"; return; }
  done
}

# reach_for_users UID...: tests that run programs as other users need those users to reach the
# library, the programs and the working folder. Where the build tree is private to its owner (a
# checkout inside `mktemp -d`, mode 0700), the test goes on in a fresh 0755 folder under /tmp
# with copies of libsluice, the tools and the apps (SLUICE_LIB, SLUICE_BIN_DIR, SLUICE_APPS_DIR,
# SLUICE_TEST_SCRATCH, SLUICE_TEST_STAGE and the working folder point there; REACH_DIR is it,
# removed by reach_cleanup); where even that is out of reach it skips (exit 77), naming the
# folder and its mode.
reach_for_users() {
  local uid p b="" who=""
  for uid in "$@"; do
    for p in "$PWD" "$SLUICE_LIB" "$SLUICE_APPS_DIR" "$SLUICE_BIN_DIR"; do
      b=$(first_blocked "$uid" "$p")
      [ -z "$b" ] || { who=$uid; break 2; }
    done
  done
  [ -n "$b" ] || return 0
  local mode
  mode=$(stat -c %a "$b")
  REACH_DIR=$(mktemp -d /tmp/sluice-test.XXXXXX)
  chmod 755 "$REACH_DIR"
  for uid in "$@"; do
    if [ -n "$(first_blocked "$uid" "$REACH_DIR")" ]; then
      reach_cleanup
      echo "SKIP: uid $who cannot reach $b (mode $mode), nor uid $uid a copy in /tmp"
      exit 77
    fi
  done
  echo "note: uid $who cannot reach $b (mode $mode): running in $REACH_DIR with copies"
  mkdir "$REACH_DIR/lib" "$REACH_DIR/work"
  cp "$SLUICE_LIB" "$REACH_DIR/lib/"
  cp -r "$SLUICE_BIN_DIR" "$REACH_DIR/bin"
  cp -r "$SLUICE_APPS_DIR" "$REACH_DIR/apps"
  SLUICE_LIB=$REACH_DIR/lib/$(basename "$SLUICE_LIB")
  SLUICE_BIN_DIR=$REACH_DIR/bin SLUICE_APPS_DIR=$REACH_DIR/apps
  SLUICE_TEST_SCRATCH=$REACH_DIR/work SLUICE_TEST_STAGE=$REACH_DIR/work/.stage
  cd "$REACH_DIR/work"
}

reach_cleanup() {
  [ -z "${REACH_DIR:-}" ] || rm -rf "$REACH_DIR"
}

# same_as_local N PREFIX APP [ARGS...]: the promise of distributed OpenCL, checked for one rank
# count. APP (an OpenCL program that prints its results) runs with N local PoCL devices without
# sluice (PREFIXlocalN.out, stdout and stderr), then on N ranks with SLUICE_OPENCL=distributed and
# one PoCL device each (PREFIXdistN.out, its stderr PREFIXdistN.err, traces in PREFIXtrN): exit
# code 0, the same output, nothing on the distributed run's stderr. COLD_CACHE=1: every
# distributed run with an empty PoCL cache (PREFIXcacheN: every kernel is compiled, and linked by
# a child of the rank, on every rank).
same_as_local() {
  local n=$1 p=$2; shift 2
  local cache=()
  [ "${COLD_CACHE:-0}" != 1 ] || { cache=(POCL_CACHE_DIR="$PWD/${p}cache.local"); mkdir -p "${p}cache.local"; }
  env "${cache[@]}" POCL_DEVICES="$(printf 'pthread%.0s ' $(seq "$n"))" timeout 120 "$@" >"${p}local$n.out" 2>&1 ||
    fail "$* fails with $n local devices: $(tail -3 "${p}local$n.out")"
  [ "${COLD_CACHE:-0}" != 1 ] || { cache=(POCL_CACHE_DIR="$PWD/${p}cache$n"); mkdir "${p}cache$n"; }
  rc_of run_dist "$n" "${cache[@]}" POCL_DEVICES=pthread SLUICE_OPENCL=distributed SLUICE_TRACE_DIR="$PWD/${p}tr$n" \
    "$@" >"${p}dist$n.out" 2>"${p}dist$n.err"
  expect_eq "$(basename "$1") on $n ranks: exit code" 0 "$rc"
  diff "${p}local$n.out" "${p}dist$n.out" >diff.out || fail "$n ranks differ from $n local devices: $(head -20 diff.out)"
  [ ! -s "${p}dist$n.err" ] || fail "stderr not empty on $n ranks: $(head -5 "${p}dist$n.err")"
  echo "ok: $(basename "$1") on $n ranks prints what it prints with $n local devices ($(wc -l <"${p}dist$n.out") lines)"
}

# same_as_local_devices APP: same_as_local on 1, 2 and 3 ranks with empty PoCL caches (local1.out,
# dist1.out, tr1...), and APP with SLUICE_OPENCL=on on 3 local devices (on.out) the same as
# without sluice.
same_as_local_devices() {
  local app=$1 n
  for n in 1 2 3; do
    COLD_CACHE=1 same_as_local "$n" "" "$app"
  done
  POCL_CACHE_DIR=$PWD/cache.on POCL_DEVICES="pthread pthread pthread" SLUICE_OPENCL=on \
    run_sluice timeout 120 "$app" >on.out 2>&1
  diff local3.out on.out >diff.out || fail "SLUICE_OPENCL=on differs from three local devices: $(head -20 diff.out)"
  echo "ok: pass-through identical"
}
