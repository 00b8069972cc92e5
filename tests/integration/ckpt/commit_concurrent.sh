# SPDX-License-Identifier: MIT
# Processes that commit the same set on their own, at the same time (no MPI between them:
# here twelve independent programs, as when a rank's later programs cannot use MPI): each
# version is read, extended and renamed under the folder lock, so no member is lost.
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
mkdir -p ref out
export SLUICE_CAPTURE="$PWD/out/ckpt.%r"
for i in $(seq 0 11); do
  head -c $(( (i + 1) * 65536 + i )) /dev/urandom > "ref/ckpt.$i"
done
pids=()
for i in $(seq 0 11); do
  env LD_PRELOAD="$SLUICE_LIB" cp "ref/ckpt.$i" "out/ckpt.$i" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a writer failed"; done
"$ckpt" verify out/ckpt.@r.sluice > /dev/null || fail "container does not verify"
expect_eq "every member committed" 12 "$("$ckpt" ls out | grep -c "$PWD/out/ckpt\.[0-9]")"
for i in $(seq 0 11); do
  run_sluice cmp "out/ckpt.$i" "ref/ckpt.$i" || fail "member $i differs"
done
echo "ok: every member reads back"
expect_eq "nothing left staged" "" "$(ls -A "$SLUICE_STAGE_DIR")"
