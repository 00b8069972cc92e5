# SPDX-License-Identifier: MIT
# `bash -c 'echo x > ckpt.$r && rm ckpt.$r'` under capture on 4 ranks, 12 runs in the suite
# (SLUICE_TEST_ROUNDS=30 by hand; docs/MPI.md, "Every process of a rank": it failed in 7 of 30,
# so 12 runs miss that bug 4 times in 100). bash writes the member itself, then execs rm (its last command): MPI must
# not start in the image that execs, and rm takes the member over from its sidecar. Each run
# must end as it does without sluice: exit code 0, nothing on stderr, no file left (neither the
# member nor a container), and nothing left staged.
export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
for i in $(seq 1 "${SLUICE_TEST_ROUNDS:-12}"); do
  rm -rf run && mkdir run
  set +e
  (cd run && RUN_TIMEOUT=60 run_dist 4 SLUICE_CAPTURE='ckpt.%r' \
    bash -c 'r=$PMI_RANK; echo x > ckpt.$r && rm ckpt.$r' >../out 2>../err)
  rc=$?
  set -e
  [ "$rc" == 0 ] || fail "run $i: exit code $rc: $(head -3 err)"
  [ ! -s err ] && [ ! -s out ] || fail "run $i: printed: $(head -3 err out)"
  expect_eq "run $i: no file left" "" "$(ls -A run)"
  expect_eq "run $i: nothing staged" "" "$(find "$SLUICE_STAGE_DIR" -name 'm-*' | head -3)"
done
