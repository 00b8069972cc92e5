# SPDX-License-Identifier: MIT
# Slurm on the testbed (testbed.sh up --slurm, docs/CLUSTER_TESTBED.md), sourced by testbed.sh:
# munged and slurmctld in the head (host name `head`, the login and control node), one slurmd
# inside each node (its own host name, address and PID namespace, so its job steps are that
# node's processes), Debian's slurm-wlm and munge (scripts/install-deps.sh). Every daemon ends
# with the testbed: the head's by `down` (every process of its network namespace), each slurmd
# and its steps with its node's PID namespace. Each daemon listens in its own network namespace,
# so Slurm's default ports serve several testbeds at once.

# slurm_up CPUS: the daemons, and every node idle; skips (77) where a tool is missing.
slurm_up() {
  local cpus=$1 s=$dir/slurm i t last
  for t in munged mungekey slurmctld slurmd srun sbatch sinfo; do
    command -v "$t" > /dev/null || PATH=$PATH:/usr/sbin command -v "$t" > /dev/null \
      || { down; skip "--slurm: $t not found (apt-get install slurm-wlm munge; scripts/install-deps.sh)"; }
  done
  mkdir -p "$s/munge" "$s/state" "$s/log"
  chmod 700 "$s/munge"
  PATH=$PATH:/usr/sbin mungekey -c -k "$s/munge/munge.key" -b 1024 2> "$s/log/mungekey.log" || die "--slurm: mungekey failed: $(tail -n 1 "$s/log/mungekey.log")"
  chmod 400 "$s/munge/munge.key"
  # One munged for the cluster (its socket is a file every node sees; a credential made on one
  # node decodes on another because the key is the same, as a cluster's copied key).
  in_head /usr/sbin/munged --force -S "$s/munge/socket" --key-file="$s/munge/munge.key" --pid-file="$s/munge/munged.pid" \
    --log-file="$s/log/munged.log" --seed-file="$s/munge/seed" || die "--slurm: munged did not start: $(tail -n 1 "$s/log/munged.log")"
  {
    echo "ClusterName=testbed"
    echo "SlurmctldHost=head($subnet.254)"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$s/munge/socket"
    echo "MpiDefault=pmi2"
    echo "ProctrackType=proctrack/pgid"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "SchedulerType=sched/builtin"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "SlurmdParameters=config_overrides"
    echo "ReturnToService=2"
    # A node whose slurmd stops answering is DOWN after 10 s (Slurm's default is 300 s).
    echo "SlurmdTimeout=10"
    echo "StateSaveLocation=$s/state"
    echo "SlurmctldPidFile=$s/slurmctld.pid"
    echo "SlurmctldLogFile=$s/log/slurmctld.log"
    # Per node: its own /tmp holds the spool and pid file; the logs are side by side here.
    echo "SlurmdSpoolDir=/tmp/slurmd"
    echo "SlurmdPidFile=/tmp/slurmd.pid"
    echo "SlurmdLogFile=$s/log/slurmd.%n.log"
    for ((i = 0; i < nodes; i++)); do
      echo "NodeName=node$i NodeAddr=$subnet.$((i + 1)) CPUs=$cpus Sockets=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN"
    done
    echo "PartitionName=testbed Nodes=ALL Default=YES MaxTime=60 State=UP OverSubscribe=FORCE:8"
  } > "$s/slurm.conf"
  in_head env SLURM_CONF="$s/slurm.conf" slurmctld -f "$s/slurm.conf" -i > "$s/log/slurmctld.out" 2>&1 \
    || die "--slurm: slurmctld did not start: $(tail -n 1 "$s/log/slurmctld.log" "$s/log/slurmctld.out" 2> /dev/null)"
  for ((i = 0; i < nodes; i++)); do
    # slurmd reads the cgroup hierarchy at start; the node's own /sys has none: the host's
    # mounts under /sys/fs/cgroup (v1, v2 or hybrid) are mounted again there, in order.
    in_node "$i" sh -c "mkdir -p /tmp/slurmd; [ \"\$(stat -f -c %T /sys/fs/cgroup)\" != sysfs ] || {
      $(findmnt -n -r -R -o TARGET,FSTYPE,SOURCE,FS-OPTIONS /sys/fs/cgroup | awk '{printf "mkdir -p %s && mount -t %s -o %s %s %s && ", $1, $2, $4, $3, $1}') :; }" \
      || die "--slurm: cannot mount /sys/fs/cgroup in node$i (slurmd needs it)"
    in_node "$i" env SLURM_CONF="$s/slurm.conf" slurmd -f "$s/slurm.conf" -N "node$i" > "$s/log/slurmd.node$i.out" 2>&1 \
      || die "--slurm: slurmd did not start on node$i: $(tail -n 1 "$s/log/slurmd.node$i.log" "$s/log/slurmd.node$i.out" 2> /dev/null)"
  done
  # Bounded: every node idle within 60 s.
  for ((i = 0; i < 600; i++)); do
    last=$(in_head env SLURM_CONF="$s/slurm.conf" sinfo -h -N -o %T 2> /dev/null | sort -u | tr '\n' ' ')
    [ "$last" != "idle " ] || break
    sleep 0.1
  done
  [ "$last" = "idle " ] || die "--slurm: the nodes are not idle after 60 s (sinfo: ${last:-no answer}; logs in $s/log)"
  echo "$s/slurm.conf" > "$dir/slurm_conf"
}

# slurm_env: SLURM_CONF=... for commands run in the testbed where Slurm is up (srun, sbatch).
slurm_env() { [ ! -r "$dir/slurm_conf" ] || echo "SLURM_CONF=$(cat "$dir/slurm_conf")"; }
