#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# An emulated cluster on one machine (docs/CLUSTER_TESTBED.md): N nodes, each with its own
# network, UTS (host name), mount (its own tmpfs on /dev/shm and /tmp), IPC, PID and time
# namespaces, a veth to a bridge in a "head" namespace where mpiexec runs, link-local addresses
# that exist only inside these namespaces, optional tbf shaping per node, and a shared folder
# (the parallel file system) seen at the same path by every node.
#
#   testbed.sh up [--nodes N] [--rate RATE] [--rate0 RATE] [--skew SEC] [--finalize-fix auto|on|off]
#                 [--fs gluster] [--fs-rate RATE] [--slurm] [--localflock]
#                 [--dir DIR]
#   testbed.sh run [--dir DIR] CMD...      CMD in the head, with MPIEXEC set (see below)
#   testbed.sh exec [--dir DIR] NODE CMD... CMD inside node NODE (0..N-1 or its host name)
#   testbed.sh shape [--dir DIR] NODE RATE|off   (re)shape a node's link, both directions
#   testbed.sh link [--dir DIR] NODE up|down     cut or restore a node's link
#   testbed.sh crash [--dir DIR] NODE   every process of NODE dies at once (SIGKILL to its PID 1)
#   testbed.sh revive [--dir DIR] NODE  a crashed NODE starts again, empty (fresh /dev/shm and
#                                       /tmp, same address; its link unshaped, its clock unskewed)
#   testbed.sh status [--dir DIR]
#   testbed.sh down [--dir DIR]           ends every process of the testbed, removes DIR
#
# Exit status: 0 ok, 77 the machine cannot host the testbed (not root, namespaces or veth
# refused, a tool missing: one line says which), 2 bad usage, 1 anything else.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
subnet=169.254.77 # link-local, only inside the testbed's namespaces; never routed
max_nodes=8

die() { echo "testbed: $*" >&2; exit 1; }
usage() { echo "testbed: $*; usage: testbed.sh up|run|exec|shape|link|crash|revive|status|down [options] (see the script's header)" >&2; exit 2; }
skip() { echo "testbed: SKIP: $*" >&2; exit 77; }

cmd=${1:-}
[ -n "$cmd" ] || usage "no command"
shift
dir=${TESTBED_DIR:-/var/tmp/sluice-testbed}
nodes=3 rate="" rate0="" skew=0 fix=auto upopts="" fs="" fs_rate="" slurm=0 localflock=0
while [ $# -gt 0 ]; do
  case $1 in
    --dir) [ $# -ge 2 ] || usage "--dir needs a folder"; dir=$2; shift 2 ;;
    --nodes) upopts+=" --nodes"; [ $# -ge 2 ] || usage "--nodes needs a number"; nodes=$2; shift 2 ;;
    --rate) upopts+=" --rate"; [ $# -ge 2 ] || usage "--rate needs a rate (e.g. 1gbit)"; rate=$2; shift 2 ;;
    --rate0) upopts+=" --rate0"; [ $# -ge 2 ] || usage "--rate0 needs a rate (e.g. 1gbit)"; rate0=$2; shift 2 ;;
    --finalize-fix) upopts+=" --finalize-fix"; [ $# -ge 2 ] || usage "--finalize-fix needs auto, on or off"; fix=$2; shift 2 ;;
    --fs) upopts+=" --fs"; [ $# -ge 2 ] || usage "--fs needs a kind (gluster)"; fs=$2; shift 2 ;;
    --fs-rate) upopts+=" --fs-rate"; [ $# -ge 2 ] || usage "--fs-rate needs a rate (e.g. 1gbit)"; fs_rate=$2; shift 2 ;;
    --slurm) upopts+=" --slurm"; slurm=1; shift ;;
    --localflock) upopts+=" --localflock"; localflock=1; shift ;;
    --skew) upopts+=" --skew"; [ $# -ge 2 ] || usage "--skew needs seconds"; skew=$2; shift 2 ;;
    --) shift; break ;;
    -*) usage "unknown option $1" ;;
    *) break ;;
  esac
