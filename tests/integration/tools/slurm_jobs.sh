# SPDX-License-Identifier: MIT
# sluice under Slurm on one node: munge, slurmctld and slurmd are started here on localhost with a
# minimal slurm.conf in the scratch folder (MpiDefault=pmi2, Debian's slurm-wlm; installed by
# scripts/install-deps.sh, never at test time), then
#   - a capture job and its restart on another rank count with srun, and the same with sbatch;
#     the container extracts to exactly what the job writes without sluice,
#   - a distributed OpenCL job with srun, printing what one process with as many devices prints;
#   - srun --mpi=none, which sluice stops before main with one line saying how to launch;
#   - a rank that sluice stops before MPI starts, while the others wait in MPI_Init: the step ends.
# Every daemon started here is stopped on exit (trap). Skips (exit 77) only where the daemons
# cannot start: not root, or slurm-wlm/munge missing.
skip() { echo "SKIP: $*"; exit 77; }
for b in /usr/sbin/munged /usr/sbin/mungekey /usr/sbin/slurmctld /usr/sbin/slurmd srun sbatch sinfo; do
  command -v "$b" >/dev/null || skip "$b not found: Slurm needs the Debian packages slurm-wlm and munge (scripts/install-deps.sh)"
done
[ "$(id -u)" -eq 0 ] || skip "slurmd must run as root to start jobs"

