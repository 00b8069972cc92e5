# SPDX-License-Identifier: MIT
# The C sources follow the checked-in .clang-format (formatted once, tree-wide): any diff fails.
# Debian 12's clang-format (14) is the reference version; install-deps.sh installs it.
command -v clang-format >/dev/null || fail "clang-format not found (apt-get install clang-format)"
cd "$SOURCE_DIR"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files '*.c' '*.h' >"$SLUICE_TEST_SCRATCH/files"
else
  find runtime shim tools tests bench -name '*.[ch]' >"$SLUICE_TEST_SCRATCH/files"
fi
n=$(wc -l <"$SLUICE_TEST_SCRATCH/files")
[ "$n" -gt 100 ] || fail "only $n C files found under $SOURCE_DIR"
if ! xargs clang-format --dry-run --Werror <"$SLUICE_TEST_SCRATCH/files" 2>"$SLUICE_TEST_SCRATCH/diff"; then
  head -20 "$SLUICE_TEST_SCRATCH/diff" >&2
  fail "$(grep -c 'warning:' "$SLUICE_TEST_SCRATCH/diff") lines differ from .clang-format (run: git ls-files '*.c' '*.h' | xargs clang-format -i)"
fi
echo "ok: $n C files follow .clang-format"
# The check itself can fail: a misformatted copy of a source is reported.
cd "$SLUICE_TEST_SCRATCH"
cp "$SOURCE_DIR/.clang-format" .
printf 'int  main( void ){return 0;}\n' >bad.c
if clang-format --dry-run --Werror bad.c 2>/dev/null; then fail "a misformatted file passed the check"; fi
echo "ok: a misformatted file is reported"
# Include guards follow the header's path (integration.build_header_guards tests the check).
"$SOURCE_DIR/scripts/check-header-guards.sh" "$SOURCE_DIR" || fail "a header's include guard does not follow its path"
echo "ok: include guards follow the headers' paths"
# No function over 120 lines (integration.build_function_length tests the check).
"$SOURCE_DIR/scripts/check-function-length.sh" "$SOURCE_DIR" || fail "a function is over 120 lines"
echo "ok: no function is over 120 lines"