done
case $cmd in up | run | exec | shape | link | crash | revive | status | down) ;; *) usage "unknown command $cmd" ;; esac
[ "$cmd" = up ] || [ -z "$upopts" ] || usage "--nodes, --rate, --rate0, --skew, --finalize-fix, --fs, --fs-rate, --slurm and --localflock belong to up"
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
case $dir in /tmp | /tmp/* | /dev/shm | /dev/shm/*) usage "--dir $dir: every node has its own /tmp and /dev/shm; pick a folder elsewhere (default /var/tmp/sluice-testbed)" ;; esac

# pid_of NAME: the host pid of the process holding NAME's namespaces, if it still is the one the
# testbed started (pid and start time recorded); nothing otherwise.
pid_of() {
  local f=$dir/$1.pid pid start
  [ -r "$f" ] || return 0
  read -r pid start < "$f"
  [ -r "/proc/$pid/stat" ] || return 0
  # Field 3 is the state: a zombie (Z) waits for a reaper that may never come; it holds nothing.
  [ "$(awk '$3 != "Z" {print $22}' "/proc/$pid/stat" 2>/dev/null)" = "$start" ] && echo "$pid"
  return 0
}
node_count() { cat "$dir/nodes" 2>/dev/null || echo 0; }
# node_index NODE: 0..N-1 from an index or a host name.
node_index() {
  local n=$1
  case $n in node[0-9]*) n=${n#node} ;; esac
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -lt "$(node_count)" ] || die "no node $1 (the testbed has $(node_count): node0..node$(($(node_count) - 1)))"
  echo "$n"
}
need_up() { [ -n "$(pid_of head)" ] || die "no testbed in $dir (testbed.sh up first)"; }
in_head() { nsenter -t "$(pid_of head)" -n -u -m --wd="$PWD" "$@"; }
# shellcheck source=tests/cluster/netfs.bash
source "$here/netfs.bash"
# shellcheck source=tests/cluster/slurm.bash
source "$here/slurm.bash"
in_node() { local p; p=$(pid_of "node$1"); [ -n "$p" ] || die "node$1 is gone"; shift; nsenter -t "$p" -m -u -i -n -p -T --wd=/ "$@"; }

# With --localflock every node sees the shared folder through its own FUSE mount of it (bindfs,
# which keeps flock within the mount): flock is then local to each node, as on NFS without a
# lock manager or Lustre's localflock, while O_EXCL creates and renames reach the one folder.
# bindfs runs in the node's PID namespace and ends with it.
localflock_mount() { [ "$localflock" -eq 0 ] || echo "; bindfs '$dir/shared' '$dir/shared'"; }

# shape_link I RATE: tbf on both ends of node I's veth (its uplink on eth0, its downlink on the
# bridge port), 256 KB bucket (measured at 958 Mbit/s of TCP goodput at 1 Gbit/s); off removes it.
shape_link() {
  local i=$1 r=$2
  if [ "$r" = off ]; then
    in_node "$i" tc qdisc del dev eth0 root 2> /dev/null || true
    in_head tc qdisc del dev "v$i" root 2> /dev/null || true
    return
  fi
  in_node "$i" tc qdisc replace dev eth0 root tbf rate "$r" burst 256kb latency 100ms \
    || die "tc refused rate $r on node$i (tbf; e.g. 1gbit, 100mbit)"
  in_head tc qdisc replace dev "v$i" root tbf rate "$r" burst 256kb latency 100ms
}

down() {
  local i n pid head_net p
  [ -d "$dir" ] || return 0
  # Only a folder the testbed made (its marker) is emptied: --dir names it, never anything else.
  [ -e "$dir/.sluice-testbed" ] || die "$dir is not a testbed folder (no .sluice-testbed in it): nothing removed"
  # Nodes: their PID 1 ends on SIGTERM, and the kernel then kills every process of the node.
  for n in storage $(seq -f 'node%g' 0 $((max_nodes - 1))); do
    pid=$(pid_of "$n")
    [ -z "$pid" ] || kill "$pid" 2> /dev/null || true
  done
  # The head has no PID namespace: end the processes started into its network namespace
  # (mpiexec and its launchers), then its holder.
  pid=$(pid_of head)
  if [ -n "$pid" ]; then
    # One stat for every process (a readlink each took minutes on a loaded machine).
    head_net=$(stat -L -c %i "/proc/$pid/ns/net" 2> /dev/null || true)
    for p in $(stat -L -c '%i %n' /proc/[0-9]*/ns/net 2> /dev/null | awk -v ns="$head_net" '$1 == ns {split($2, f, "/"); print f[3]}'); do
      [ "$p" = "$pid" ] || kill -9 "$p" 2> /dev/null || true
    done
    kill "$pid" 2> /dev/null || true
  fi
  for ((i = 0; i < 50; i++)); do
    [ -n "$(pid_of head)$(pid_of storage)$(for n in $(seq 0 $((max_nodes - 1))); do pid_of "node$n"; done)" ] || break
    sleep 0.1
  done
  for n in head storage $(seq -f 'node%g' 0 $((max_nodes - 1))); do
    pid=$(pid_of "$n")
    [ -z "$pid" ] || kill -9 "$pid" 2> /dev/null || true
  done
  rm -rf "$dir"
}

