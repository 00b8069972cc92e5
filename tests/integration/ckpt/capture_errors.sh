# SPDX-License-Identifier: MIT
# Errors a program would get without sluice it still gets, with the same message and exit
# status: creating a member in a missing folder (ENOENT), in an unwritable folder (EACCES),
# reading a missing member (ENOENT). Each command runs once plainly and once with capture on,
# and stderr and exit status must be identical.

export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
export SLUICE_CAPTURE='ckpt.%r:nodir/ckpt.%r:ro/ckpt.%r'

# same_failure WHAT cmd...: the command fails the same way with and without sluice.
same_failure() {
  local what=$1; shift
  local rc_plain rc_sluice
  set +e
  env -u LD_PRELOAD "$@" >/dev/null 2>plain.err
  rc_plain=$?
  run_sluice "$@" >/dev/null 2>sluice.err
  rc_sluice=$?
  set -e
  [ "$rc_plain" -ne 0 ] || fail "$what: the plain run succeeded"
  expect_eq "$what: same exit status" "$rc_plain" "$rc_sluice"
  expect_eq "$what: same message" "$(cat plain.err)" "$(cat sluice.err)"
}

same_failure "create in a missing folder" dd if=/dev/zero of=nodir/ckpt.0 count=1
same_failure "read a missing member" cat ckpt.5
same_failure "shell redirection into a missing folder" sh -c 'echo x > nodir/ckpt.1'
same_failure "cmp against a missing member" cmp /dev/null ckpt.6

# EACCES needs a user the folder's permissions apply to: root ignores them, so drop to nobody
# (who must reach the library and this folder: a private build tree moves the rest to a copy).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  trap 'cd /; reach_cleanup' EXIT
  reach_for_users 65534
fi
mkdir ro
chmod 555 ro
if [ "$(id -u)" = 0 ]; then
  if ! command -v setpriv >/dev/null; then
    echo "skip: EACCES (running as root without setpriv)"
    exit 0
  fi
  chmod 755 .
  mkdir -p nobody-stage
  chown 65534:65534 nobody-stage
  export SLUICE_STAGE_DIR="$PWD/nobody-stage"
  as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
else
  as_nobody=()
fi
same_failure "create in an unwritable folder" "${as_nobody[@]}" dd if=/dev/zero of=ro/ckpt.0 count=1
expect_contains "the message is EACCES" "Permission denied" "$(cat sluice.err)"
[ -z "$(ls ro)" ] || fail "something was created in the unwritable folder"
echo "ok: nothing created in ro/"
