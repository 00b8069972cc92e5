# SPDX-License-Identifier: MIT
# Two-phase commit under real mpiexec: 1, 2, 3, 4 and 8 ranks, SLUICE_CB_NODES from 1 to the
# rank count at 3 ranks (at 2: 2; at 4: 2, 4; at 8: 1, 2, 5, 8), stripe units that do not divide the member sizes (uneven sizes,
# 64 KiB and a 192 KiB unit that is not a power of two) and that do (sizes that are multiples of
# 64 KiB).
# Each run: one container and nothing else, its checksums verify, a job with another rank count
# reads every byte back through the per-rank names, and the trace shows that the ranks that
# wrote the container (COMMIT_FS_WRITE) are exactly the aggregators (SLUICE_CB_NODES of them,
# the home among them). Then CB_WRITE=auto and disable: who writes follows the planner's choice.
app=$SLUICE_APPS_DIR/ckpt_sized
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE SLUICE_CB_BUFFER_SIZE=256K
uneven="200001 333333 0 150000 1 77777 262147 100003"
even="131072 262144 65536 196608"

# run NAME RANKS -- SIZES...: writes with RANKS ranks, checks the container and the bytes, and
# leaves the trace dump in NAME.dump.
run() {
  local name=$1 n=$2; shift 3
  local d=$PWD/$name
  mkdir -p "$d"
  SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_TRACE_DIR=$PWD/$name.trace \
    run_dist "$n" "$app" write "$d" "$@" \
    || fail "$name: writer job failed"
  [ "$(ls -A "$d")" == "ckpt.@r.sluice" ] || fail "$name: expected one container, found: $(ls -A "$d")"
  "$ckpt" verify "$d/ckpt.@r.sluice" > /dev/null || fail "$name: container does not verify"
  local m=$(( n % 3 + 1 ))
  SLUICE_CAPTURE="$d/ckpt.%r" run_dist "$m" \
    "$app" verify "$d" "$n" "$@" || fail "$name: bytes read back with $m ranks are wrong"
  "$SLUICE_BIN_DIR/sluice-trace" dump "$name.trace" > "$name.dump" || fail "$name: trace unreadable"
}

writers() { grep ' COMMIT_FS_WRITE ' "$1.dump" | awk '{print $2}' | sort -un | tr '\n' ' '; }
# Ranks that ran a domain (their COMMIT_MEMORY says aggregator=1), plus the home (the rank that
# began the commit and writes the header and index; it is always one of the aggregators).
aggregators() {
  { grep ' COMMIT_MEMORY .*aggregator=1' "$1.dump" | awk '{print $2}'
    grep ' COMMIT_BEGIN ' "$1.dump" | awk '{print $2}'; } | sort -un | tr '\n' ' '
}

# Every aggregator count at 3 ranks; at 2, 4 and 8 one of each kind (1 where 3 does not have
# it, an even and an odd count in between, all of them): the kinds below, without the runs that
# repeat them (about 40 s of CI).
for n in 2 3 4 8; do
  case $n in 2) cbs=2 ;; 4) cbs="2 4" ;; 8) cbs="1 2 5 8" ;; *) cbs=$(seq 1 "$n") ;; esac
  for cb in $cbs; do
    if [ "$cb" -eq "$n" ]; then unit=192K; sizes=$uneven
    elif [ $(( cb % 2 )) -eq 1 ]; then unit=64K; sizes=$uneven
    else unit=64K; sizes=$even; fi
    name=n$n-cb$cb
    SLUICE_CB_WRITE=enable SLUICE_CB_NODES=$cb SLUICE_STRIPING_UNIT=$unit run "$name" "$n" -- $sizes
    w=$(writers "$name"); a=$(aggregators "$name")
    for r in $w; do
      case " $a " in *" $r "*) ;; *) fail "$name: rank $r wrote the container but is not an aggregator ($a)" ;; esac
    done
    if [ "$(grep -c ' COMMIT_BEGIN ' "$name.dump")" -eq 1 ]; then
      expect_eq "$name: the ranks that wrote are the aggregators" "$a" "$w"
      if [ "$unit" == 64K ]; then
        expect_eq "$name: number of writers" "$cb" "$(echo $w | wc -w)"
      else
        # 1.1 MB over 192 KiB stripes: fewer stripes than aggregators, some get no domain.
        [ "$(echo $w | wc -w)" -le "$cb" ] || fail "$name: more writers than aggregators"
        echo "ok: $name: $(echo $w | wc -w) of $cb aggregators had data"
      fi
    else
      echo "ok: $name: writers ($w) among aggregators ($a) over several commits"
    fi
  done
done

# One rank: no MPI, the member goes straight into the container.
run n1 1 -- 300007
echo "ok: one rank"

