# SPDX-License-Identifier: MIT
# The build check that the runtime never calls its own exported wrappers: libsluice.so passes it,
# and a library that exports open() and calls open() internally (the bug class: a runtime call
# that would bind to sluice's own wrapper) is reported by name.
check=$SOURCE_DIR/scripts/check-self-calls.sh
"$check" "$SLUICE_LIB" || fail "libsluice.so calls its own exported names"
echo "ok: libsluice.so calls none of its own exported names"
cat >bad.c <<'C'
#include <fcntl.h>
__attribute__((visibility("default"))) int open(const char *path, int flags, ...) { return -1; }
int helper(const char *p) { return open(p, O_RDONLY); }
C
cc -shared -fPIC -o libbad.so bad.c
if "$check" libbad.so 2>err.txt; then fail "a library calling its own open() passed the check"; fi
expect_contains "the check names the self-called function" "open" "$(cat err.txt)"
