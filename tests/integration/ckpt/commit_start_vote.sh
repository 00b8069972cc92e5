# SPDX-License-Identifier: MIT
# Processes that capture nothing never start MPI (docs/COMMIT.md, "Which processes use
# MPI"): with SLUICE_CAPTURE set, a job step whose ranks write no checkpoint (a shell, `true`)
# ends without any rank starting MPI, an MPI program that captures nothing skips the final commit
# protocol at MPI_Finalize, and a job where only one rank writes, late, still commits
# its member with every rank taking part. The evidence is each process's own trace: MPI_INIT
# events (initialized by sluice) counted with `sluice-trace dump` (bash: dash's `exit` is _exit,
# which writes no trace; a dash job is run for its exit status). Odd and even rank counts.
# Hydra only: the vote uses a shared file where every rank runs on one node (node_vote.h) and
# its PMI-1 key-value space otherwise (elsewhere every rank starts MPI as before). Each case runs
# both ways: "node" as launched here, "launcher" with MPI_LOCALNRANKS unset, as on several nodes.
if [ "$MPI_FLAVOUR" = openmpi ]; then
  echo "skipped: the start vote is MPICH hydra's (PMI-1)"
  exit 77
fi
trace=$SLUICE_BIN_DIR/sluice-trace
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
mpi_inits() { "$trace" dump "$1" | grep -c ' MPI_INIT ' || true; }

