# SPDX-License-Identifier: MIT
# The TSan job's test of itself: a real race in sluice's own code fails it. The TSan build also
# makes racecheck/libsluice_racecheck.so, libsluice whose I/O thread hands a written round back
# to the two-phase executor with a plain store instead of a release atomic
# (tests/tsan_racy_copy.cmake). The same checkpoint run as sanitize_tsan_mpi, with the same
# options and suppressions, must then fail, a rank ending with TSan's exit status (66), and the
# report must name the two sluice functions that race.
source "$SOURCE_DIR/tests/integration/sanitize/tsan_lib.bash"
racy=$SLUICE_BIN_DIR/../racecheck/libsluice_racecheck.so
[ -f "$racy" ] || fail "$racy is missing (build the sluice_racecheck target of the TSan build)"
d=$PWD/tp
mkdir "$d"
SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE SLUICE_CB_WRITE=enable SLUICE_CB_NODES=2 SLUICE_CB_BUFFER_SIZE=256K \
  SLUICE_STRIPING_UNIT=64K SLUICE_CAPTURE="$d/ckpt.%r" \
  rc_of tsan_run racy "$racy" 2 "$SLUICE_APPS_DIR/ckpt_sized" write "$d" 1000001 733333
[ "$rc" -ne 0 ] || fail "the run with the racy library exited 0"
expect_contains "a rank ended with TSan's exit status" " 66 " " $(cat racy.status.* | tr '\n' ' ') "
report=$(grep -A40 'WARNING: ThreadSanitizer: data race' racy.err) || fail "no data race reported: $(head -20 racy.err)"
expect_contains "the report names the I/O thread's store" "io_main" "$report"
expect_contains "the report names the progress thread's load" "aggregator_poll" "$report"
echo "ok: the race fails the job: $(grep -m1 'SUMMARY: ThreadSanitizer' racy.err)"
