# SPDX-License-Identifier: MIT
# What a rank pays per version does not grow with the job (docs/PERFORMANCE.md), counted on real runs of
# 5 and 16 ranks (two steps of a plain-POSIX writer, two-phase path):
#  - plan bytes: the largest commit message a rank other than a home receives (its share of the
#    two-phase plan, not the whole member list at 28 bytes a member) is the same at 5 and 16
#    ranks, from the trace's MSG_RECV records on the commit engine's tag;
#  - stage-folder operations: every process makes the same number of file-system calls on the
#    node's stage folder (it finds a closed copy of a member through the folder's index by
#    path, instead of opening every other process's sidecar), counted with strace.
# bench/commit_scale.sh prints the same counts from 1 to 32 ranks.
app=$SLUICE_APPS_DIR/ckpt_commit_steps
command -v strace > /dev/null || { echo "SKIP: no strace"; exit 77; }
export SLUICE_CB_WRITE=enable SLUICE_STRIPING_UNIT=64K
tag=20928 # SLUICE_TAG_COMMIT (runtime/mpi/tags.def)

# run N: writes 2 steps with N ranks under strace; leaves N.dump (trace) and N.strace.
run() {
  local n=$1
  mkdir -p "$PWD/ck$n" "$PWD/st$n"
  SLUICE_STAGE_DIR=$PWD/st$n SLUICE_CAPTURE="$PWD/ck$n/ckpt.%r" SLUICE_TRACE_DIR=$PWD/tr$n \
    timeout 120 strace -f --seccomp-bpf -qq -e trace=%file,readlink -o "$n.strace" \
    "$MPIEXEC" -n "$n" env LD_PRELOAD="$SLUICE_LIB" "$app" write "$PWD/ck$n" 2 \
    || fail "$n ranks: writer job failed"
  "$SLUICE_BIN_DIR/sluice-ckpt" verify "$PWD/ck$n/ckpt.@r.sluice" > /dev/null || fail "$n ranks: container does not verify"
  "$SLUICE_BIN_DIR/sluice-trace" dump "tr$n" > "$n.dump" || fail "$n ranks: trace unreadable"
}

# The largest commit message a rank other than a home received in the run (how many a rank
# gets depends on how the home's collections fall, not its size).
max_rank_bytes() {
  local homes
  homes=" $(grep ' COMMIT_BEGIN ' "$1.dump" | awk '{print $2}' | sort -u | tr '\n' ' ')"
  awk -v tag="$tag" -v homes="$homes" '$8 == "MSG_RECV" && $0 ~ ("tag=" tag "$") &&
      index(homes, " " $2 " ") == 0 { split($0, a, "bytes="); split(a[2], b, ","); if (b[1] + 0 > m) m = b[1] + 0 }
    END { print m + 0 }' "$1.dump"
}

# Most calls one process made on the stage folder.
max_stage_ops() {
  grep -F "$PWD/st$1" "$1.strace" | awk '{c[$1]++} END {m = 0; for (p in c) if (c[p] > m) m = c[p]; print m}'
}

run 5
run 16
b5=$(max_rank_bytes 5) b16=$(max_rank_bytes 16)
echo "largest commit message to a rank: $b5 bytes at 5 ranks, $b16 at 16 ranks"
[ "$b5" -gt 0 ] || fail "no commit messages recorded at 5 ranks"
# Names gain a digit from rank 10 on: a few bytes, not 28 per member (308 more at 16 ranks).
[ "$b16" -le $(( b5 + 8 )) ] || fail "a rank's plan bytes grow with the job: $b5 at 5 ranks, $b16 at 16"
echo "ok: plan bytes per rank constant in N"

s5=$(max_stage_ops 5) s16=$(max_stage_ops 16)
echo "stage-folder calls by one process: $s5 at 5 ranks, $s16 at 16 ranks"
[ "$s5" -gt 0 ] || fail "no stage-folder calls seen at 5 ranks"
[ "$s16" -le $(( s5 + 2 )) ] || fail "stage-folder calls per process grow with the job: $s5 at 5 ranks, $s16 at 16"
echo "ok: stage-folder calls per process constant in N"
