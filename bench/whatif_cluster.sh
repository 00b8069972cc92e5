#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Validates `sluice-trace whatif`'s container model on the multi-node testbed (docs/TRACE.md, What
# if; docs/CLUSTER_TESTBED.md): per link rate, a testbed of 4 nodes whose links and storage node
# are shaped at that rate, checkpoints on its GlusterFS (every byte and metadata operation crosses
# the links). A calibration step measures the model's inputs once per testbed, never per point:
#   I  link goodput: 16 MiB over TCP from node0 to node1 (python3 sockets)
#   B  file-system bandwidth: dd of 32 MiB to the GlusterFS from each of the 4 nodes at once,
#      conv=fdatasync: all bytes / the slowest dd's time (what the storage takes from many clients)
#   F  client bandwidth: the same dd from node0 alone (one node's client, one stream)
#   M  aggregation bandwidth and P commit pass: 2 ranks on node0 checkpointing 8 MiB members (one
#      round) to its /tmp (tmpfs: no file-system cost): read from the trace (bench/whatif_gather.py),
#      M the bytes gathered by message over the time from the first send to the last receive, P
#      the bytes then written over the time from the last receive to the last write (median of 3)
#   P_d the direct path's pass: 1 rank on node0 checkpointing 8 MiB to its /tmp: the bytes written
#      over the span of its writes (each chunk read from the stage through a buffer)
#   E  gathering from another node through MPI: 1 rank on node0 and 1 on node1, one aggregator
#      (SLUICE_CB_NODES=1), 8 MiB members to the GlusterFS: the bytes node0's aggregator received
#      from node1 over the time from the first send to the end of that receive
#   L  metadata latency: a 1-rank sluice checkpoint of 1 byte on the GlusterFS, until durable / m_c,
#      and right after it (the same minute's load)
#   H, c the commit's messages: 1-byte checkpoints of 2 ranks on 2 nodes and of 8 ranks on 4 nodes,
#      until durable - m_c L = H + c N (two sizes: c the slope, never below 0, H the rest)
# Every run, calibration and point, has bench/whatif_cpu.py beside it: the CPU share S the threads
# doing its commit got in the commit's window (time on a CPU / time they wanted one, from their
# schedstat; `sluice-trace whatif --window` gives the window and the threads; TRACE.wcpu). The
# CPU-bound inputs are calibrated at a whole CPU (P, M, P_d and E: each run's rate / its S; H, c
# and L: each run's time x its S, L because a GlusterFS metadata operation is its threads'
# scheduling; medians of 3) and each point's model gets its own run's S (`whatif --cpu-share S
# --md-latency L/S`): the load of the minute a point ran is measured, not assumed to be the
# calibration's. The raw figures and shares stay in --keep's calibration-RATE.raw.
# Then each point (nodes x ranks per node, member size, placement) runs --reps times: the time
# until durable measured by the trace, the model's estimate for it (`whatif --ranks N` with T = C
# = 1, B, F, P, L, M, I and R = ranks per node, --cpu-share S), their ratio, the load average and
# S; then per point the run of the median ratio. Every trace and the calibration stay in --keep (default
# BUILD/bench-whatif-cluster-traces), so the model can be rerun on them. Root. Figures only; it
# never passes or fails on them.
#
#   bench/whatif_cluster.sh [--build DIR] [--dir DIR] [--keep DIR] [--rates "100mbit 200mbit"] [--sizes "2M 8M"]
#                           [--points "2x1 2x2 2x4 3x2 4x1 4x2 4x4 2x2rr 4x2rr"] [--reps 2]
#   bench/whatif_cluster.sh --rerun [--keep DIR] [--rates ...]   the model again on kept runs, no testbed
# A point NxR places R ranks on each of N nodes, in blocks (rank r on node r / R); NxRrr places
# them round robin (rank r on node r % N: most shuffled bytes cross the links).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../build dir="" keep="" rerun="" rates="100mbit 200mbit" sizes="2M 8M" reps=2
points="2x1 2x2 2x4 3x2 4x1 4x2 4x4 2x2rr 4x2rr"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --rerun) rerun=1; shift ;;
    --rates) rates=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --points) points=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    *) echo "whatif_cluster.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