# hold NAME UNSHARE_OPTIONS... -- SETUP: starts a process holding new namespaces that runs SETUP
# (bash) and then waits for SIGTERM.
hold() {
  local name=$1 opts=() pid child start i
  shift
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  # A node's PID 1 (bash) reaps orphans and ends on SIGTERM; the head has no PID namespace and
  # no children, so a plain sleep holds it (and nothing outlives it).
  local body="set -e; $1; touch '$dir/$name.ready'; exec sleep infinity"
  case " ${opts[*]} " in *" --pid "*) body="set -e; $1; touch '$dir/$name.ready'; trap 'exit 0' TERM; while :; do sleep 3600 & wait \$! || true; done" ;; esac
  setsid unshare "${opts[@]}" bash -c "$body" < /dev/null > "$dir/$name.log" 2>&1 &
  pid=$!
  for ((i = 0; i < 100; i++)); do
    [ ! -e "$dir/$name.ready" ] || break
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.05
  done
  [ -e "$dir/$name.ready" ] || { down; skip "cannot create $name's namespaces (unshare ${opts[*]}): $(tail -n 1 "$dir/$name.log" 2> /dev/null)"; }
  # With --fork the holder is unshare's child (PID 1 of the new PID namespace).
  child=$pid
  if printf '%s\n' "${opts[@]}" | grep -q -- --fork; then
    child=$(cat "/proc/$pid/task/$pid/children" 2> /dev/null | awk '{print $1}')
    [ -n "$child" ] || die "$name: no process in its PID namespace"
  fi
  start=$(awk '{print $22}' "/proc/$child/stat")
  echo "$child $start" > "$dir/$name.pid"
}

# node_up I PRELOAD: node I's namespaces, its veth to the bridge, its address and shaping (at up,
# and again by revive after a crash).
node_up() {
  local i=$1 preload=$2
  rm -f "$dir/node$i.ready"
  mkdir -p "$dir/etc.node$i"
  local time=()
  [ "$skew" -eq 0 ] || time=(--time --monotonic $((i * skew)))
  hold "node$i" --pid --fork --mount-proc --net --uts --ipc --mount --propagation private "${time[@]}" -- \
    "hostname node$i; mount -t tmpfs -o mode=1777,size=50% tmpfs /dev/shm; mount -t tmpfs -o mode=1777 tmpfs /tmp;
     mount -t tmpfs -o size=1m tmpfs '$dir/etc.node$i'; mkdir '$dir/etc.node$i/u' '$dir/etc.node$i/w';
     cp '$dir/hosts' '$dir/etc.node$i/u/hosts'; [ -z '$preload' ] || echo '$preload' > '$dir/etc.node$i/u/ld.so.preload';
     mount -t overlay overlay -o 'lowerdir=/etc,upperdir=$dir/etc.node$i/u,workdir=$dir/etc.node$i/w' /etc;
     mount -t sysfs sysfs /sys; ip link set lo up$(localflock_mount)"
  # A fixed address per node: a revived node's new random one was unknown to the head's ARP
  # cache, which kept sending to the old one (its first job after a revive could not start).
  in_head ip link add "v$i" type veth peer name eth0 address "02:73:6c:63:01:$(printf %02x "$i")" netns "$(pid_of "node$i")" \
    || { down; skip "the kernel refuses a veth pair (veth module)"; }
  in_head ip link set "v$i" master br0 up
  in_node "$i" ip addr add "$subnet.$((i + 1))/24" dev eth0
  in_node "$i" ip link set eth0 up
  if [ -n "$rate0" ] && [ "$i" -eq 0 ]; then shape_link 0 "$rate0"
  elif [ -n "$rate" ]; then shape_link "$i" "$rate"; fi
}

