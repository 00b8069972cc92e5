#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# File-system metadata of one version, counted from outside (docs/PERFORMANCE.md, "Container
# metadata per version"): every rank writes a 1 MiB member (tests/apps/ckpt_sized, plain POSIX,
# one step) under mpiexec on this one node, the whole job under strace -f -y. The calls on the
# set's folder are split into
#   version ops   openat, fdatasync, fsync, rename, unlink of the version's temporary file, the
#                 container and the folder's lock: by the home's thread (the one that renames
#                 the version into place) and by all other threads, and how many threads those are;
#   lookups       read-only opens of the committed container (a rank's open of its member
#                 looks for a previous version), per rank.
# Staging files (node-local, not in the set's folder) are not counted.
# usage: bench/commit_meta.sh [BUILD_DIR] [RANKS...] (default 4 16 32)
#   SLUICE_CB_WRITE: auto (default: 1 MiB members own their stripes, so they are not shuffled),
#   disable or enable; SLUICE_LIB: another build's library for a before/after.
set -u
build=${1:-build}
shift || true
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(4 16 32)
lib=${SLUICE_LIB:-$build/lib/libsluice.so}
export -n SLUICE_LIB # the bench's, not the library's (which would warn of it)
app=$build/tests/apps/ckpt_sized
mpiexec=${MPIEXEC:-mpiexec}
export SLUICE_CB_WRITE=${SLUICE_CB_WRITE:-auto}
work=$(mktemp -d "${TMPDIR:-/tmp}/commit_meta.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
command -v strace > /dev/null || { echo "commit_meta.sh: needs strace" >&2; exit 2; }

printf '# SLUICE_CB_WRITE=%s, 1 MiB a rank, one version, %s\n' "$SLUICE_CB_WRITE" "$lib"
printf '%5s %9s %10s %13s %16s\n' ranks "home ops" "other ops" "other threads" "lookups per rank"
for n in "${ranks[@]}"; do
  d=$work/$n
  mkdir -p "$d/ck" "$d/st"
  sizes=$(for _ in $(seq "$n"); do printf '1048576 '; done)
  # shellcheck disable=SC2086
  SLUICE_STAGE_DIR=$d/st SLUICE_CAPTURE="$d/ck/ckpt.%r" timeout 300 \
    strace -f --seccomp-bpf -qq -y -e trace=openat,fdatasync,fsync,rename,unlink -o "$d/strace" \
    "$mpiexec" -n "$n" env LD_PRELOAD="$lib" "$app" write "$d/ck" $sizes > /dev/null \
    || echo "# $n ranks: the job failed"
  # A call strace shows in two pieces (unfinished ... resumed) counts once.
  grep -F "$d/ck/" "$d/strace" | grep -v -F '<... ' | awk -v n="$n" '
    { tid[NR] = $1; look[NR] = $2 ~ /^openat\(/ && /O_RDONLY/ && !/\.tmp\./ && !/\.sluice\.lock/ }
    $2 ~ /^rename\(/ && /= 0$/ && /\.tmp\./ { home = $1 }
    END { for (i = 1; i <= NR; i++) { if (look[i]) l++; else if (tid[i] == home) h++; else { o++; who[tid[i]] = 1 } }
      for (t in who) w++
      printf "%5d %9d %10d %13d %16.1f\n", n, h, o, w, l / n }'
done