build=$(cd "$build" && pwd)
# Absolute: the runs enter the testbed's shared folder first (a relative --dir named a testbed
# inside it, which was never brought up).
dir=$(realpath -m "${dir:-$build/bench-whatif-cluster}")
keep=$(realpath -m "${keep:-$build/bench-whatif-cluster-traces}") # outlives the testbed: the model can be rerun on them
mkdir -p "$keep"
testbed=$here/../tests/cluster/testbed.sh
trace=$build/bin/sluice-trace app=$build/tests/apps/ckpt_sized lib=$build/lib/libsluice.so
bytes() { numfmt --from=iec "$1"; }
load() { cut -d' ' -f1 /proc/loadavg; }
in_tb() { (cd "$dir/shared" && "$testbed" run --dir "$dir" "$@"); }
# ckpt NAME FOLDER HOSTS N SIZE [VAR=VALUE...]: one two-phase checkpoint of N ranks placed by
# HOSTS (hydra -hosts) into FOLDER (as the nodes see it), traced into the shared folder, with the
# variables given; prints the trace.
ckpt() {
  local t=$dir/shared/trace-$1 cpu rc=0
  rm -rf "$t" "$t.cpu" "$t.wcpu" "$t.samples"
  "$testbed" exec --dir "$dir" node0 sh -c "rm -rf '$2' && mkdir -p '$2'" # node0 sees it as every node does
  python3 "$here/whatif_cpu.py" "SLUICE_TRACE_DIR=$t" "$(basename "$app")" "$t.ready" "$t.samples" > "$t.cpu" &
  cpu=$!
  ready "$t.ready"
  in_tb env SLUICE_CB_WRITE=enable SLUICE_CAPTURE="$2/ckpt.%r" SLUICE_TRACE_DIR="$t" "${@:6}" \
    timeout 300 mpiexec -hosts "$3" -n "$4" env LD_PRELOAD="$lib" "$app" write "$2" "$5" > /dev/null || rc=$?
  kill -TERM "$cpu" && wait "$cpu" || true
  [ "$rc" = 0 ] || return "$rc"
  python3 "$here/whatif_cpu.py" --window "$t.samples" $("$trace" whatif --window "$t") > "$t.wcpu"
  echo "$t"
}
# ready FILE: wait (at most 60 s) until the CPU sampler has made its first pass.
ready() { local i; for ((i = 0; i < 1200; i++)); do [ -e "$1" ] && rm -f "$1" && return 0; sleep 0.05; done; }
# share TRACE: the CPU share S the threads doing the run's commit got in its commit window
# (TRACE.wcpu; a run kept before it was measured: its processes' share over their lives, TRACE.cpu),
# 1 if unknown.
share() {
  local f=$1.wcpu; [ -e "$f" ] || f=$1.cpu
  awk 'NR == 1 {print ($1 == "-" ? 1 : $1)}' "$f" 2> /dev/null || echo 1
}
field() { "$trace" whatif "$1" | sed -n "s/.*$2.*/\\1/p"; }
durable() { field "$1" 'measured until durable \([0-9.]*\) s'; }
meta_ops() { field "$1" 'container commit \([0-9]*\) metadata operations'; }
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# dd_on NODE: 32 MiB written to the file system from NODE, fdatasync'ed: prints "bytes seconds".
dd_on() {
  "$testbed" exec --dir "$dir" "$1" sh -c "dd if=/dev/zero of='$dir/netfs/cal.$1' bs=1M count=32 conv=fdatasync 2>&1 >/dev/null; rm -f '$dir/netfs/cal.$1'" \
    | awk '/copied/ {for (i = 1; i <= NF; i++) if ($i == "s,") print $1, $(i - 1)}'
}