up() {
  local i t
  [[ $nodes =~ ^[0-9]+$ ]] && [ "$nodes" -ge 2 ] && [ "$nodes" -le $max_nodes ] || usage "--nodes $nodes: 2 to $max_nodes"
  [[ $skew =~ ^[0-9]+$ ]] || usage "--skew $skew: whole seconds"
  [ "$(id -u)" -eq 0 ] || skip "the testbed needs root (namespaces, veth, tc); CI runs as root"
  for t in unshare nsenter ip setsid mpiexec; do
    command -v "$t" > /dev/null || skip "$t not found (util-linux, iproute2, mpich)"
  done
  [ -z "$rate$rate0" ] || command -v tc > /dev/null || skip "tc not found (iproute2): shaping needs it"
  [ "$localflock" -eq 0 ] || command -v bindfs > /dev/null || skip "--localflock: bindfs not found (apt-get install bindfs)"
  if [ -d "$dir" ] && [ ! -e "$dir/.sluice-testbed" ] && [ -n "$(ls -A "$dir")" ]; then
    usage "--dir $dir: a folder with other files in it; the testbed needs its own (it removes it at down)"
  fi
  [ ! -d "$dir" ] || [ ! -e "$dir/.sluice-testbed" ] || down
  mkdir -p "$dir/shared" "$dir/bin"
  touch "$dir/.sluice-testbed"
  echo "$nodes" > "$dir/nodes"
  {
    echo "127.0.0.1 localhost"
    echo "$subnet.254 head"
    for ((i = 0; i < nodes; i++)); do echo "$subnet.$((i + 1)) node$i"; done
    echo "$netfs_addr storage"
  } > "$dir/hosts"
  # MPICH 4.0.x's finalize over UCX/TCP (finalize_barrier.c, docs/CLUSTER_TESTBED.md): every
  # node preloads the fix through its own /etc (an overlay: the host's /etc stays untouched).
  case $fix in
    auto) fix=off; mpichversion 2> /dev/null | grep -q 'Version:[[:space:]]*4\.0\.' && fix=on ;;
    on | off) ;;
    *) usage "--finalize-fix $fix: auto, on or off" ;;
  esac
  local preload=""
  if [ "$fix" = on ]; then
    mkdir -p "$dir/lib"
    cc -shared -fPIC -O2 -o "$dir/lib/finalize_barrier.so" "$here/finalize_barrier.c" -ldl 2> "$dir/lib/cc.log" \
      || die "cannot build the finalize fix (cc): $(head -n 1 "$dir/lib/cc.log"); --finalize-fix off runs without it"
    preload=$dir/lib/finalize_barrier.so
  fi
  # The bridge's own address is set: a bridge otherwise takes the lowest of its ports', and a
  # crashed or revived node's port changed it under the nodes' ARP caches (their traffic to the
  # head was dropped for about a minute: Open MPI's mpirun waited that long after a crash).
  hold head --net --uts --mount --propagation private -- \
    "hostname head; mount --bind '$dir/hosts' /etc/hosts; ip link set lo up;
     ip link add br0 address 02:73:6c:63:00:fe type bridge; ip addr add $subnet.254/24 dev br0; ip link set br0 up"
  for ((i = 0; i < nodes; i++)); do node_up "$i" "$preload"; done
  [ -z "$fs" ] || netfs_up "$fs" "${fs_rate:-$rate}"
  [ "$slurm" -eq 0 ] || slurm_up 8
  # mpiexec for the head: hydra's ssh launcher replaced by one that enters a node's namespaces.
  local hosts
  hosts=$(seq -f 'node%g' -s, 0 $((nodes - 1)))
  cat > "$dir/bin/mpiexec" << EOF
