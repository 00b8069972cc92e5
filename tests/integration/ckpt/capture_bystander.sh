# SPDX-License-Identifier: MIT
# What capture costs a process that captures nothing (docs/CAPTURE.md, "fork and exec"): with
# SLUICE_CAPTURE set, `true` and `env` under mpiexec (a job step of a script) and alone neither
# look for members an earlier image left (a readlink of every descriptor in /proc/self/fd, a
# listing of the stage folder), nor read its umask, nor make the stage folder; the exec mark
# (m-<host>-<pid>-exec, runtime/ckpt/commit/stage_mark.c) is what tells an exec'ed image to look.
# The class the mark must not break: a process that stages a member and execs another program
# (bash's `exec 3> ckpt; ...; exec sh -c '... >&3'`, whose second image writes through the
# inherited descriptor; `bash -c 'echo > ckpt.N'`, a member closed and not yet committed when
# bash execs the last command) still has the member committed whole, on 1 and 3 ranks, and no
# mark is left behind. System calls counted with strace.
command -v strace > /dev/null || { echo "SKIP: no strace"; exit 77; }
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
stage=$PWD/stage # made by the first process that stages, not before
export SLUICE_STAGE_DIR=$stage
d=$PWD/run
mkdir -p "$d"
export SLUICE_CAPTURE="$d/ckpt.%r"

# looks FILE: the start-up looks of the traced processes (strace -f output).
looks() {
  echo "fd links $(grep -c 'readlink("/proc/self/fd/' "$1" || true)," \
    "stage listings $(grep -c "openat(.*\"$stage\".*O_DIRECTORY" "$1" || true)," \
    "status reads $(grep -c '"/proc/self/status"' "$1" || true)"
}
nothing="fd links 0, stage listings 0, status reads 0"

strace -f -qq -e trace=readlink,openat -o alone.st env LD_PRELOAD="$SLUICE_LIB" true || fail "true failed"
expect_eq "alone, nothing captured: looks at start" "$nothing" "$(looks alone.st)"
for n in 1 3; do
  timeout 60 strace -f -qq -e trace=readlink,openat -o "job$n.st" "$MPIEXEC" -n "$n" \
    env LD_PRELOAD="$SLUICE_LIB" true || fail "mpiexec -n $n true failed"
  expect_eq "$n ranks, nothing captured: looks at start" "$nothing" "$(looks "job$n.st")"
done
[ ! -e "$stage" ] || fail "a job that captured nothing made the stage folder"

# A member opened by one image and written by the next through the inherited descriptor: the
# second image looks (it finds the mark), adopts it, and its exit commits it.
for n in 1 3; do
  timeout 60 strace -f -qq -e trace=readlink,openat -o "exec$n.st" "$MPIEXEC" -n "$n" \
    env LD_PRELOAD="$SLUICE_LIB" bash -c "exec 3> $d/ckpt.\$PMI_RANK; echo first >&3; exec sh -c 'echo second >&3'" \
    || fail "$n ranks: the exec'ing writer failed"
  for r in $(seq 0 $((n - 1))); do
    expect_eq "$n ranks, rank $r: member written by two images" "first
second" "$(run_sluice cat "$d/ckpt.$r")"
  done
  links=$(grep -c 'readlink("/proc/self/fd/' "exec$n.st" || true)
  [ "$links" -gt 0 ] || fail "$n ranks: the exec'ed image did not look for inherited descriptors"
  expect_eq "$n ranks: nothing left staged (no mark)" "" "$(ls -A "$stage" | grep -v '^vd$' || true)"
done

# A member closed by bash and not committed when bash execs its last command (cat): cat's image
# adopts it from its sidecar and commits it at its exit.
timeout 60 "$MPIEXEC" -n 3 env LD_PRELOAD="$SLUICE_LIB" \
  bash -c "echo closed\$PMI_RANK > $d/ckpt.\$PMI_RANK; cat /dev/null" || fail "closed-then-exec job failed"
for r in 0 1 2; do
  expect_eq "rank $r: member closed before the exec" "closed$r" "$(run_sluice cat "$d/ckpt.$r")"
done
expect_eq "closed then exec: nothing left staged (no mark)" "" "$(ls -A "$stage" | grep -v '^vd$' || true)"
"$ckpt" verify "$d/ckpt.@r.sluice" > /dev/null || fail "the container does not verify"
