# SPDX-License-Identifier: MIT
# A shell's descriptor numbers are its own while the commit engine runs (common/fd_guard.h):
# dash and bash write a member with `>` and another through `exec 3>` / `exec 4>` (the shell
# opens the file, then dup2s it onto the number) in a loop, so that every close starts a commit
# on sluice's own thread while the shell moves descriptors. Before the guard, the shell's dup2
# landed on a descriptor the engine had just opened: the shell's write then failed ("printf:
# I/O error", EBADF) or the engine wrote into the shell's file. Each shell: exit status 0,
# nothing on stderr, the last step's bytes read back through sluice, the container verifies.
CKPT="$SLUICE_BIN_DIR/sluice-ckpt"
export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
steps=1500

# loop SHELL FD: the loop in SHELL, writing its second member through descriptor FD.
loop() {
  rm -rf "$1" && mkdir "$1"
  local rc=0
  ( cd "$1" && SLUICE_CAPTURE='ckpt.%r' run_sluice "$1" -c '
      i=0
      while [ $i -lt '"$steps"' ]; do
        printf "a%s" $i > ckpt.0 || exit 11
        exec '"$2"'>ckpt.1 || exit 12
        printf "b%s" $i >&'"$2"' || exit 13
        exec '"$2"'>&- || exit 14
        i=$((i + 1))
      done' ) > "$1.out" 2> "$1.err" || rc=$?
  expect_eq "$1: exit status" 0 "$rc"
  expect_eq "$1: nothing on stderr" "" "$(cat "$1.err")"
  expect_eq "$1: nothing on stdout" "" "$(cat "$1.out")"
  last=$((steps - 1))
  expect_eq "$1: the last step of both members" "a$last b$last" \
    "$(cd "$1" && SLUICE_CAPTURE='ckpt.%r' run_sluice sh -c 'cat ckpt.0; echo " $(cat ckpt.1)"')"
  "$CKPT" verify "$1" > /dev/null || fail "$1: the container does not verify"
  echo "ok: $1: $steps steps through descriptor $2"
}

loop dash 3
loop bash 4
expect_eq "nothing left staged" "" "$(ls -A "$SLUICE_STAGE_DIR" | grep -v '^p-' || true)"
