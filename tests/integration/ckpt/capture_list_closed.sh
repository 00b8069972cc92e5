# SPDX-License-Identifier: MIT
# Listings right after the writers closed, before their sets are committed (docs/CAPTURE.md,
# "Names": listings): tests/apps/mpi_list_closed on 2, 3 and 4 ranks lists the folder, a per-rank
# folder of another rank, stats, and tries rmdir of that folder; under sluice it must print what
# it prints on real folders: the other ranks' members, closed and staged by other processes of
# the node, are listed (not only by stat), the other rank's folder is not empty, and none of
# sluice's own files (a container being written, the folder's commit lock) shows. Then a
# shell's child lists what the shell itself closed: `bash -c 'echo x > ckpt.$r; ls -A'`.
export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
app="$SLUICE_APPS_DIR/mpi_list_closed"
for n in 2 3 4; do
  mkdir -p real$n virt$n
  (cd real$n && timeout 60 "$MPIEXEC" -n "$n" "$app" d) >real$n.out
  patterns="$PWD/virt$n/d/ckpt.%r:$PWD/virt$n/d/r%r/out" # $PWD before the cd
  (cd virt$n && run_dist "$n" SLUICE_CAPTURE="$patterns" "$app" d) >virt$n.out
  expect_eq "$n ranks: real folders as expected" "rank 0 lists $n of $n members" "$(grep -m1 '^rank 0 lists' real$n.out)"
  if ! diff real$n.out virt$n.out >diff$n.txt; then
    cat diff$n.txt >&2
    fail "$n ranks: listings differ from real folders (above: < real, > sluice)"
  fi
  expect_eq "$n ranks: captured" "ckpt.@r.sluice r@r@_out.sluice" "$(ls virt$n/d | grep sluice | tr '\n' ' ' | sed 's/ $//')"
  echo "ok: $n ranks: the same $(wc -l <real$n.out) lines as on real folders"
done
mkdir sh
pattern="$PWD/sh/ckpt.%r"
(cd sh && run_dist 2 SLUICE_CAPTURE="$pattern" \
  bash -c 'echo x > ckpt.$PMI_RANK; ls -A | grep -cx "ckpt.$PMI_RANK"') >sh.out
expect_eq "a shell's child lists the shell's closed member, on each rank" "1 1" "$(tr '\n' ' ' <sh.out | sed 's/ $//')"
expect_eq "the shell's members were captured" "ckpt.@r.sluice" "$(ls sh)"
echo "ok: a shell's child lists what the shell closed"
