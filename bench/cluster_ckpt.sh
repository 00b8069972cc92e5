#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The checkpoint benchmark across nodes (docs/PERFORMANCE.md, same title): bench/ckpt_io.sh's cases
# side by side (file per process, sluice, ROMIO automatic and romio_cb_write=enable, the one-stream
# bound) on the testbed (tests/cluster/testbed.sh): --nodes nodes with --ppn ranks each, every link
# shaped at --rate, on two file systems in one run: the shared folder (a host folder every node
# sees: only the ranks' traffic crosses the links) and GlusterFS served by the testbed's storage
# node over its own shaped link (--fs gluster: every create, open, write and fsync crosses the
# network). Time until durable, and with --strace (default on) the file-system creates and opens
# per checkpoint. It prints figures; it never passes or fails on them. Root.
#
#   bench/cluster_ckpt.sh [--build DIR] [--dir DIR] [--nodes N] [--ppn P] [--rate RATE]
#                         [--fs-rate RATE] [--sizes "64M"] [--no-strace] [--only shared|netfs]
#                         [--traces DIR] [--reps N]
# Defaults: 3 nodes, 1 rank per node, links 1gbit, the storage node's link as the others, 64M,
# 1 rep (--reps N: each timed case N times, interleaved, medians). --traces DIR keeps the sluice
# case's traces in DIR/shared and DIR/netfs (for sluice-trace summary, io).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${SLUICE_BUILD:-$here/../build}
nodes=3 ppn=1 rate=1gbit fs_rate="" sizes=64M st=--strace only="" dir="" traces="" reps=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --ppn) ppn=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --fs-rate) fs_rate=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --no-strace) st=""; shift ;;
    --only) only=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --traces) traces=$(mkdir -p "$2" && cd "$2" && pwd); shift 2 ;;
    *) echo "cluster_ckpt.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
testbed=$here/../tests/cluster/testbed.sh
dir=$(realpath -m "${dir:-$build/bench-cluster-ckpt}") # absolute: the runs enter the shared folder first
fs_opts=(--fs gluster ${fs_rate:+--fs-rate "$fs_rate"})
[ "$only" != shared ] || fs_opts=() # no storage node: runs where GlusterFS is not installed
"$testbed" up --dir "$dir" --nodes "$nodes" --rate "$rate" "${fs_opts[@]}"
trap '"$testbed" down --dir "$dir" > /dev/null || true' EXIT
shared=$dir/shared
hosts=$(for ((i = 0; i < nodes; i++)); do printf 'node%d:%d,' "$i" "$ppn"; done)
# The testbed's mpiexec, ranks placed --ppn per node (ckpt_io.sh calls $MPIEXEC -n N ...).
cat > "$dir/bin/mpiexec-ppn" << EOF2
#!/usr/bin/env bash
exec "$dir/bin/mpiexec" -hosts ${hosts%,} "\$@"
EOF2
chmod +x "$dir/bin/mpiexec-ppn"
echo "# checkpoint benchmark on the testbed: $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $nodes nodes x $ppn ranks, links $rate${fs_opts[*]:+; gluster from node storage (link ${fs_rate:-$rate}); brick on $(df -T "$dir" | awk 'NR == 2 {print $2}')}"
for fs in shared netfs; do
  [ -z "$only" ] || [ "$only" = "$fs" ] || continue
  echo
  echo "## file system: $([ $fs = shared ] && echo "the shared folder (host $(df -T "$dir" | awk 'NR == 2 {print $2}'), no network)" || echo "GlusterFS over FUSE from the storage node")"
  (cd "$shared" && "$testbed" run --dir "$dir" env MPIEXEC="$dir/bin/mpiexec-ppn" \
    "$here/ckpt_io.sh" --build "$build" -n $((nodes * ppn)) --dir "$dir/$fs/ckpt" --sizes "$sizes" --work "$shared" --reps "$reps" $st \
    ${traces:+--trace-out "$traces/$fs"})
done