calibrate() {
  local s=8388608 i
  "$testbed" exec --dir "$dir" node1 python3 -c '
import socket, time
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", 5999)); srv.listen(1); srv.settimeout(60)
c, _ = srv.accept(); n = 0; t0 = None
while True:
    d = c.recv(1 << 20)
    if not d: break
    t0 = t0 or time.time(); n += len(d)
print("%.0f" % (n / (time.time() - t0)))' > "$dir/cal-link" &
  for i in 1 2 3 4 5; do sleep 1; "$testbed" exec --dir "$dir" node0 python3 -c '
import socket; s = socket.create_connection(("node1", 5999)); s.sendall(bytes(16 << 20)); s.close()' 2> /dev/null && break; done
  wait $!
  I=$(cat "$dir/cal-link")
  F=$(for i in 1 2 3; do dd_on node0 | awk '{print int($1 / $2)}'; done | median)
  B=$(for i in 1 2 3; do
    for ((k = 0; k < 4; k++)); do dd_on node$k > "$dir/cal-dd$k" & done
    wait
    cat "$dir"/cal-dd? | awk '{n += $1; if ($2 > t) t = $2} END {print int(n / t)}'
  done | median)
  # The CPU-bound inputs at a whole CPU: each run's figure over the CPU share it got (whatif_cpu.py),
  # rates divided by it, message times multiplied; raw figures and shares in calibration-RATE.raw.
  local mp
  : > "$keep/calibration-$rate.raw"
  mp=$(for i in 1 2 3; do
    t=$(ckpt cal-m /tmp/cal-m node0:2 2 $s); g=$("$trace" perfetto --clock wall - "$t" 2> /dev/null | python3 "$here/whatif_gather.py")
    echo "M P $g share $(share "$t")" >> "$keep/calibration-$rate.raw"
    awk -v s="$(share "$t")" '{printf "%.0f %.0f\n", $1 / s, $2 / s}' <<< "$g"
  done)
  M=$(awk '{print $1}' <<< "$mp" | median) C=$(awk '{print $2}' <<< "$mp" | median)
  local D E H2 H8 lh
  D=$(for i in 1 2 3; do
    t=$(ckpt cal-d /tmp/cal-d node0:1 1 $s); g=$("$trace" perfetto --clock wall - "$t" 2> /dev/null | python3 "$here/whatif_gather.py" --direct)
    echo "P_d $g share $(share "$t")" >> "$keep/calibration-$rate.raw"
    awk -v g="$g" -v s="$(share "$t")" 'BEGIN {printf "%.0f\n", g / s}'
  done | median)
  E=$(for i in 1 2 3; do
    t=$(ckpt cal-e "$dir/netfs/cal-e" node0:1,node1:1 2 $s SLUICE_CB_NODES=1)
    g=$("$trace" perfetto --clock wall - "$t" 2> /dev/null | python3 "$here/whatif_gather.py" --remote)
    echo "E $g share $(share "$t")" >> "$keep/calibration-$rate.raw"
    awk -v g="$g" -v s="$(share "$t")" 'BEGIN {printf "%.0f\n", g / s}'
  done | median)
  # L, then the commit's messages right after it (until durable - m_c L of 1-byte checkpoints of 2
  # ranks on 2 nodes and 8 on 4, at a whole CPU), three times: L and H from the same minute's load.
  # until_l TRACE L: until durable - m_c L, times the run's CPU share
  until_l() { awk -v d="$(durable "$1")" -v m="$(meta_ops "$1")" -v l="$2" -v s="$(share "$1")" 'BEGIN {printf "%.6f\n", (d - m * l) * s}'; }
  lh=$(for i in 1 2 3; do
    t=$(ckpt cal-l "$dir/netfs/cal-l" node0:1 1 1)
    l=$(awk -v d="$(durable "$t")" -v m="$(meta_ops "$t")" 'BEGIN {printf "%.6f\n", d / m}') sl=$(share "$t")
    t=$(ckpt cal-h "$dir/netfs/cal-h" node0:1,node1:1 2 1); h2=$(until_l "$t" "$l") s2=$(share "$t")
    t=$(ckpt cal-h "$dir/netfs/cal-h" node0:2,node1:2,node2:2,node3:2 8 1); h8=$(until_l "$t" "$l") s8=$(share "$t")
    echo "L $l share $sl; H2 at a whole CPU $h2 share $s2; H8 $h8 share $s8" >> "$keep/calibration-$rate.raw"
    echo "$l $h2 $h8"
  done)
  L=$(awk '{print $1}' <<< "$lh" | median) H2=$(awk '{print $2}' <<< "$lh" | median) H8=$(awk '{print $3}' <<< "$lh" | median)
  local hc
  hc=$(awk -v a="$H2" -v b="$H8" 'BEGIN {c = (b - a) / 6; if (c < 0) c = 0; h = a - 2 * c; if (h < 0) h = 0; printf "%.6f %.9f", h, c}')
  echo "# calibrated (load $(load); P, M, P_d, E, H and c at a whole CPU: bench/whatif_cpu.py): link I = $I B/s, file system B = $B B/s (4 clients), client F = $F B/s, metadata L = $L s/op, commit pass P = $C B/s, aggregation M = $M B/s, direct P_d = $D B/s, from another node E = $E B/s, commit messages H = ${hc% *} s, per rank c = ${hc#* } s (2 ranks $H2 s, 8 ranks $H8 s) " | tee "$keep/calibration-$rate"
}

