# SPDX-License-Identifier: MIT
# Host names and paths as long as Linux allows (docs/TRACE.md). In a private UTS namespace the host
# name is 64 bytes, the most the kernel takes, one more than a 64-byte buffer with its terminator
# holds. Under mpiexec -n 3 and -n 2, a program that lives in a folder whose path is over 700
# bytes: every trace file's header and `sluice-trace summary` name the host and the program
# whole. A container that `sluice-ckpt pack` writes names the host whole in `sluice-ckpt info`.
# A SLUICE_DEBUG file name that %p makes longer than PATH_MAX is refused with one line per
# process, where it was cut into another file's name; a SLUICE_STAGE_DIR longer than PATH_MAX is
# refused with one line per process, where it was cut into another folder.
if [ "${LONG_HOST_NS:-}" != 1 ]; then
  if [ "$(id -u)" != 0 ] || ! unshare --uts true 2>/dev/null; then
    echo "SKIP: a private UTS namespace (unshare --uts) needs root"
    exit 77
  fi
  exec env LONG_HOST_NS=1 SLUICE_LIB="$SLUICE_LIB" SLUICE_BIN_DIR="$SLUICE_BIN_DIR" \
    SLUICE_APPS_DIR="$SLUICE_APPS_DIR" unshare --uts bash "$0" "${BASH_SOURCE[0]}"
fi
unset LONG_HOST_NS
host=sluice-test-a-host-name-of-64-bytes-the-longest-linux-allows-x64
expect_eq "the test's host name is 64 bytes" 64 "${#host}"
hostname "$host"
expect_eq "the namespace's host name" "$host" "$(uname -n)"

# A program in a folder whose path is over 700 bytes (components of 100 bytes). Not an MPI
# program: UCX 1.13 (under Debian 12's MPICH) aborts every process that loads it on a 64-byte
# host name (docs/MPI.md), so the container is written by `sluice-ckpt pack`, which needs no MPI.
deep=$PWD
for i in 1 2 3 4 5 6 7; do deep=$deep/$(printf "folder$i-%.0s" $(seq 13) | cut -c1-100); done
mkdir -p "$deep"
cp "$(type -P true)" "$deep/true"
expect_eq "the program's path is over 700 bytes" 1 "$(( ${#deep} > 700 ))"

for n in 3 2; do
  run_dist "$n" SLUICE_TRACE_DIR="$PWD/tr$n" "$deep/true"
  "$SLUICE_BIN_DIR/sluice-trace" summary "tr$n" >summary.$n
  expect_eq "$n ranks: every process's line names the host and the program whole" "$n" \
    "$(grep -cF -- " $host $deep/true" summary.$n || true)"
done

mkdir packed && echo one >packed/ckpt.0 && echo two >packed/ckpt.1
"$SLUICE_BIN_DIR/sluice-ckpt" pack "$PWD/packed/ckpt.%r" packed/ckpt.0 packed/ckpt.1 >/dev/null
expect_contains "sluice-ckpt pack: the container names the host whole" "host $host," \
  "$("$SLUICE_BIN_DIR/sluice-ckpt" info packed/ckpt.@r.sluice)"

# SLUICE_DEBUG: a name of 4095 bytes that fits PATH_MAX as spelled, not once %p%p is expanded
# (two pids of 5 to 7 digits); its last component stays under 255 bytes, so a cut name would open.
dd=$PWD
while [ $(( ${#dd} + 240 )) -lt 4091 ]; do dd=$dd/$(printf 'd%.0s' $(seq 200)); done
mkdir -p "$dd"
spec=$dd/$(printf "x%.0s" $(seq $((4094 - ${#dd} - 4))))%p%p
expect_eq "the SLUICE_DEBUG spelling is 4095 bytes" 4095 "${#spec}"
rc_of run_dist 2 SLUICE_DEBUG="$spec" true 2>debug.err
expect_eq "a debug file name too long once expanded: the job still runs" 0 "$rc"
expect_eq "no file under a cut name" "" "$(ls "$dd")"
expect_eq "one line per process says why" 2 "$(grep -c 'SLUICE_DEBUG=.*File name too long; debug stream off' debug.err)"

# SLUICE_STAGE_DIR longer than PATH_MAX: refused with one line per process, never cut into
# another folder that staging would then use (its first 4095 bytes name a folder that could be
# made). The job needs MPI, so the host takes a shorter name (UCX, above).
hostname sluice-test-short-host
sd=$PWD/stage
while [ $(( ${#sd} + 240 )) -lt 4091 ]; do sd=$sd/$(printf 's%.0s' $(seq 200)); done
mkdir -p "$sd"
long_stage=$sd/$(printf 'x%.0s' $(seq $((4100 - ${#sd} - 1))))
expect_eq "the stage folder's path is 4100 bytes" 4100 "${#long_stage}"
mkdir st && cd st
set +e
run_dist 2 SLUICE_CAPTURE='ckpt.%r' SLUICE_STAGE_DIR="$long_stage" \
  sh -c 'echo rank $PMI_RANK >ckpt.$PMI_RANK' 2>stage.err
set -e
cd ..
expect_eq "one line per process says why" 2 \
  "$(grep -c 'stage folder (SLUICE_STAGE_DIR) refused: SLUICE_STAGE_DIR is 4100 bytes, longer than PATH_MAX' st/stage.err)"
expect_eq "no folder under a cut name" "" "$(ls "$sd")"
