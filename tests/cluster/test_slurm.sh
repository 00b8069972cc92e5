# SPDX-License-Identifier: MIT
# Slurm across nodes (testbed.sh up --slurm, docs/CLUSTER_TESTBED.md): slurmctld in the head, a
# slurmd inside each of 3 nodes. A capture launched by `srun -N3 --ntasks-per-node=2 --mpi=pmi2`
# (6 ranks, two on each node, staged in each node's own /dev/shm) is read back byte for byte by
# `srun -N2` on two other nodes with 3 and 4 ranks; an `sbatch -N3` script captures 5 ranks (odd)
# with srun and a restart with `srun -N2 -n4` reads them. Then `down` leaves none of the
# daemons; with SLUICE_TEST_ROUNDS=2 or more (by hand), a second `up --slurm` in the same
# folder runs a job again.
source "$SOURCE_DIR/tests/cluster/lib.bash"
rounds=${SLUICE_TEST_ROUNDS:-1}
export -n SLUICE_TEST_ROUNDS # the test's, not sluice's: the ranks would warn about it
t0=$SECONDS
tb_up 3 --slurm
echo "ok: up --slurm took $((SECONDS - t0)) s"
app=$SLUICE_APPS_DIR/ckpt_sized
sizes="200001 65536 150000 77777 262147 100003"
tb_srun() { (cd "$SHARED" && timeout 120 "$TESTBED" run --dir "$TB_DIR" srun "$@"); }

# The daemons of this testbed, by host pid: munged and slurmctld in the head, a slurmd per node.
daemons() {
  local p comm
  for p in /proc/[0-9]*; do
    comm=$(cat "$p/comm" 2> /dev/null) || continue
    case $comm in munged | slurmctld | slurmd | slurmstepd)
      ! grep -q -- "$TB_DIR/" "$p/cmdline" 2> /dev/null || echo "${p#/proc/} $comm" ;;
    esac
  done
}
expect_eq "daemons: munged, slurmctld and 3 slurmd" "munged slurmctld slurmd slurmd slurmd" \
  "$(daemons | awk '{print $2}' | sort | tr '\n' ' ' | sed 's/ $//')"

# 1. srun -N3, 2 ranks per node: every rank on its node, members staged there, one container.
d=$SHARED/srun
mkdir -p "$d"
tb_srun -N3 --ntasks-per-node=2 --mpi=pmi2 env LD_PRELOAD="$SLUICE_LIB" SLUICE_CAPTURE="$d/ckpt.%r" \
  sh -c 'hostname > "$0/host.$SLURM_PROCID"; exec "$1" write "$0" $2' "$d" "$app" "$sizes" > srun.out 2>&1 \
  || fail "srun -N3 capture: $(tail -5 srun.out)"
expect_eq "srun -N3 --ntasks-per-node=2: ranks' hosts" "node0 node0 node1 node1 node2 node2" \
  "$(for r in 0 1 2 3 4 5; do cat "$d/host.$r"; done | tr '\n' ' ' | sed 's/ $//')"
expect_eq "srun -N3: one container" "ckpt.@r.sluice" "$(ls "$d" | grep -v '^host\.' | tr '\n' ' ' | sed 's/ $//')"
"$SLUICE_BIN_DIR/sluice-ckpt" verify "$d/ckpt.@r.sluice" > /dev/null || fail "srun -N3: the container does not verify"
# restart LABEL DIR NMEMBERS SRUN_ARGS...: srun reads every member back byte for byte.
restart() {
  local label=$1 dir=$2 n=$3
  shift 3
  tb_srun "$@" env LD_PRELOAD="$SLUICE_LIB" SLUICE_CAPTURE="$dir/ckpt.%r" "$app" verify "$dir" "$n" $sizes > "verify.out" 2>&1 \
    || fail "$label: $(head -5 verify.out)"
  echo "ok: $label read all $n members byte for byte"
}
restart "srun -N2 -n3 -w node1,node2" "$d" 6 -N2 -n3 -w node1,node2
restart "srun -N2 -n4 -w node0,node2" "$d" 6 -N2 -n4 -w node0,node2

# 2. sbatch -N3: a batch script whose srun captures 5 ranks (odd: 2, 2 and 1 per node).
b=$SHARED/sbatch
mkdir -p "$b"
cat > "$b/job.sh" << EOF
#!/bin/sh
srun -n5 env LD_PRELOAD='$SLUICE_LIB' SLUICE_CAPTURE='$b/ckpt.%r' sh -c 'hostname > "$b/host.\$SLURM_PROCID"; exec "\$0" write "\$1" \$2' '$app' '$b' '$sizes'
EOF
(cd "$b" && timeout 120 "$TESTBED" run --dir "$TB_DIR" sbatch --wait -N3 -n5 -o job.out job.sh > submit.out 2>&1) \
  || fail "sbatch -N3: $(cat "$b/submit.out" "$b/job.out" 2> /dev/null | tail -5)"
expect_contains "sbatch submitted" "Submitted batch job" "$(cat "$b/submit.out")"
[ ! -s "$b/job.out" ] || fail "sbatch -N3: the job printed: $(head -5 "$b/job.out")"
expect_eq "sbatch -N3 -n5: ranks on 3 nodes" "node0 node1 node2" "$(cat "$b"/host.* | sort -u | tr '\n' ' ' | sed 's/ $//')"
expect_eq "sbatch -N3 -n5: 5 ranks" 5 "$(ls "$b" | grep -c '^host\.')"
"$SLUICE_BIN_DIR/sluice-ckpt" verify "$b/ckpt.@r.sluice" > /dev/null || fail "sbatch -N3: the container does not verify"
restart "srun -N2 -n4 after sbatch -N3 -n5" "$b" 5 -N2 -n4 -w node1,node2

# 3. down ends every daemon; up --slurm again in the same folder works.
before=$(daemons | awk '{print $1}')
"$TESTBED" down --dir "$TB_DIR" || fail "down failed"
for p in $before; do
  [ ! -e "/proc/$p" ] || ! grep -q -- "$TB_DIR/" "/proc/$p/cmdline" 2> /dev/null || fail "daemon $p ($(cat "/proc/$p/comm")) outlived down"
done
expect_eq "no daemon of the testbed after down" "" "$(daemons)"
echo "ok: down ended $(echo $before | wc -w) daemons"
[ "$rounds" -ge 2 ] || exit 0
"$TESTBED" up --dir "$TB_DIR" --nodes 3 --slurm > up2.out 2>&1 || fail "second up --slurm: $(tail -3 up2.out)"
mkdir -p "$SHARED"
expect_eq "second testbed: srun -N3 on every node" "node0 node1 node2" "$(tb_srun -N3 hostname | sort | tr '\n' ' ' | sed 's/ $//')"