# row RATE POINT SIZE R: the model for the kept trace of that run with the rate's kept calibration;
# prints point, ranks, size, measured, model, ratio, load (when the run was made) and the CPU share
# the run got (its inputs at a whole CPU are scaled by it; "-" for an older calibration: none).
row() {
  local t=$keep/$1-$2-$3-$4 nodes=${2%%x*} rest=${2#*x} ppn n c cs=-
  ppn=${rest%rr} n=$((nodes * ${rest%rr}))
  c=$(cat "$keep/calibration-$1")
  v() { sed -n "s/.* $1 = \([0-9.e+-]*\) .*/\1/p" <<< "$c"; }
  local more=() o k # the inputs added since (an older calibration has not got them: defaults)
  for o in direct-bw:P_d remote-bw:E commit-latency:H rank-cost:c; do
    k=$(v "${o#*:}"); [ -z "$k" ] || more+=("--${o%:*}" "$k")
  done
  local l
  l=$(v L)
  if grep -q "at a whole CPU" <<< "$c"; then
    cs=$(share "$t")
    more+=(--cpu-share "$cs")
    # L at a whole CPU: the calibration runs' L x their S (the file system's daemons share the CPUs)
    l=$(awk '$1 == "L" {print $2 * $4}' "$keep/calibration-$1.raw" | median | awk -v s="$cs" '{printf "%.6f", $1 / s}')
  fi
  "$trace" whatif --targets 1 --stripe-count 1 --target-bw "$(v B)" --md-latency "$l" --md-rate 1e9 \
    --ranks-per-node "$ppn" --node-bw "$(v I)" --client-bw "$(v F)" --commit-bw "$(v P)" --agg-bw "$(v M)" \
    ${more[@]+"${more[@]}"} --ranks "$n" "$t" \
    | awk -v p="$2" -v n="$n" -v s="$3" -v l="$(cat "$t.load" 2> /dev/null || echo -)" -v m="$(durable "$t")" \
      -v cs="$cs" '$1 == n && NF == 10 {printf "%-6s %5d %6s %9.3f %9.3f %7.2f %6s %6s\n", p, n, s, m, $5, m / $5, l, cs}'
}
# medians ROWS: per point and size, the run of the median ratio (of an even count, the mean of the
# two middle runs' figures).
medians() {
  awk '{print $1, $3}' "$1" | uniq | while read -r p s; do
    awk -v p="$p" -v s="$s" '$1 == p && $3 == s' "$1" | sort -g -k6 \
      | awk '{r[NR] = $0} END {split(r[int((NR + 1) / 2)], v); split(r[int(NR / 2) + 1], w)
          printf "%-6s %5d %6s %9.3f %9.3f %7.2f median of %d\n", v[1], v[2], v[3], (v[4] + w[4]) / 2, (v[5] + w[5]) / 2, (v[6] + w[6]) / 2, NR}'
  done
}
header() { printf "%-6s %5s %6s %9s %9s %7s %6s %6s\n" point ranks size measured model ratio load share; }

if [ -n "$rerun" ]; then # the model again on kept traces: no testbed
  for rate in $rates; do
    echo; echo "## $rate (kept in $keep)"; cat "$keep/calibration-$rate"; header
    : > "$keep/rows-$rate"
    for t in "$keep/$rate"-*; do
      [ -d "$t" ] || continue
      x=${t#"$keep/$rate-"} r=${x##*-} x=${x%-*}
      row "$rate" "${x%-*}" "${x##*-}" "$r" | tee -a "$keep/rows-$rate"
    done
    medians "$keep/rows-$rate"
  done
  exit 0
fi
echo "# whatif model on the testbed: $(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for rate in $rates; do
  "$testbed" up --dir "$dir" --nodes 4 --rate "$rate" --fs gluster > /dev/null
  trap '"$testbed" down --dir "$dir" > /dev/null || true' EXIT
  echo
  echo "## links and storage node at $rate, GlusterFS"
  calibrate
  header
  : > "$keep/rows-$rate"
  for p in $points; do
    nodes=${p%%x*} rest=${p#*x}; ppn=${rest%rr}
    n=$((nodes * ppn)) hosts=""
    if [ "$rest" = "$ppn" ]; then
      hosts=$(for ((i = 0; i < nodes; i++)); do printf 'node%d:%d,' "$i" "$ppn"; done)
    else
      hosts=$(for ((i = 0; i < nodes; i++)); do printf 'node%d,' "$i"; done)
    fi
    for size in $sizes; do
      for ((r = 0; r < reps; r++)); do
        t=$(ckpt "$p-$size" "$dir/netfs/$p-$size" "${hosts%,}" "$n" "$(bytes "$size")")
        rm -rf "$keep/$rate-$p-$size-$r" && cp -r "$t" "$keep/$rate-$p-$size-$r" && load > "$keep/$rate-$p-$size-$r.load"
        for x in cpu wcpu samples; do cp "$t.$x" "$keep/$rate-$p-$size-$r.$x"; done
        row "$rate" "$p" "$size" "$r" | tee -a "$keep/rows-$rate"
      done
    done
  done
  medians "$keep/rows-$rate"
  "$testbed" down --dir "$dir" > /dev/null
  trap - EXIT
done
