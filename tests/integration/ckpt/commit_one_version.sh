# SPDX-License-Identifier: MIT
# A step that every rank writes and closes once is exactly one version. An MPI program writes,
# per rank and step, a stdio checkpoint (one set per step), a state file rewritten in place with
# pwrite around a hole, and an O_APPEND log, with ranks out of step inside the step (rank r
# starts r * 60 ms late), over two steps, on 2, 3 and 4 ranks, with two aggregators
# (SLUICE_CB_NODES=2) and 64 KiB stripes (SLUICE_STRIPING_UNIT, so that these small sets span
# many stripes). Checked with `sluice-ckpt ls` (versions), the trace (one COMMIT_BEGIN per set
# and step, every member in it, version 1 holding step 1 of every rank), strace of every process (bytes written to containers,
# which processes wrote them) and a restart with another rank count that reads every byte:
#   - container bytes / program bytes <= 1.05 (trace and strace agree);
#   - processes writing container data (more than 64 KiB: the header and index are the home's)
#     <= SLUICE_CB_NODES per container;
#   - bytes in whole stripes >= 95 % and no stripe of a set of one stripe or more written in
#     pieces by two processes (strace, tests/integration/ckpt/stripe_writers.py).
app=$SLUICE_APPS_DIR/mpi_ckpt_multifile
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE SLUICE_CB_NODES=2 SLUICE_STRIPING_UNIT=64K
for n in 2 3 4; do
  d=$PWD/n$n
  mkdir -p "$d"
  export SLUICE_CAPTURE="$d/s*/ckpt.%r:$d/state.%r:$d/log.%r" SLUICE_TRACE_DIR=$PWD/trace$n
  timeout 120 strace -f -qq -e signal=none -e trace=write,pwrite64,pwritev,pwritev2,copy_file_range -y \
    -o "strace$n.txt" "$MPIEXEC" -n "$n" env LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 2 --stagger 60 \
    > "write$n.out" || fail "n$n: writer job failed"
  bytes=$(sed -n 's/^bytes //p' "write$n.out")
  "$ckpt" ls -r "$d" > "ls$n.txt" || fail "n$n: sluice-ckpt ls failed"
  for set in s1/ckpt s2/ckpt state log; do
    want=2
    case $set in s[0-9]*) want=1 ;; esac
    got=$(grep -F "set $d/$set.%r " "ls$n.txt" | sed 's/.* version \([0-9]*\) .*/\1/')
    expect_eq "n$n: $set.%r is at version $want" "$want" "$got"
    expect_eq "n$n: $set.%r has $n members" "$n" "$(grep -F "set $d/$set.%r " "ls$n.txt" | sed 's/.* members \([0-9]*\) .*/\1/')"
  done
  "$SLUICE_BIN_DIR/sluice-trace" dump "trace$n" > "dump$n.txt" || fail "n$n: sluice-trace dump failed"
  begins=$(grep -c 'COMMIT_BEGIN' "dump$n.txt" || true)
  expect_eq "n$n: commits in the trace (one per set and step)" 6 "$begins"
  expect_eq "n$n: every commit holds all $n members" 6 \
    "$(grep 'COMMIT_BEGIN' "dump$n.txt" | grep -c "members=$n\b" || true)"
  # No version mixes steps: the state file grows by 5 bytes a step, so its version 1 holds
  # 765870 + 3 r + 5 bytes for every rank r (COMMIT_MEMBER events follow their COMMIT_BEGIN).
  mixed=$(awk -v n="$n" '/COMMIT_BEGIN set=".*\/state\.%r", version=1,/ { take = n; next }
      take > 0 && /COMMIT_MEMBER/ { take--; match($0, /member rank=[0-9]+/); r = substr($0, RSTART + 12, RLENGTH - 12)
        match($0, /bytes=[0-9]+/); b = substr($0, RSTART + 6, RLENGTH - 6)
        if (b != 765870 + 3 * r + 5) bad++ } END { print bad + 0 }' "dump$n.txt")
  expect_eq "n$n: version 1 of the state set holds step 1 of every rank" 0 "$mixed"
  # Container bytes from the trace: every COMMIT_FS_WRITE; aligned ones carry 1 in the last field.
  read -r traced aligned < <(awk '/COMMIT_FS_WRITE/ {
      match($0, /bytes=[0-9]+/); b = substr($0, RSTART + 6, RLENGTH - 6); t += b
      if ($0 ~ /aligned[^=]*=1/) a += b } END { printf "%d %d\n", t, a }' "dump$n.txt")
  # The same from strace: bytes returned by writes to temporary container files, per process
  # (a call that another thread interrupted is split into "<unfinished ...>" and "resumed").
  awk 'function add(pid, file, n) { per[pid " " file] += n; all += n }
    / <unfinished \.\.\.>$/ { if (match($0, /<[^>]*\.sluice\.tmp\.[0-9]+>/)) {
        file = substr($0, RSTART, RLENGTH); sub(/\.tmp\.[0-9]+>$/, "", file); open_[$1] = file }
      next }
    /<\.\.\. [a-z0-9_]+ resumed>/ { if (($1 in open_) && $NF ~ /^[0-9]+$/) add($1, open_[$1], $NF)
      delete open_[$1]; next }
    /\.sluice\.tmp\.[0-9]+>/ && / = [0-9]+$/ { match($0, /<[^>]*\.sluice\.tmp\.[0-9]+>/)
      file = substr($0, RSTART, RLENGTH); sub(/\.tmp\.[0-9]+>$/, "", file); add($1, file, $NF) }
    END { for (k in per) print k, per[k]; print "total", all + 0 }' "strace$n.txt" > "writers$n.txt"
  straced=$(sed -n 's/^total //p' "writers$n.txt")
  echo "n$n: program wrote $bytes bytes; containers got $traced (trace), $straced (strace), aligned $aligned"
  [ -n "$bytes" ] && [ "$bytes" -gt 0 ] || fail "n$n: the program did not report its bytes"
  [ "$straced" -eq "$traced" ] || fail "n$n: trace ($traced) and strace ($straced) disagree"
  [ $((traced * 100)) -le $((bytes * 105)) ] || fail "n$n: container bytes / program bytes > 1.05"
  echo "ok: n$n: container bytes / program bytes = $(awk -v a="$traced" -v b="$bytes" 'BEGIN{printf "%.3f", a/b}')"
  python3 "$SOURCE_DIR/tests/integration/ckpt/stripe_writers.py" "strace$n.txt" 65536 >"stripes$n.txt" ||
    fail "n$n: stripe_writers.py failed"
  read -r _ sbytes swhole sshared < <(grep '^total' "stripes$n.txt")
  expect_eq "n$n: stripes written in pieces by two processes (sets of a stripe or more)" 0 "$sshared"
  [ $((swhole * 100)) -ge $((sbytes * 95)) ] || fail "n$n: bytes in whole stripes under 95 % (strace: $(cat "stripes$n.txt"))"
  echo "ok: n$n: bytes in whole stripes $(awk -v a="$swhole" -v b="$sbytes" 'BEGIN{printf "%.1f", 100*a/b}') % (strace; full-stripe calls in the trace: $(awk -v a="$aligned" -v b="$traced" 'BEGIN{printf "%.1f", 100*a/b}') %, holes split requests)"
  most=$(awk '$1 != "total" && $3 > 65536 { w[$2]++ } END { m = 0; for (k in w) if (w[k] > m) m = w[k]; print m }' "writers$n.txt")
  [ "$most" -le 2 ] || fail "n$n: $most processes wrote data into one container (SLUICE_CB_NODES=2)"
  echo "ok: n$n: at most $most data writers per container"
  timeout 120 "$MPIEXEC" -n $((n == 4 ? 3 : n + 1)) env LD_PRELOAD="$SLUICE_LIB" "$app" verify "$d" 2 "$n" \
    || fail "n$n: the restart read wrong bytes"
  echo "ok: n$n: a restart with another rank count read every byte"
done
