# SPDX-License-Identifier: MIT
# Helpers of the security_*.sh tests (sourced; not a test itself: the glob takes *.sh only).
# They need two unprivileged users, created here with useradd and removed at exit: a victim
# whose job runs with sluice, and an attacker on the same node. As root only; elsewhere the
# test is skipped with a message. Programs run as them through setpriv.

# sec_users: creates the users; sets VICTIM/ATTACKER (names) and VUID/AUID; skips if it cannot.
sec_users() {
  if [ "$(id -u)" != 0 ] || ! command -v useradd > /dev/null || ! command -v setpriv > /dev/null; then
    echo "skip: the security tests create two users (useradd) and need root and setpriv"
    exit 0
  fi
  local tag
  tag=$(printf '%04x' $((RANDOM % 65536)))
  VICTIM=slvic$tag ATTACKER=slatk$tag
  SEC_USERS=()
  trap sec_cleanup EXIT
  for u in "$VICTIM" "$ATTACKER"; do
    if ! useradd -M -U -s /bin/sh -d /nonexistent "$u" 2> useradd.err; then
      echo "skip: cannot create user $u: $(cat useradd.err)"
      exit 0
    fi
    SEC_USERS+=("$u")
  done
  VUID=$(id -u "$VICTIM") AUID=$(id -u "$ATTACKER")
  reach_for_users "$VUID" "$AUID" # a private build tree: go on in a reachable copy, or skip
  # A reused uid must not find what an earlier run left in the shared places.
  sec_clean_shared
  chmod 755 "$PWD"
}

sec_clean_shared() {
  local u
  for u in $VUID $AUID; do
    rm -rf "/dev/shm/sluice-$u" "${TMPDIR:-/tmp}/sluice-$u"
  done
}

sec_cleanup() {
  local u
  sec_clean_shared
  cd /
  reach_cleanup
  for u in "${SEC_USERS[@]}"; do
    userdel -f "$u" 2> /dev/null || true
  done
}

# as USER cmd...: runs cmd as USER (its own group, no supplementary groups), with HOME set.
as() {
  local u=$1
  shift
  setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups env HOME="$PWD" USER="$u" "$@"
}

# sec_dir PATH USER [MODE]: a folder owned by USER (default mode 0700).
sec_dir() {
  mkdir -p "$1"
  chown "$2:$(id -g "$2")" "$1"
  chmod "${3:-700}" "$1"
}