for via in node launcher; do
unset_local=()
[ "$via" = launcher ] && unset_local=(-u MPI_LOCALNRANKS)
for n in 3 2; do
  # Nothing captured: no rank's process starts MPI; the job ends as without sluice.
  # The vote costs mpiexec one PMI get, not one per rank: rank 0 reads the vote's key and puts the
  # tally, which the other ranks read from their proxy (a key nobody put is asked of mpiexec at
  # every get: N in a row at one process before). Counted with strace on mpiexec (the first
  # process of the trace), where there is strace. Each rank's vote is 4 writes on its PMI socket
  # (sluice's own sendto calls; hydra's go through write): the greeting (init, get_maxes,
  # get_my_kvsname) and the first barrier_in in one, the second barrier_in (rank 0: with its put of
  # the tally), one get (rank 0: of the key, the others: of the tally) and finalize; 7 at every
  # rank and 8 at rank 0 before, one request each.
  # On one node the ranks vote in a shared file: no PMI request at all, as a plain process.
  d=$PWD/none$n-$via
  mkdir -p "$d"
  wrap=()
  command -v strace > /dev/null && wrap=(strace -f -qq -s 200 -e trace=read,sendto -o "$d/strace")
  out=$(timeout 60 "${wrap[@]}" "$MPIEXEC" -n "$n" env "${unset_local[@]}" LD_PRELOAD="$SLUICE_LIB" SLUICE_CAPTURE="$d/ck.%r" \
    SLUICE_TRACE_DIR="$d/trace" bash -c 'echo "rank $PMI_RANK"; exit 3') && rc=0 || rc=$?
  gets=1 writes=$((4 * n)) greets=$n
  [ "$via" = node ] && gets=0 writes=0 greets=0
  [ ${#wrap[@]} -eq 0 ] || expect_eq "$n ranks, $via, nothing captured: PMI gets mpiexec answered" "$gets" \
    "$(awk 'NR == 1 {p = $1} $1 == p && /cmd=get / {c++} END {print c + 0}' "$d/strace")"
  [ ${#wrap[@]} -eq 0 ] || expect_eq "$n ranks, $via, nothing captured: sluice's PMI writes" "$writes" \
    "$(grep -c 'sendto([0-9]*, "cmd=' "$d/strace" || true)"
  [ ${#wrap[@]} -eq 0 ] || expect_eq "$n ranks, $via, nothing captured: greetings in one write with the barrier" "$greets" \
    "$(grep -c 'sendto([0-9]*, "cmd=init .*cmd=get_maxes\\ncmd=get_my_kvsname\\ncmd=barrier_in\\n"' "$d/strace" || true)"
  expect_eq "$n ranks, $via, nothing captured: exit status as the program's" "3" "$rc"
  expect_eq "$n ranks, $via, nothing captured: output" "$n" "$(printf '%s\n' "$out" | grep -c '^rank ')"
  expect_eq "$n ranks, $via, nothing captured: trace files" "$n" "$(ls "$d/trace" | wc -l)"
  expect_eq "$n ranks, $via, nothing captured: processes that started MPI" "0" "$(mpi_inits "$d/trace")"
  expect_eq "$n ranks, $via, nothing captured: nothing written" "" "$(ls -A "$d" | grep -v '^trace$\|^strace$' || true)"
  timeout 60 "$MPIEXEC" -n "$n" env "${unset_local[@]}" LD_PRELOAD="$SLUICE_LIB" SLUICE_CAPTURE="$d/ck.%r" dash -c 'exit 0' ||
    fail "$n ranks, $via, nothing captured, dash: the job failed or hung (rc $?)"

  # An MPI program that captures nothing: at MPI_Finalize the ranks find over the launcher (the
  # exit vote, asleep in PMI's barrier) that no rank has anything to commit, and make no MPI
  # collective at all (the notice counts' MPI_Reduce_scatter_block before: a collective that
  # spins on oversubscribed cores); no rank runs the final commit protocol (its second
  # collective and hand-offs to the progress thread: MPI_Finalize 1.5-1.7x plain before), so
  # none records the exit flush's COMMIT_END (the mixed job below does). The collectives are
  # counted by apps/plugins/finalize_collectives.c, preloaded before sluice.
  # Each rank's process greets the launcher (PMI's init, get_maxes, get_my_kvsname, in one write)
  # once, at the start vote; the exit vote reuses the answers (twice before). Requests that need
  # no answer before the next share a write (a put and the barrier_in after it), and a rank that
  # votes yes reads no tally: 6 writes per rank, 5 at rank 0 (10 and 12 before, one request each).
  # sluice's PMI requests are its own sendto calls (MPICH's go through write), counted with strace
  # on every rank at 3 ranks (strace costs each job about 1 s), where there is strace.
  d=$PWD/mpi$n-$via
  mkdir -p "$d/coll" "$d/pmi"
  wrap=()
  [ "$n" = 3 ] && command -v strace > /dev/null && wrap=(strace -ff -qq -e trace=sendto -s 200 -o "$d/pmi/st")
  timeout 60 "$MPIEXEC" -n "$n" "${wrap[@]}" env "${unset_local[@]}" LD_PRELOAD="$SLUICE_APPS_DIR/libfinalize_collectives.so $SLUICE_LIB" \
    FINALIZE_COLLECTIVES_DIR="$d/coll" SLUICE_CAPTURE="$d/ck.%r" \
    SLUICE_TRACE_DIR="$d/trace" "$SLUICE_APPS_DIR/mpi_trace_hello" > /dev/null \
    || fail "$n ranks, $via, MPI program, nothing captured: the job failed or hung"
  if [ ${#wrap[@]} -gt 0 ]; then
    for req in init get_maxes get_my_kvsname barrier_in; do
      want=$n
      [ "$req" = barrier_in ] && want=$((4 * n)) # two at the start vote, two at the exit vote
      [ "$via" = node ] && want=0                # both votes in the shared file
      expect_eq "$n ranks, $via, MPI program, nothing captured: sluice's PMI $req requests" "$want" \
        "$(cat "$d/pmi"/st.* | grep '^sendto(' | grep -o "cmd=$req[ \\]" | wc -l)"
    done
    want=$((6 * n - 1))
    [ "$via" = node ] && want=0
    expect_eq "$n ranks, $via, MPI program, nothing captured: sluice's PMI writes" "$want" \
      "$(cat "$d/pmi"/st.* | grep -c '^sendto([0-9]*, "cmd=' || true)"
  fi
  expect_eq "$n ranks, $via, MPI program, nothing captured: final commit protocols at exit" "0" \
    "$("$trace" dump "$d/trace" | grep -c 'COMMIT_END set="(exit: all sets)"' || true)"
  expect_eq "$n ranks, $via, MPI program, nothing captured: ranks that reported their collectives" "$n" \
    "$(ls "$d/coll" | wc -l)"
  expect_eq "$n ranks, $via, MPI program, nothing captured: MPI collectives during MPI_Finalize" "" \
    "$(cat "$d/coll"/* | grep -v '^none$' || true)"

  # Mixed: only the last rank writes, after the others have reached their exit. It still
  # commits, and every rank started MPI for it (its MPI_Init is collective).
  d=$PWD/mixed$n-$via
  mkdir -p "$d"
  last=$((n - 1))
  timeout 60 "$MPIEXEC" -n "$n" env "${unset_local[@]}" LD_PRELOAD="$SLUICE_LIB" SLUICE_CAPTURE="$d/ck.%r" \
    SLUICE_TRACE_DIR="$d/trace" bash -c \
    'if [ "$PMI_RANK" = '"$last"' ]; then sleep 1; echo "late $PMI_RANK" > '"$d"'/ck.$PMI_RANK; fi' \
    || fail "$n ranks, $via, one late writer: the job failed or hung"
  [ ! -e "$d/ck.$last" ] || fail "$n ranks, $via, one late writer: a plain file was left"
  expect_eq "$n ranks, $via, one late writer: members" "1" "$("$ckpt" ls "$d" | grep -c "$d/ck\.$last")"
  expect_eq "$n ranks, $via, one late writer: content" "late $last" "$(SLUICE_CAPTURE="$d/ck.%r" run_sluice cat "$d/ck.$last")"
  expect_eq "$n ranks, $via, one late writer: processes that started MPI" "$n" "$(mpi_inits "$d/trace")"
  expect_eq "$n ranks, $via, one late writer: final commit protocols at exit" "$n" \
    "$("$trace" dump "$d/trace" | grep -c 'COMMIT_END set="(exit: all sets)"' || true)"
  expect_eq "$n ranks, $via, one late writer: stage empty" "" "$(ls -A "$SLUICE_STAGE_DIR")"
done
done

# The vote pages of jobs killed during a vote (their last rank never came) are removed by the next
# job's first voter; a live job's page and other files stay. The host id is the claims folder's.
votes=/dev/shm/sluice-$(id -u).votes
host=$(ls -t "${TMPDIR:-/tmp}/sluice-$(id -u)/claims" | sed -n 's/^hydra@[0-9]*-[0-9]*-//p' | head -1)
[ -n "$host" ] || fail "no claims folder of a hydra job to take the host id from"
live="start-hydra@$$-$(awk '{print $22}' /proc/$$/stat)-$host"
dead="exit-hydra@999999999-12345-$host"
touch "$votes/$live" "$votes/$dead" "$votes/notes"
timeout 60 "$MPIEXEC" -n 2 env LD_PRELOAD="$SLUICE_LIB" SLUICE_CAPTURE="$PWD/sweep/ck.%r" true ||
  fail "sweep job: failed or hung"
[ ! -e "$votes/$dead" ] || fail "a dead job's vote page was left"
[ -e "$votes/$live" ] || fail "a live job's vote page was removed"
[ -e "$votes/notes" ] || fail "a file that is no vote page was removed"
rm -f "$votes/$live" "$votes/notes"
