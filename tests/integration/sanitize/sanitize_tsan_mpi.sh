# SPDX-License-Identifier: MIT
# ThreadSanitizer over sluice's threads under real mpiexec, with odd and even rank counts (the
# TSan job of scripts/sanitize.sh; skipped in other builds): the two-phase commit with its
# aggregators' write-behind thread (several rounds per aggregator, the trace on, the restart read
# back with another rank count), a global array's index encoded on the home's index lane, and distributed OpenCL through the scheduler of rank 0 and the
# serving ranks (copies and fills between ranks' devices, work split over every rank's device,
# user events failing commands on serving ranks while other events of their wait lists run,
# transfers failed by their wait list, then only a remote device: callbacks coming back from it,
# four host threads at once). Any report fails the test; so does wrong output.
source "$SOURCE_DIR/tests/integration/sanitize/tsan_lib.bash"
app=$SLUICE_APPS_DIR/ckpt_sized
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE SLUICE_CB_WRITE=enable SLUICE_CB_BUFFER_SIZE=256K SLUICE_STRIPING_UNIT=64K
sizes="1000001 733333 1150000"
for n in 2 3; do
  d=$PWD/tp$n
  mkdir "$d"
  SLUICE_CB_NODES=$n SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_TRACE_DIR=$PWD/tp$n.trace \
    tsan_clean "two-phase write, $n ranks" "$n" "$app" write "$d" $sizes
  expect_eq "$n ranks: one container" "ckpt.@r.sluice" "$(ls -A "$d")"
  "$SLUICE_BIN_DIR/sluice-ckpt" verify "$d/ckpt.@r.sluice" >/dev/null || fail "$n ranks: the container does not verify"
  # Rounds were written by a thread that received none: the write-behind thread.
  "$SLUICE_BIN_DIR/sluice-trace" dump "tp$n.trace" >tp$n.dump
  recv=$(grep ' COMMIT_SHUFFLE_RECV ' tp$n.dump | awk '{print $4 "." $6}' | sort -u)
  behind=$(grep ' COMMIT_FS_WRITE .*full-stripe=1' tp$n.dump | awk '{print $4 "." $6}' | sort -u | grep -vxF "$recv" | wc -l)
  [ "$behind" -ge 1 ] || fail "$n ranks: no round written by a write-behind thread"
  echo "ok: $n ranks: rounds written by $behind write-behind thread(s)"
  m=$((5 - n))
  SLUICE_CAPTURE="$d/ckpt.%r" tsan_clean "restart of the $n-rank set, $m ranks" "$m" "$app" verify "$d" "$n" $sizes
done

# A global array's index encoded on the home's index lane while the rows move, checksums filled
# in at the end (commit_index.c): 3 ranks, traced.
d=$PWD/arr
mkdir "$d"
SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_LAYOUT="$d/ckpt.%r:header=64,dtype=f8,shape=20x18x16,grid=auto" \
  SLUICE_TRACE_DIR=$PWD/arr.trace tsan_clean "global array write, 3 ranks" 3 "$SLUICE_APPS_DIR/mpi_ckpt_array" \
  write "$d" 20 18 16 64
"$SLUICE_BIN_DIR/sluice-ckpt" verify "$d/ckpt.@r.sluice" >/dev/null || fail "global array: the container does not verify"
expect_contains "global array: its index encoded ahead" "encoded ahead=1" "$("$SLUICE_BIN_DIR/sluice-trace" dump arr.trace)"
SLUICE_CAPTURE="$d/ckpt.%r" tsan_clean "global array restart, 2 ranks" 2 "$SLUICE_APPS_DIR/mpi_ckpt_array" read "$d" 20 18 16 64

export SLUICE_OPENCL=distributed
tsan_clean "cl_dist_copy_fill, 3 ranks" 3 "$SLUICE_APPS_DIR/cl_dist_copy_fill"
expect_contains "cl_dist_copy_fill: copies and fills right" "wrong=0" "$(cat "cl_dist_copy_fill, 3 ranks.out")"
tsan_clean "cl_multi_device, 3 ranks" 3 "$SLUICE_APPS_DIR/cl_multi_device"
expect_contains "cl_multi_device: three devices" "devices: 3" "$(cat "cl_multi_device, 3 ranks.out")"
expect_contains "cl_multi_device: work split right" "wrong=0" "$(cat "cl_multi_device, 3 ranks.out")"
# Its fourth check: a command failed while another event of its wait list runs, whose event the
# serving rank must keep until that one finished (PoCL's worker locks it then). "untimed": its
# two checks that depend on the machine's load only print their figures.
tsan_clean "cl_dist_async, 3 ranks" 3 "$SLUICE_APPS_DIR/cl_dist_async" untimed
expect_eq "cl_dist_async: every check passed" 7 "$(grep -c ': ok$' "cl_dist_async, 3 ranks.out")"
# Transfers failed by their wait list: pieces settled without data, moves behind failed uses
# (their shields set by the engine's loop), reads that leave rank 0's memory alone.
tsan_clean "cl_failed_transfers, 3 ranks" 3 "$SLUICE_APPS_DIR/cl_failed_transfers"
expect_eq "cl_failed_transfers: every case as on local devices" 94 \
  "$(grep -c -E 'memory untouched, then (a healthy round trip|every device.s data)$' "cl_failed_transfers, 3 ranks.out")"
# Only rank 1's device: every call goes to the serving rank, callbacks come back from it.
export SLUICE_DEVICES="SELECT ALL WHERE node = 1"
tsan_clean "cl_events_callbacks, 2 ranks" 2 "$SLUICE_APPS_DIR/cl_events_callbacks"
expect_contains "cl_events_callbacks: event callback" "event callback: 1 status=0" "$(cat "cl_events_callbacks, 2 ranks.out")"
expect_contains "cl_events_callbacks: destructor callbacks" "context destructor callback: 1" "$(cat "cl_events_callbacks, 2 ranks.out")"
tsan_clean "cl_threads, 2 ranks" 2 "$SLUICE_APPS_DIR/cl_threads"
expect_contains "cl_threads: four threads, right values" "threads=4 rounds=60 wrong=0" "$(cat "cl_threads, 2 ranks.out")"
