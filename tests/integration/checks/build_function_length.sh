# SPDX-License-Identifier: MIT
# The function-length check: no function of today's tree is longer than 120 lines (a few test
# programs excepted by name), and a copy of the tree where one runtime function grew past the
# limit fails, naming the file, the line and the function.
check=$SOURCE_DIR/scripts/check-function-length.sh
"$check" "$SOURCE_DIR" 2>err.txt || fail "a function is over 120 lines: $(cat err.txt)"
echo "ok: no function is over 120 lines"
mkdir tree
cp -r "$SOURCE_DIR/runtime" tree/
# sluice_engine_progress grows by 130 lines of statements.
python3 - tree/runtime/cl/serve/remote_engine.c <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
head = "size_t sluice_engine_progress(struct sluice_remote_done *out, size_t max, int *progress)\n{\n"
assert head in s
s = s.replace(head, head + "    *progress = 0;\n" * 130)
open(p, "w").write(s)
PY
if "$check" "$PWD/tree" 2>err.txt; then fail "a function of 250 lines passed the check"; fi
expect_contains "the check names the file, the function and its length" \
  "runtime/cl/serve/remote_engine.c:" "$(cat err.txt)"
expect_contains "the check names the function" "sluice_engine_progress is" "$(cat err.txt)"
echo "ok: a long function fails the check: $(head -1 err.txt)"
