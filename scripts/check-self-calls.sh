#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fails when a shared library calls, through its PLT or GOT, a name that it exports itself:
# preloaded, such a call binds to the library's own wrapper instead of libc (the runtime must
# reach libc through SLUICE_REAL or raw system calls). Run after each link of libsluice.so and by
# integration.build_self_calls on a library made to fail.
#   check-self-calls.sh LIBRARY
set -euo pipefail
lib=${1:?usage: check-self-calls.sh LIBRARY}
# No exception: dlsym too, exported for programs that look OpenCL up by hand, is reached by the
# runtime through sluice_real_dlsym (common/real.h).
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TWi]$/ {sub(/@.*/, "", $3); print $3}' | sort -u)
called=$(readelf -rW "$lib" | awk '$3 ~ /JUMP_SLOT|GLOB_DAT/ {sub(/@.*/, "", $5); print $5}' | sort -u)
bad=$(comm -12 <(echo "$exported") <(echo "$called") || true)
if [ -n "$bad" ]; then
  echo "check-self-calls: $(basename "$lib") calls names it exports itself (use SLUICE_REAL or a raw system call): $(echo $bad)" >&2
  exit 1
fi
