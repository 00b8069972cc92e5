# SPDX-License-Identifier: MIT
# What a rank pays per version does not grow with the job (docs/PERFORMANCE.md), counted on real runs of
# 5 and 16 ranks (two steps of a plain-POSIX writer, two-phase path):
#  - plan bytes: the largest commit message a rank other than a home receives (its share of the
#    two-phase plan, not the whole member list at 28 bytes a member) is the same at 5 and 16
#    ranks for ranks whose members are alike (the program's sizes repeat every 4 ranks: rank % 4;
#    rank 0's alone is empty),
#    from the trace's MSG_RECV records on the commit engine's tag. Rounds are pinned at 1 MiB
#    (SLUICE_CB_BUFFER_SIZE): by default they grow with the data (at least 4 per domain), so a
#    3 MiB member is 4 pieces at 5 ranks and 1 or 2 at 16;
#  - stage-folder operations: every process makes the same number of file-system calls on the
#    node's stage folder (it finds a closed copy of a member through the folder's index by
#    path, instead of opening every other process's sidecar), counted with strace.
# bench/commit_scale.sh prints the same counts from 1 to 32 ranks.
app=$SLUICE_APPS_DIR/ckpt_commit_steps
command -v strace > /dev/null || { echo "SKIP: no strace"; exit 77; }
export SLUICE_CB_WRITE=enable SLUICE_STRIPING_UNIT=64K SLUICE_CB_BUFFER_SIZE=1M
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

# "CLASS BYTES" per member class (rank % 4): the largest commit message a rank of that class
# other than a home received in the run (how many a rank gets depends on how the home's
# collections fall, not its size). Rank 0 is left out: its member alone is empty (no share).
max_rank_bytes() {
  local homes
  homes=" $(grep ' COMMIT_BEGIN ' "$1.dump" | awk '{print $2}' | sort -u | tr '\n' ' ')"
  awk -v tag="$tag" -v homes="$homes" '$8 == "MSG_RECV" && $0 ~ ("tag=" tag "$") &&
      index(homes, " " $2 " ") == 0 && $2 != 0 { split($0, a, "bytes="); split(a[2], b, ","); c = $2 % 4
        if (b[1] + 0 > m[c]) m[c] = b[1] + 0 }
    END { for (c in m) print c, m[c] }' "$1.dump" | sort -n
}

# Most calls one process made on the stage folder.
max_stage_ops() {
  grep -F "$PWD/st$1" "$1.strace" | awk '{c[$1]++} END {m = 0; for (p in c) if (c[p] > m) m = c[p]; print m}'
}

run 5
run 16
max_rank_bytes 5 > b5.txt
max_rank_bytes 16 > b16.txt
echo "largest commit message to a rank, by rank % 4: $(tr '\n' ' ' < b5.txt)at 5 ranks; $(tr '\n' ' ' < b16.txt)at 16 ranks"
[ -s b5.txt ] || fail "no commit messages recorded at 5 ranks"
# Names gain a digit from rank 10 on: a few bytes; a member placed at another offset may cross
# one more round boundary: one piece (48 bytes); not 28 per member (308 more at 16 ranks).
compared=0
while read -r c b5; do
  b16=$(awk -v c="$c" '$1 == c {print $2}' b16.txt)
  [ -n "$b16" ] || continue
  compared=$((compared + 1))
  [ "$b16" -le $(( b5 + 8 + 48 )) ] || fail "a rank's plan bytes grow with the job (ranks of class $c): $b5 at 5 ranks, $b16 at 16"
done < b5.txt
[ "$compared" -ge 2 ] || fail "fewer than 2 member classes seen at both 5 and 16 ranks: $(cat b5.txt b16.txt)"
echo "ok: plan bytes per rank constant in N"

s5=$(max_stage_ops 5) s16=$(max_stage_ops 16)
echo "stage-folder calls by one process: $s5 at 5 ranks, $s16 at 16 ranks"
[ "$s5" -gt 0 ] || fail "no stage-folder calls seen at 5 ranks"
[ "$s16" -le $(( s5 + 2 )) ] || fail "stage-folder calls per process grow with the job: $s5 at 5 ranks, $s16 at 16"
echo "ok: stage-folder calls per process constant in N"
