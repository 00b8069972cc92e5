# SPDX-License-Identifier: MIT
# Per-rank folders whose files another rank deletes (the shape of md-workbench, docs/CAPTURE.md
# "Names"): tests/apps/mpi_vdir_unlink, 2 rounds of 4 files per rank, on 2, 3 and 4 ranks, prints
# what every listing, stat, unlink, rmdir and mkdir returned; under sluice
# (SLUICE_CAPTURE='d/%r_*/file-*', the folders virtual) it must print what it prints on real
# folders: a listing agrees with stat once another rank removed a file, the emptied folder is
# removed, the top folder then too (nothing left behind: no marker, no container), and the
# next round's mkdir of the same names works.
export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
app="$SLUICE_APPS_DIR/mpi_vdir_unlink"
for n in 2 3 4; do
  mkdir -p real$n virt$n
  (cd real$n && timeout 60 "$MPIEXEC" -n "$n" "$app" d 4 2) >real$n.out
  pattern="$PWD/virt$n/d/%r_*/file-*" # $PWD before the cd
  (cd virt$n && run_dist "$n" SLUICE_CAPTURE="$pattern" \
    "$app" d 4 2) >virt$n.out
  grep -q "rmdir top: ok" real$n.out || fail "$n ranks: the run on real folders did not end as expected"
  if ! diff real$n.out virt$n.out >diff$n.txt; then
    cat diff$n.txt >&2
    fail "$n ranks: virtual folders differ from real ones (above: < real, > sluice)"
  fi
  expect_eq "$n ranks: nothing left behind" "" "$(ls -A virt$n)"
  # The same pattern does capture: a per-rank folder is a marker, not a folder.
  (cd virt$n && mkdir d && run_sluice SLUICE_CAPTURE="$pattern" mkdir d/1_0)
  expect_eq "$n ranks: the folders were virtual" ".1_0.sluice-dir" "$(ls -A virt$n/d)"
  rm -r virt$n/d
  echo "ok: $n ranks: the same $(wc -l <real$n.out) lines as on real folders"
done
