# SPDX-License-Identifier: MIT
# The header-guard check: every header of today's tree guards the name its path gives, and a copy
# of the tree with a header still guarded by an earlier layout's name fails, naming the header
# and the name it should carry.
check=$SOURCE_DIR/scripts/check-header-guards.sh
"$check" "$SOURCE_DIR" 2>err.txt || fail "a header's guard does not follow its path: $(cat err.txt)"
echo "ok: every header's guard follows its path"
mkdir tree
cp -r "$SOURCE_DIR/runtime" "$SOURCE_DIR/shim" "$SOURCE_DIR/tools" tree/
sed -i 's/SLUICE_CL_RANK0_DAG_H/SLUICE_DCL_DAG_H/' tree/runtime/cl/rank0/dag.h
if "$check" "$PWD/tree" 2>err.txt; then fail "a header guarded by an old layout's name passed the check"; fi
expect_contains "the check names the header and its right guard" \
  "runtime/cl/rank0/dag.h guards SLUICE_DCL_DAG_H, its path gives SLUICE_CL_RANK0_DAG_H" "$(cat err.txt)"
echo "ok: a stale guard fails the check: $(head -1 err.txt)"
