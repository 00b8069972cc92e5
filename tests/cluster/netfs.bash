# SPDX-License-Identifier: MIT
# The testbed's networked file system (testbed.sh up --fs gluster|nfs, docs/CLUSTER_TESTBED.md),
# sourced by testbed.sh: a storage node (its own network, UTS, mount, IPC and PID namespaces,
# host name `storage`, address $subnet.200, a veth to the bridge shaped at --fs-rate) serves one
# volume from a folder of the testbed (DIR/brick); every node mounts it at DIR/netfs over its
# own link, so that creates, opens, writes and fsyncs cross the network as on a cluster's
# parallel file system. gluster: glusterd + one brick (GlusterFS over FUSE, Debian's
# glusterfs-server); the clients are FUSE mounts (mount.glusterfs) inside each node.

netfs_addr=$subnet.200

# netfs_up KIND RATE: the storage node, its server and every node's mount; skips (77) where a
# tool is missing.
netfs_up() {
  local kind=$1 r=$2 i o t
  case $kind in
    gluster) for t in glusterd gluster mount.glusterfs; do command -v "$t" > /dev/null || { down; skip "--fs gluster: $t not found (apt-get install glusterfs-server glusterfs-client)"; }; done ;;
    *) down; usage "--fs $kind: gluster (or none)" ;;
  esac
  [ -e /dev/fuse ] || { down; skip "--fs gluster: no /dev/fuse (FUSE)"; }
  mkdir -p "$dir/brick" "$dir/netfs" "$dir/storage.var"
  hold storage --pid --fork --mount-proc --net --uts --ipc --mount --propagation private -- \
    "hostname storage; mount --bind '$dir/hosts' /etc/hosts; mount -t tmpfs -o mode=1777 tmpfs /tmp;
     mkdir -p '$dir/storage.var/lib' '$dir/storage.var/log' '$dir/storage.var/run';
     mount --bind '$dir/storage.var/lib' /var/lib/glusterd; mount --bind '$dir/storage.var/log' /var/log/glusterfs;
     mount -t tmpfs tmpfs /run; mount -t sysfs sysfs /sys; ip link set lo up"
  in_head ip link add vs type veth peer name eth0 netns "$(pid_of storage)" \
    || { down; skip "the kernel refuses a veth pair (veth module)"; }
  in_head ip link set vs master br0 up
  in_storage ip addr add "$netfs_addr/24" dev eth0
  in_storage ip link set eth0 up
  if [ -n "$r" ]; then # (both directions, as a node's link)
    in_storage tc qdisc replace dev eth0 root tbf rate "$r" burst 256kb latency 100ms || die "tc refused rate $r on the storage node"
    in_head tc qdisc replace dev vs root tbf rate "$r" burst 256kb latency 100ms
  fi
  # glusterd forks into the background; the brick process (glusterfsd) is its child, in the
  # storage node's PID namespace: both end with the node.
  in_storage glusterd -p /run/glusterd.pid > "$dir/storage.log" 2>&1 || die "--fs gluster: glusterd did not start: $(tail -n 1 "$dir/storage.log")"
  for ((i = 0; i < 100; i++)); do in_storage gluster --mode=script pool list > /dev/null 2>&1 && break; sleep 0.1; done
  in_storage gluster --mode=script volume create sv storage:"$dir/brick" force >> "$dir/storage.log" 2>&1 \
    || die "--fs gluster: volume create failed: $(tail -n 1 "$dir/storage.log")"
  # A parallel file system's promise: what one client wrote and closed, another reads (no
  # client-side caching that another client's write would leave stale).
  for o in performance.quick-read performance.io-cache performance.read-ahead performance.stat-prefetch \
    performance.open-behind performance.md-cache-timeout=0; do
    case $o in *=*) ;; *) o="$o=off" ;; esac
    in_storage gluster --mode=script volume set sv "${o%%=*}" "${o#*=}" >> "$dir/storage.log" 2>&1 || true
  done
  in_storage gluster --mode=script volume start sv >> "$dir/storage.log" 2>&1 \
    || die "--fs gluster: volume start failed: $(tail -n 1 "$dir/storage.log")"
  for ((i = 0; i < nodes; i++)); do
    in_node "$i" mount -t glusterfs -o "log-file=$dir/storage.var/log/client.node$i.log" storage:/sv "$dir/netfs" \
      || die "--fs gluster: node$i cannot mount storage:/sv: $(tail -n 2 "$dir/storage.var/log/client.node$i.log" 2> /dev/null)"
  done
  # The head (where mpiexec and the benchmark scripts run: a login node) mounts it too.
  in_head mount -t glusterfs -o "log-file=$dir/storage.var/log/client.head.log" storage:/sv "$dir/netfs" \
    || die "--fs gluster: the head cannot mount storage:/sv"
  in_node 0 chmod 1777 "$dir/netfs"
  echo "gluster" > "$dir/fs"
}

in_storage() { local p; p=$(pid_of storage); [ -n "$p" ] || die "the storage node is gone"; nsenter -t "$p" -m -u -i -n -p --wd=/ "$@"; }
