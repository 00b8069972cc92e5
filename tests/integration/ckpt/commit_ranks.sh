# SPDX-License-Identifier: MIT
# Checkpoint commit under real mpiexec: an unmodified POSIX program writes per-rank files of
# uneven sizes (0 B, 1 B, 4 KiB, a few MiB, non-round) over three steps with 1, 2, 3, 4 and 8
# ranks; each job leaves exactly one verified container, an empty stage folder, and a job with
# another rank count reads every byte back through the per-rank names. A second variant
# fsyncs every member (fsync returns only once the member is in a durable container).
# Every case takes the direct path (no shuffle: the node's aggregator copies the members); the last one lets the
# two-phase writer decide (SLUICE_CB_WRITE=auto), to check both behind the same engine.
app=$SLUICE_APPS_DIR/ckpt_commit_steps
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
export SLUICE_CB_WRITE=disable

run_case() { # run_case NAME RANKS READERS [writer options]
  local name=$1 n=$2 readers=$3
  shift 3
  local d=$PWD/$name
  mkdir -p "$d"
  export SLUICE_CAPTURE="$d/ckpt.%r"
  run_dist "$n" "$app" write "$d" 3 "$@" \
    || fail "$name: writer job failed"
  local files
  files=$(cd "$d" && ls -A | grep -v '^\.bar\.' | tr '\n' ' ')
  expect_eq "$name: one container and nothing else" "ckpt.@r.sluice " "$files"
  "$ckpt" verify "$d/ckpt.@r.sluice" > verify.out || fail "$name: sluice-ckpt verify: $(cat verify.out)"
  expect_eq "$name: members in the container" "$n" "$("$ckpt" ls "$d" | grep -c "$d/ckpt\.[0-9]")"
  expect_eq "$name: stage folder empty after exit" "" "$(ls -A "$SLUICE_STAGE_DIR" 2>/dev/null)"
  run_dist "$readers" "$app" verify "$d" 3 "$n" \
    || fail "$name: reading with $readers ranks found wrong bytes"
  echo "ok: $name: $readers reader ranks read back every byte of $n members"
}

run_case n1 1 2
run_case n2 2 3
run_case n3 3 2
run_case n4 4 1
run_case n8 8 3
run_case n3_fsync 3 4 --fsync
run_case n4_fsync 4 4 --fsync
SLUICE_CB_WRITE=auto run_case n5_auto 5 2

# The reads really come from the container: without sluice the per-rank names do not exist.
[ ! -e "$PWD/n4/ckpt.0" ] || fail "per-rank file exists on disk"
# And extracting it gives the same bytes as reading through sluice.
"$ckpt" extract -o "$PWD/extracted" "$PWD/n4/ckpt.@r.sluice" > /dev/null
SLUICE_CAPTURE= "$app" verify "$PWD/extracted" 3 4 || fail "extracted files differ"
echo "ok: extract reproduces the members"