#!/usr/bin/env bash
# mpiexec on testbed $dir: ranks go to its nodes (round robin over $hosts unless -hosts, -f or
# -hostfile is given). Written by testbed.sh up.
case \$PWD in /tmp|/tmp/*|/dev/shm|/dev/shm/*) echo "mpiexec (testbed): run from a folder every node sees (not /tmp or /dev/shm; the shared one is $dir/shared)" >&2; exit 2 ;; esac
hosts=(-hosts $hosts)
for a in "\$@"; do case \$a in -hosts|-host|-f|-hostfile|-machinefile) hosts=() ;; esac; done
export TESTBED_DIR='$dir'
exec $(command -v mpiexec) -launcher ssh -launcher-exec '$here/launch_node.sh' "\${hosts[@]}" "\$@"
EOF
  chmod +x "$dir/bin/mpiexec"
  # Open MPI's mpirun, where it is installed (by hand: docs/CLUSTER_TESTBED.md, "Open MPI"): its
  # daemons start through the same launcher; no tree spawn (a node cannot enter another node's
  # namespaces); ranks one per node in turn unless --host, -H, --hostfile or --map-by is given.
  if command -v mpirun.openmpi > /dev/null; then
    cat > "$dir/bin/mpirun" << EOF
#!/usr/bin/env bash
# Open MPI's mpirun on testbed $dir. Written by testbed.sh up.
case \$PWD in /tmp|/tmp/*|/dev/shm|/dev/shm/*) echo "mpirun (testbed): run from a folder every node sees (not /tmp or /dev/shm; the shared one is $dir/shared)" >&2; exit 2 ;; esac
place=(--host $(seq -f 'node%g:64' -s, 0 $((nodes - 1))) --map-by node)
for a in "\$@"; do case \$a in --host|-H|-host|--hostfile|-hostfile|--machinefile|--map-by) place=() ;; esac; done
export TESTBED_DIR='$dir' OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
exec $(command -v mpirun.openmpi) --mca plm_rsh_agent '$here/launch_node.sh' --mca plm_rsh_no_tree_spawn 1 "\${place[@]}" "\$@"
EOF
    chmod +x "$dir/bin/mpirun"
  fi
  echo "testbed: $nodes nodes up in $dir (shared folder $dir/shared${rate:+, links $rate}${rate0:+, node0 $rate0}$([ "$skew" -eq 0 ] || echo ", CLOCK_MONOTONIC of node i ahead by i x ${skew} s")$([ "$fix" = off ] || echo ", MPICH finalize fix preloaded")$([ "$slurm" -eq 0 ] || echo ", Slurm (slurmctld on head, slurmd on every node)")$([ "$localflock" -eq 0 ] || echo ", flock local to each node")$([ -z "$fs" ] || echo ", $fs file system from node storage mounted at $dir/netfs on every node${fs_rate:+ (its link $fs_rate)}"))"
}

case $cmd in
  up) up ;;
  down) down ;;
  run)
    need_up
    [ $# -gt 0 ] || usage "run needs a command"
    in_head env TESTBED_DIR="$dir" MPIEXEC="$dir/bin/mpiexec" PATH="$dir/bin:$PATH" $(slurm_env) "$@"
    ;;
  exec)
    need_up
    [ $# -ge 2 ] || usage "exec needs a node and a command"
    i=$(node_index "$1"); shift
    wd=$PWD
    p=$(pid_of "node$i")
    nsenter -t "$p" -m -u -i -n -p -T --wd="$wd" env TESTBED_DIR="$dir" $(slurm_env) "$@"
    ;;
  shape)
    need_up
    [ $# -eq 2 ] || usage "shape needs a node and a rate (or off)"
    shape_link "$(node_index "$1")" "$2"
    ;;
  link)
    need_up
    [ $# -eq 2 ] && { [ "$2" = up ] || [ "$2" = down ]; } || usage "link needs a node and up or down"
    in_node "$(node_index "$1")" ip link set eth0 "$2"
    ;;
  crash)
    need_up
    [ $# -eq 1 ] || usage "crash needs a node"
    p=$(pid_of "node$(node_index "$1")")
    [ -z "$p" ] || kill -9 "$p"
    ;;
  revive)
    need_up
    [ $# -eq 1 ] || usage "revive needs a node"
    i=$(node_index "$1")
    [ -z "$(pid_of "node$i")" ] || die "node$i is up: crash it first"
    in_head ip link del "v$i" 2> /dev/null || true # its namespace may still be going away
    node_up "$i" "$([ ! -e "$dir/lib/finalize_barrier.so" ] || echo "$dir/lib/finalize_barrier.so")"
    ;;
  status)
    need_up
    echo "testbed in $dir: $(node_count) nodes, shared folder $dir/shared"
    for ((i = 0; i < $(node_count); i++)); do
      echo "node$i: pid $(pid_of "node$i"), $(in_node "$i" ip -4 -br addr show eth0 | awk '{print $2, $3}'), $(in_node "$i" tc qdisc show dev eth0 | head -1)"
    done
    ;;
esac
