# SPDX-License-Identifier: MIT
# The doc-path check: every source path README.md and docs/ name exists in today's tree, and a
# copy of the docs naming a file that moved away (runtime/dist/dist_sched.c, the room before
# runtime/cl/rank0) fails, naming the doc and the path.
check=$SOURCE_DIR/scripts/check-doc-paths.sh
"$check" "$SOURCE_DIR" 2>err.txt || fail "the docs name paths that are not in the tree: $(cat err.txt)"
echo "ok: every source path the docs name exists"
mkdir tree
cp -r "$SOURCE_DIR/docs" "$SOURCE_DIR/README.md" tree/
for d in runtime shim tools tests scripts bench; do ln -s "$SOURCE_DIR/$d" "tree/$d"; done
printf '\nThe scheduler lives in `runtime/dist/dist_sched.c`.\n' >>tree/docs/ARCHITECTURE.md
if "$check" "$PWD/tree" 2>err.txt; then fail "a doc naming a moved file passed the check"; fi
expect_contains "the check names the doc and the path" \
  "docs/ARCHITECTURE.md names runtime/dist/dist_sched.c, which is not in the tree" "$(cat err.txt)"
echo "ok: a stale path fails the check: $(head -1 err.txt)"
