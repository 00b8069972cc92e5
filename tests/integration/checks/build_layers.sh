# SPDX-License-Identifier: MIT
# The layer check: today's tree has no loop between the runtime's rooms beyond the listed ones,
# and a copy of the tree given a new one (runtime/mpi including a serve header, while cl/serve
# includes mpi's) fails, naming the loop and the file that closes it.
check=$SOURCE_DIR/scripts/check-layers.sh
"$check" "$SOURCE_DIR" 2>err.txt || fail "the tree has a new loop: $(cat err.txt)"
echo "ok: no new loop between the runtime's rooms"
mkdir tree
cp -r "$SOURCE_DIR/runtime" "$SOURCE_DIR/shim" tree/
victim=$(ls tree/runtime/mpi/*.c | sed -n 1p)
printf '#include "cl/serve/remote_proto.h"\n' >>"$victim"
if "$check" "$PWD/tree" 2>err.txt; then fail "a loop mpi -> serve -> mpi passed the check"; fi
expect_contains "the check names the loop" "mpi -> cl/serve" "$(cat err.txt)"
expect_contains "the check names the file that closes it" "runtime/mpi/$(basename "$victim") includes cl/serve/remote_proto.h" "$(cat err.txt)"
echo "ok: a new loop fails the check: $(head -1 err.txt)"
