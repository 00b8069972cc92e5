# SPDX-License-Identifier: MIT
# Lazy MPI in programs that are not MPI programs, under real mpiexec: each rank is a shell that
# runs three programs one after another (`mpiexec -n N sh -c 'a; b; c'`). The first does not
# need MPI and must leave it alone; the second needs it (sluice_comm()) and gets sluice's
# communicator over all N ranks, initialized lazily by sluice; the third also asks and must get
# MPI_COMM_NULL (the rank is owned by the second; a second PMI init would break the job). A
# forked child of the second must get MPI_COMM_NULL too, and the second's finalize hook runs at
# exit before sluice finalizes MPI. The programs are the test driver test_roles_rank_child
# (no user-visible sluice feature is faked for this).
child="$SLUICE_BIN_DIR/../tests/test_roles_rank_child"
[ -x "$child" ] || fail "missing $child"
step() { # label step: the command line one rank's shell runs for one program
  echo "ROLES_TEST_LABEL=$1 ROLES_TEST_STEP=$2 '$child' --gtest_filter=RankChild.Step >/dev/null"
}

for n in 3 2; do
  rm -f out.*
  mpirun "$n" sh -c "$(step first none) && $(step second mpi) && $(step third mpi)"
  for r in $(seq 0 $((n - 1))); do
    expect_eq "n=$n rank $r first: launcher rank, MPI untouched" \
      "rank $r size $n launcher 1 mpi untouched 1" "$(cat out.first.$r)"
    expect_eq "n=$n rank $r second: lazily initialized private communicator" \
      "rank $r size $n launcher 1 comm size $n rank $r sum $((n * (n - 1) / 2)) multiple 1 forked child null 1" \
      "$(cat out.second.$r)"
    expect_eq "n=$n rank $r second: finalize hook ran with MPI still up" \
      "hook ran ready 1" "$(cat out.second.$r.hook)"
    expect_eq "n=$n rank $r third: rank already owned, no MPI" \
      "rank $r size $n launcher 1 comm null" "$(cat out.third.$r)"
    [ ! -e out.third.$r.hook ] || fail "n=$n rank $r: third process registered a hook without MPI"
  done
done