d=$PWD
started=()
# alive PID: runs (a zombie left for a reaper that never comes does not count).
alive() { [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* (.*) Z ' "/proc/$1/stat" 2>/dev/null; }
stop_daemons() {
  local pid i
  for pid in "${started[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${started[@]}"; do
    for ((i = 0; i < 100; i++)); do alive "$pid" || break; sleep 0.1; done
    ! alive "$pid" || kill -9 "$pid" 2>/dev/null || true
  done
}
trap stop_daemons EXIT
# daemon PIDFILE: remembers the daemon that just wrote PIDFILE (bounded wait).
daemon() {
  timeout 20 bash -c "until [ -s '$1' ]; do sleep 0.1; done" || return 1
  started+=("$(cat "$1")")
}

mkdir -p munge state spool log
chmod 700 munge
mungekey -c -k munge/munge.key -b 1024
chmod 400 munge/munge.key
/usr/sbin/munged --force -S "$d/munge/socket" --key-file="$d/munge/munge.key" --pid-file="$d/munge/munged.pid" \
  --log-file="$d/munge/munged.log" --seed-file="$d/munge/seed" || skip "munged cannot start: $(tail -n 3 munge/munged.log 2>/dev/null)"
daemon munge/munged.pid || skip "munged wrote no pid file"

# Two free TCP ports for slurmctld and slurmd (other tests may run Slurm at the same time).
read -r port1 port2 < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1", 0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
cat > slurm.conf <<EOF
ClusterName=sluicetest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port1
SlurmdPort=$port2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/socket
MpiDefault=pmi2
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
NodeName=sluice1 NodeAddr=127.0.0.1 NodeHostname=$(hostname) CPUs=8 Sockets=1 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=sluice1 Default=YES MaxTime=10 State=UP OverSubscribe=FORCE:8
EOF
export SLURM_CONF=$d/slurm.conf
/usr/sbin/slurmctld -f "$SLURM_CONF" -i || skip "slurmctld cannot start: $(tail -n 3 log/slurmctld.log 2>/dev/null)"
daemon slurmctld.pid || skip "slurmctld wrote no pid file: $(tail -n 3 log/slurmctld.log 2>/dev/null)"
/usr/sbin/slurmd -f "$SLURM_CONF" -N sluice1 || skip "slurmd cannot start: $(tail -n 3 log/slurmd.log 2>/dev/null)"
daemon slurmd.pid || skip "slurmd wrote no pid file: $(tail -n 3 log/slurmd.log 2>/dev/null)"
# From here on the daemons run: any failure is a failure, not a skip.
timeout 60 bash -c 'until sinfo -h -o %T 2>/dev/null | grep -qx idle; do sleep 0.5; done' ||
  fail "the node never became idle: $(sinfo 2>&1; tail -n 5 log/slurmd.log log/slurmctld.log)"
echo "ok: munged, slurmctld and slurmd up (${#started[@]} daemons, ports $port1 $port2)"

sluice=$SLUICE_BIN_DIR/sluice
app=$SLUICE_APPS_DIR/ckpt_writer
patterns='ckpt.%r:restart_*_%r.dat:chk_*/rank_%r.bin:rank%r/ckpt.dat'

# The reference: the same job without sluice, one file per rank and step.
mkdir plain
(cd plain && timeout 120 srun -n 4 "$app" write 3 >/dev/null)
nplain=$(find plain -type f | wc -l)

# 1. srun: capture with 4 ranks (the README's line, --mpi=pmi2 named), restart with 3.
mkdir via_srun && cd via_srun
timeout 120 srun --mpi=pmi2 -n 4 "$sluice" --capture "$patterns" --stage-dir "$d/.stage-srun" -- "$app" write 3 >write.out
expect_eq "srun capture: every rank wrote" 4 "$(grep -c 'wrote 3 steps' write.out)"
ncont=$(find . -name '*.sluice' | wc -l)
[ "$ncont" -ge 1 ] && [ "$ncont" -lt "$nplain" ] || fail "srun capture: $ncont containers for $nplain plain files"
# Besides containers only the markers of virtual per-rank folders (.NAME.sluice-dir, docs/CAPTURE.md).
left=$(find . -type f ! -name '*.sluice' ! -name '.*.sluice-dir' ! -name write.out)
[ -z "$left" ] || fail "srun capture left per-rank files: $left"
echo "ok: srun capture: $ncont containers instead of $nplain files"
timeout 120 srun -n 3 "$sluice" --capture "$patterns" --stage-dir "$d/.stage-srun" -- "$app" verify 3 4 >verify.out
expect_eq "srun restart on 3 ranks verified" 3 "$(grep -c 'verified' verify.out)"
timeout 60 "$SLUICE_BIN_DIR/sluice-ckpt" verify -r . >/dev/null
timeout 60 "$SLUICE_BIN_DIR/sluice-ckpt" extract -r -o "$d/extracted_srun" . >/dev/null
cd "$d"
diff -r plain extracted_srun >diff.out || fail "srun: extracted files differ from the plain job: $(head diff.out)"
echo "ok: srun: extracted containers == the job's files without sluice"

# 2. sbatch: the same two steps in a batch script, waited for (bounded).
mkdir via_sbatch
cat > via_sbatch/job.sh <<EOF
#!/bin/bash
set -e
srun -n 4 "$sluice" --capture '$patterns' --stage-dir "$d/.stage-sbatch" -- "$app" write 3
srun -n 3 "$sluice" --capture '$patterns' --stage-dir "$d/.stage-sbatch" -- "$app" verify 3 4
EOF
(cd via_sbatch && timeout 180 sbatch --wait -n 4 -o job.out -e job.err job.sh >submit.out) ||
  fail "sbatch job failed: $(cat via_sbatch/job.out via_sbatch/job.err 2>/dev/null | tail -n 20)"
expect_contains "sbatch submitted" "Submitted batch job" "$(cat via_sbatch/submit.out)"
expect_eq "sbatch: every rank wrote" 4 "$(grep -c 'wrote 3 steps' via_sbatch/job.out)"
expect_eq "sbatch: restart on 3 ranks verified" 3 "$(grep -c 'verified' via_sbatch/job.out)"
(cd via_sbatch && rm job.sh job.out job.err submit.out && timeout 60 "$SLUICE_BIN_DIR/sluice-ckpt" extract -r -o "$d/extracted_sbatch" . >/dev/null)
diff -r plain extracted_sbatch >diff.out || fail "sbatch: extracted files differ from the plain job: $(head diff.out)"
echo "ok: sbatch: extracted containers == the job's files without sluice"

# 3. Distributed OpenCL with srun: rank 0 uses the three ranks' devices.
export POCL_MAX_PTHREAD_COUNT=1
POCL_DEVICES="pthread pthread pthread" timeout 120 "$SLUICE_APPS_DIR/cl_multi_device" >cl.local 2>&1
POCL_DEVICES=pthread timeout 180 srun -n 3 "$sluice" --opencl distributed --trace "$d/cl.trace" -- \
  "$SLUICE_APPS_DIR/cl_multi_device" >cl.dist 2>&1 || fail "distributed OpenCL job failed: $(tail cl.dist)"
diff cl.local cl.dist >diff.out || fail "distributed OpenCL under srun differs from 3 local devices: $(head -20 diff.out)"
expect_contains "three devices seen" "devices: 3" "$(cat cl.dist)"
# Ranks, not files: with an empty kernel cache PoCL runs its linker as a child of each rank,
# which leaves a trace of its own (rank-R.pid-P: the same R, another P).
expect_eq "a trace per rank" 3 "$(ls cl.trace | cut -d. -f1 | sort -u | wc -l)"
echo "ok: distributed OpenCL under srun prints what 3 local devices print"

# 4. srun --mpi=none (docs/MPI.md, "Slurm without an MPI plugin"): every task's MPI would be a job of one rank. sluice stops
# each task before main with one line naming --mpi=pmi2; nothing is written, the job fails.
mkdir mpi_none
set +e
(cd mpi_none && timeout 120 srun --mpi=none -n 4 "$sluice" --capture "$patterns" --stage-dir "$d/.stage-none" \
  -- "$app" write 1 >none.out 2>none.err)
rc=$?
set -e
[ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "srun --mpi=none: exit code $rc: $(head -3 mpi_none/none.err)"
expect_eq "srun --mpi=none: one line per task" 4 "$(grep -c 'srun started 4 tasks without an MPI plugin' mpi_none/none.err)"
expect_contains "srun --mpi=none: how to launch" "--mpi=pmi2" "$(cat mpi_none/none.err)"
[ ! -s mpi_none/none.out ] || fail "srun --mpi=none: the program ran: $(head -3 mpi_none/none.out)"
expect_eq "srun --mpi=none: nothing written" "none.err none.out" "$(cd mpi_none && echo *)"
echo "ok: srun --mpi=none stops every task before main with one line"

# 5. A rank that sluice stops before MPI starts (docs/FAULTS.md; docs/FAULTS.md): a bad SLUICE_DEVICES
# that one rank alone sees (set by bash), on rank 0 of 2 and on serving rank 2 of 3, while the
# others wait in MPI_Init. Without -K srun would wait for them for ever; sluice's PMI abort makes
# Slurm end the step: srun's status (137: the others were killed), one sluice line.
for c in "2 0" "3 2"; do
  read -r n bad <<<"$c"
  set +e
  t0=$SECONDS
  POCL_DEVICES=pthread timeout -k 10 60 srun -n "$n" env LD_PRELOAD="$SLUICE_LIB" SLUICE_OPENCL=distributed bash -c \
    'if [ "$SLURM_PROCID" = "$1" ]; then export SLUICE_DEVICES="SELEKT ALL"; fi; exec "$0"' \
    "$SLUICE_APPS_DIR/cl_early_end" "$bad" >early.out 2>early.err
  rc=$?
  set -e
  # (srun's own status is 137 too: the guard's end shows in the time)
  [ "$rc" != 124 ] && [ $((SECONDS - t0)) -lt 60 ] || fail "srun: rank $bad stopped, the step hung: $(head -5 early.err)"
  [ "$rc" != 0 ] || fail "srun: rank $bad stopped, yet the step succeeded"
  expect_eq "srun -n $n, rank $bad stopped: one sluice line" \
    "sluice[$bad]: SLUICE_DEVICES: column 1: expected SELECT at the start of the query, found 'SELEKT'" \
    "$(grep '^sluice' early.err)"
  expect_contains "srun -n $n, rank $bad stopped: Slurm reports its status" "task $bad: Exited with exit code 2" "$(cat early.err)"
  [ ! -s early.out ] || fail "srun: rank $bad stopped, yet the program ran: $(cat early.out)"
  echo "ok: srun -n $n: rank $bad stopped before MPI, the step ended with $rc after $((SECONDS - t0)) s"
done

# The daemons stop with the trap; check that here for the ones started.
stop_daemons
trap - EXIT
for pid in "${started[@]}"; do
  ! alive "$pid" || fail "daemon $pid still runs after stop"
done
echo "slurm_jobs: all passed"