# auto: members that share stripes are shuffled to the single aggregator of this node...
SLUICE_CB_WRITE=auto SLUICE_STRIPING_UNIT=1M run auto-shared 4 -- $uneven
grep ' COMMIT_PLAN ' auto-shared.dump | grep -v 'bytes=0' | grep -c 'direct=0' >/dev/null || fail "auto did not shuffle"
expect_eq "auto, shared stripes: one writer (one node)" 1 "$(writers auto-shared | wc -w)"
# ...and members that own their stripes (unit = block, sizes multiples of it) are not shuffled:
# the node's aggregator (the home) copies them from their staging files, no other rank writes.
SLUICE_CB_WRITE=auto SLUICE_STRIPING_UNIT=4K run auto-owned 4 -- $even
[ "$(grep ' COMMIT_PLAN ' auto-owned.dump | grep -c 'direct=1')" -eq 4 ] || fail "auto: expected 4 direct members"
home=$(grep ' COMMIT_BEGIN ' auto-owned.dump | awk '{print $2}' | sed -n 1p)
expect_eq "auto, owned stripes: the node's aggregator writes every member" "$home " "$(writers auto-owned)"
grep -q " COMMIT_PLAN member rank=[0-9]*, direct=1, aggregator=$home\$" auto-owned.dump \
  || fail "auto-owned: COMMIT_PLAN does not name the node's aggregator as the writer"
# disable: the direct path, no plan at all.
SLUICE_CB_WRITE=disable run disabled 4 -- $uneven
[ "$(grep -c ' COMMIT_PLAN ' disabled.dump)" -eq 0 ] || fail "disable still planned a shuffle"
echo "ok: CB_WRITE auto and disable"

# auto, mixed: with an 8 KiB unit (data from the first stripe boundary, 8 KiB), members 0, 1
# and 4 own their stripes and go direct, 2 and 3 share a stripe and go through the aggregator
# (the home); the direct ones are copied by the node's aggregator too: only the home writes.
SLUICE_CB_WRITE=auto SLUICE_STRIPING_UNIT=8K run auto-mixed 5 -- 8192 16384 3000 3000 16384
for r in 0 1 4; do
  grep -q " COMMIT_PLAN member rank=$r, direct=1," auto-mixed.dump || fail "auto-mixed: member $r not direct"
done
for r in 2 3; do
  grep -q " COMMIT_PLAN member rank=$r, direct=0," auto-mixed.dump || fail "auto-mixed: member $r not shuffled"
done
home=$(grep ' COMMIT_BEGIN ' auto-mixed.dump | awk '{print $2}' | sed -n 1p)
expect_eq "auto-mixed: only the node's aggregator wrote" "$home " "$(writers auto-mixed)"

# Versions: three steps of the capture tests' writer (0 bytes, 1 byte, MiBs, non-round sizes;
# members carried over from the previous version when a step's commit does not have them),
# two aggregators, then every byte of the last step read back with 3 ranks.
d=$PWD/steps
mkdir -p "$d"
SLUICE_CB_WRITE=enable SLUICE_CB_NODES=2 SLUICE_STRIPING_UNIT=64K SLUICE_CAPTURE="$d/ckpt.%r" \
  run_dist 4 "$SLUICE_APPS_DIR/ckpt_commit_steps" \
  write "$d" 3 || fail "steps: writer job failed"
"$ckpt" verify "$d/ckpt.@r.sluice" > /dev/null || fail "steps: container does not verify"
SLUICE_CAPTURE="$d/ckpt.%r" run_dist 3 \
  "$SLUICE_APPS_DIR/ckpt_commit_steps" verify "$d" 3 4 || fail "steps: step 3 read back wrong"
echo "ok: three versions through two aggregators"

# Three sets committed at once (each rank closes its three files together): their commits have
# their own homes, aggregators and tags and are in flight together without waiting on each other.
mkdir -p multi/a multi/b multi/c
SLUICE_CB_WRITE=enable SLUICE_CB_NODES=2 SLUICE_STRIPING_UNIT=64K \
  SLUICE_CAPTURE="$PWD/multi/a/ckpt.%r:$PWD/multi/b/ckpt.%r:$PWD/multi/c/ckpt.%r" \
  run_dist 5 "$app" write \
  "$PWD/multi/a,$PWD/multi/b,$PWD/multi/c" $uneven || fail "multi: writer job failed"
for s in a b c; do
  "$ckpt" verify "multi/$s/ckpt.@r.sluice" > /dev/null || fail "multi: set $s does not verify"
  SLUICE_CAPTURE="$PWD/multi/$s/ckpt.%r" run_dist 2 \
    "$app" verify "$PWD/multi/$s" 5 $uneven || fail "multi: set $s read back wrong"
done
echo "ok: three sets committed at once"
