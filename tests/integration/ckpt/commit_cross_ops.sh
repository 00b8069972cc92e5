# SPDX-License-Identifier: MIT
# Ranks that change each other's members while those members' version commits (programs that
# rotate checkpoints: rank 0 removes the previous step's files, or each rank its neighbour's):
# unlink, rename out of the pattern, truncate, an O_TRUNC rewrite and rmdir of a per-rank folder,
# by rank 0 or by every rank at once, on 2, 3, 4 and 8 ranks. Every member nobody touched, and
# every changed one, is read back byte for byte by a later process; nothing is lost and the
# containers verify. (A member that vanished during its commit once left a header that did not
# match its footer; the next commit then read the version as damaged and removed it with the
# untouched members in it.) CROSS_OPS_RUNS repeats each case (1 here; 50 by hand).
app=$SLUICE_APPS_DIR/mpi_ckpt_cross_ops
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
runs=${CROSS_OPS_RUNS:-1}
ops=${CROSS_OPS:-unlink rename truncate otrunc rmdir}
cases=0
for op in $ops; do
  for who in rank0 neighbour; do
    for n in 2 3 4 8; do
      for i in $(seq 1 "$runs"); do
        d=$PWD/$op-$who-$n-$i
        mkdir -p "$d"
        pattern="$d/ckpt.%r"
        [ "$op" = rmdir ] && pattern="$d/d.%r/ckpt"
        timeout 120 "$MPIEXEC" -n "$n" -env LD_PRELOAD "$SLUICE_LIB" -env SLUICE_CAPTURE "$pattern" \
          "$app" "$d" "$op" "$who" >out.txt 2>err.txt \
          || fail "$op by $who on $n ranks (run $i): the job failed: $(tail -3 err.txt)"
        if grep -q 'sluice' err.txt; then fail "$op by $who on $n ranks (run $i): sluice said: $(grep sluice err.txt | head -2)"; fi
        SLUICE_CAPTURE="$pattern" run_sluice "$app" "$d" "$op" "$who" check "$n" 2>check.txt \
          || fail "$op by $who on $n ranks (run $i): $(head -3 check.txt)"
        for c in $(find "$d" -name '*.sluice'); do
          "$ckpt" verify "$c" >/dev/null 2>verify.txt || fail "$c does not verify: $(head -2 verify.txt)"
        done
        if [ -n "$(find "$d" -name '.*damaged*')" ]; then fail "$op by $who on $n ranks: a version was set aside as damaged"; fi
        rm -rf "$d"
        cases=$((cases + 1))
      done
    done
  done
done
echo "ok: $cases jobs changed other ranks' members while they committed; every member read back whole"
