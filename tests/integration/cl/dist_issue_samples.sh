# SPDX-License-Identifier: MIT
# The sample programs of docs/DISTRIBUTED.md under distributed OpenCL. Four ordinary multi-device OpenCL programs
# (tests/apps/cl_matmul_split.c, cl_nbody.c, cl_stencil2d.c, cl_broadcast.c, the last one also
# with --shared) split their work over every device they see, with non-blocking transfers, events
# and wait lists. Each must print the same result, down to the FNV-1a hash of all its output data,
# whatever runs it:
#   - a single process with 1, 2, 3 and 4 local PoCL devices, no sluice;
#   - the same with sluice's pass-through layer (SLUICE_OPENCL=on), one device;
#   - mpiexec -n 1..4 with SLUICE_OPENCL=distributed and one PoCL device per rank.
# Only the "devices: N" line may differ. stderr stays empty and every exit code is 0. On 2 and 4
# ranks (traced), rank 0's trace shows that kernels ran on N distinct devices: with one device per
# rank, every serving rank computed its share (the servers' own traces do not record the commands
# they serve), and every rank's trace ends with exit status 0.
# --time, the benchmark's flag, only adds the compute time on stderr.
export POCL_MAX_PTHREAD_COUNT=1

devices() { local n=$1 s=""; for ((i = 0; i < n; i++)); do s+="pthread "; done; echo "${s% }"; }

# check LABEL N OUT ERR RC REF: a run on N devices printed REF's result and nothing on stderr.
check() {
  local label=$1 n=$2 out=$3 err=$4 rc=$5 ref=$6
  [ "$rc" == 0 ] || fail "$label: exit code $rc: $(head -5 "$err")"
  [ ! -s "$err" ] || fail "$label: printed on stderr: $(head -5 "$err")"
  expect_eq "$label: device count" "devices: $n" "$(grep '^devices: ' "$out")"
  diff <(grep -v '^devices: ' "$ref") <(grep -v '^devices: ' "$out") >diff.out ||
    fail "$label: output differs from one local device: $(head -20 diff.out)"
  echo "ok: $label prints the result of one local device ($(grep '^hash: ' "$out"))"
}

# Distinct devices that ran the program's kernels, from rank 0's trace: the command ids of
# clEnqueueNDRangeKernel joined with the devices of their CL_DEVICE_EXEC records.
kernel_devices() {
  awk '/^rank 0 / && /CL_ENQUEUE function="clEnqueueNDRangeKernel"/ {
         match($0, /command id=[0-9]+/); kernel[substr($0, RSTART + 11, RLENGTH - 11)] = 1 }
       /^rank 0 / && /CL_DEVICE_EXEC command id=/ {
         match($0, /command id=[0-9]+/); id = substr($0, RSTART + 11, RLENGTH - 11)
         match($0, /device=[0-9]+/); exec_dev[id] = substr($0, RSTART + 7, RLENGTH - 7) }
       END { for (id in exec_dev) if (id in kernel) seen[exec_dev[id]] = 1
             n = 0; for (d in seen) n++; print n }' "$1"
}

samples=("cl_matmul_split" "cl_nbody" "cl_stencil2d" "cl_broadcast" "cl_broadcast --shared")
for sample in "${samples[@]}"; do
  read -r app flags <<<"$sample"
  tag=${sample// /}
  # The reference: one local device, no sluice (--shared computes the same as the default mode).
  ref="$app.ref"
  if [ ! -e "$ref" ]; then
    POCL_DEVICES=pthread rc_of "$SLUICE_APPS_DIR/$app" >"$ref" 2>"$app.ref.err"
    check "$app, 1 local device" 1 "$ref" "$app.ref.err" "$rc" "$ref"
  fi

  for n in 2 3 4 1; do
    [ "$n" != 1 ] || [ -n "$flags" ] || continue # the reference already ran it
    set +e
    # shellcheck disable=SC2086 # flags is a word list
    POCL_DEVICES="$(devices "$n")" "$SLUICE_APPS_DIR/$app" $flags >"$tag.local$n" 2>"$tag.local$n.err"
    rc=$?
    set -e
    check "$sample, $n local devices" "$n" "$tag.local$n" "$tag.local$n.err" "$rc" "$ref"
  done

  set +e
  # shellcheck disable=SC2086
  POCL_DEVICES=pthread SLUICE_OPENCL=on run_sluice "$SLUICE_APPS_DIR/$app" $flags >"$tag.on" 2>"$tag.on.err"
  rc=$?
  set -e
  check "$sample, SLUICE_OPENCL=on" 1 "$tag.on" "$tag.on.err" "$rc" "$ref"

  for n in 1 2 3 4; do
    # Traced on 2 and 4 ranks only: the trace asks for an event of every command, so the untraced
    # runs keep the paths without them covered.
    trace=()
    [ $((n % 2)) == 1 ] || trace=(SLUICE_TRACE_DIR="$PWD/tr.$tag.$n")
    set +e
    # shellcheck disable=SC2086
    POCL_DEVICES=pthread mpirun "$n" env SLUICE_OPENCL=distributed "${trace[@]}" \
      LD_PRELOAD="$SLUICE_LIB" "$SLUICE_APPS_DIR/$app" $flags >"$tag.dist$n" 2>"$tag.dist$n.err"
    rc=$?
    set -e
    check "$sample, $n ranks" "$n" "$tag.dist$n" "$tag.dist$n.err" "$rc" "$ref"
    [ ${#trace[@]} == 1 ] || continue
    "$SLUICE_BIN_DIR/sluice-trace" dump "tr.$tag.$n" >"$tag.dump$n"
    for ((r = 0; r < n; r++)); do
      grep -qE "^rank $r .*PROCESS_EXIT exit status=0" "$tag.dump$n" || fail "$sample, $n ranks: rank $r did not exit 0"
    done
    expect_eq "$sample, $n ranks: devices that ran kernels" "$n" "$(kernel_devices "$tag.dump$n")"
  done
done

hashes=$(cat ./*.ref ./*.local* ./*.on ./*.dist* | grep -c '^hash: ')
expect_eq "runs checked" 45 "$hashes"

# --time (the benchmark's interface) adds one line on stderr and changes nothing on stdout.
for app in cl_matmul_split cl_nbody cl_stencil2d cl_broadcast; do
  POCL_DEVICES=pthread run_dist 2 SLUICE_OPENCL=distributed \
    "$SLUICE_APPS_DIR/$app" --time >"$app.timed" 2>"$app.timed.err"
  diff "$app.dist2" "$app.timed" >diff.out || fail "$app --time changed stdout: $(head -5 diff.out)"
  [[ "$(cat "$app.timed.err")" =~ ^[a-z0-9]+:\ compute\ [0-9.]+\ s\ on\ 2\ devices$ ]] ||
    fail "$app --time: stderr is [$(head -3 "$app.timed.err")]"
  echo "ok: $app --time: $(cat "$app.timed.err")"
done
for app in cl_matmul_split cl_nbody cl_stencil2d cl_broadcast; do
  expect_eq "$app: one hash over all its runs" 1 "$(cat "$app"* | grep '^hash: ' | sort -u | wc -l)"
done
