# SPDX-License-Identifier: MIT
# An unmodified Fortran MPI program (compiled here with the MPI flavour's mpif90) gives the
# same output with and without sluice under mpiexec -n 3, and sluice sees its MPI_INIT_THREAD
# and MPI_FINALIZE (MPICH: through the C entry points its Fortran bindings call; Open MPI:
# through shim/mpi_fortran.c). MPI_IN_PLACE checks that the Fortran set-up is intact.
fflags=()
fc=mpif90.$MPI_FLAVOUR
if [ "$MPI_FLAVOUR" == openmpi ]; then
  # Debian's mpif90.openmpi names no -L for libmpi itself; with MPICH as the default MPI
  # alternative, -lmpi would then find MPICH's libmpi.so.
  fflags=(-L"$(mpicc.openmpi --showme:libdirs)")
fi
command -v "$fc" >/dev/null || fail "$fc not found (gfortran comes with libmpich-dev)"
cat > ftest.f90 <<'F90'
program ftest
  use mpi
  implicit none
  integer :: ierr, provided, rank, nranks, level, total
  logical :: before, after
  call MPI_INITIALIZED(before, ierr)
  call MPI_INIT_THREAD(MPI_THREAD_FUNNELED, provided, ierr)
  call MPI_INITIALIZED(after, ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  call MPI_QUERY_THREAD(level, ierr)
  total = rank + 1
  call MPI_ALLREDUCE(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    print '(a,l1,a,l1)', 'initialized before ', before, ' after ', after
    print '(a,i0,a,i0)', 'provided ', provided, ' query ', level
    print '(a,i0,a,i0)', 'ranks ', nranks, ' total ', total
  end if
  call MPI_FINALIZE(ierr)
end program
F90
"$fc" -o ftest ftest.f90 "${fflags[@]}"
export SLUICE_PROGRESS_SLEEP_MAX=2000
plain=$(mpirun 3 ./ftest)
with=$(SLUICE_TRACE_DIR=$PWD/tr run_dist 3 ./ftest)
expect_eq "fortran stdout" "$plain" "$with"
expect_contains "fortran MPI_IN_PLACE allreduce" "ranks 3 total 6" "$with"
expect_contains "fortran provided is what it asked" "provided 1 query 1" "$with"
dump=$("$SLUICE_BIN_DIR/sluice-trace" dump tr)
expect_eq "fortran: sluice saw MPI_INIT_THREAD on every rank (MULTIPLE for itself)" 3 \
  "$(grep -c 'MPI_INIT provided thread level=3, world size=3, initialized by sluice=0' <<<"$dump")"
expect_eq "fortran: sluice saw MPI_FINALIZE on every rank" 3 \
  "$(grep -c 'MPI_FINALIZE by sluice=0' <<<"$dump")"
