# SPDX-License-Identifier: MIT
# File-system metadata of a version stays O(1) at the home + O(1) per aggregator on the direct
# path too (docs/COMMIT.md, "Cost as the job grows"): the members that are not shuffled are
# copied into the temporary container by their node's aggregator from the node-local staging
# files, so only the home (its create) and the aggregators open and fdatasync it, however many
# ranks write; an aggregator in the home's own process does not sync it at all (the home's fsync
# before the rename covers its writes): one sync of the file per version on one node. Counted from outside with strace (openat, fdatasync, fsync of the version's
# temporary file; versions are the renames of it over the container) on real jobs of 5 ranks on
# one node (one aggregator: the home), direct path, and of 8 ranks with two aggregators
# (SLUICE_CB_NODES=2) and the two-phase writer choosing per member (auto). Every job's container
# verifies and holds every byte the ranks wrote.
app=$SLUICE_APPS_DIR/ckpt_commit_steps
ckpt=$SLUICE_BIN_DIR/sluice-ckpt
command -v strace > /dev/null || { echo "SKIP: no strace"; exit 77; }
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE

# run NAME RANKS: 2 steps of the writer under strace; leaves NAME.strace, checks the container
# and every byte of it (extracted: no second job).
run() {
  local name=$1 n=$2 d=$PWD/$1
  mkdir -p "$d"
  SLUICE_CAPTURE="$d/ckpt.%r" timeout 120 strace -f --seccomp-bpf -qq -y \
    -e trace=openat,fdatasync,fsync,rename -o "$name.strace" \
    "$MPIEXEC" -n "$n" env LD_PRELOAD="$SLUICE_LIB" "$app" write "$d" 2 \
    || fail "$name: writer job failed"
  "$ckpt" verify "$d/ckpt.@r.sluice" > /dev/null || fail "$name: container does not verify"
  "$ckpt" extract -o "$PWD/$name.x" "$d/ckpt.@r.sluice" > /dev/null || fail "$name: extract failed"
  SLUICE_CAPTURE= "$app" verify "$PWD/$name.x" 2 "$n" || fail "$name: wrong bytes in the container"
}

# per_version NAME: "opens syncs processes", the most of any version (a temporary file renamed
# over the container): calls that opened or synced it, and processes that opened it.
per_version() {
  awk '
    /\.tmp\./ && /^[0-9]+ +openat\(/ && !/= -1/ { match($0, /"[^"]*\.tmp\.[0-9]+"/); f = substr($0, RSTART, RLENGTH)
      o[f]++; if (!((f, $1) in p)) { p[f, $1] = 1; n[f]++ } }
    /^[0-9]+ +f(data)?sync\(/ { match($0, /<[^>]*\.tmp\.[0-9]+>/); if (RLENGTH > 0) s["\"" substr($0, RSTART + 1, RLENGTH - 2) "\""]++ }
    /^[0-9]+ +rename\(/ && /= 0$/ && /\.tmp\./ { v++ }
    END { for (f in o) { if (o[f] > mo) mo = o[f]; if (s[f] > ms) ms = s[f]; if (n[f] > mp) mp = n[f] }
      if (!v) print "none"; else print mo + 0, ms + 0, mp + 0 }' "$1.strace"
}

# check NAME RANKS MAX_OPENS MAX_SYNCS MAX_PROCS
check() {
  local got
  got=$(per_version "$1")
  [ "$got" != none ] || fail "$1: no version was renamed into place"
  read -r opens syncs procs <<< "$got"
  echo "$1, $2 ranks: per version at most $opens opens and $syncs syncs of the temporary container, by $procs processes"
  [ "$opens" -le "$3" ] || fail "$1: $opens opens of a version's file at $2 ranks (at most $3: home + aggregators)"
  [ "$syncs" -le "$4" ] || fail "$1: $syncs syncs of a version's file at $2 ranks (at most $4)"
  [ "$procs" -le "$5" ] || fail "$1: $procs processes opened a version's file (at most $5 aggregators)"
  echo "ok: $1"
}

# One node, one aggregator (the home): it creates the file and writes every member (2 opens,
# one fsync before the rename); before, each of the 5 ranks opened and fdatasynced it too (6 and
# 6, by 5 processes), and later the home's aggregator still fdatasynced it before the fsync (2).
SLUICE_CB_WRITE=disable run direct5 5
check direct5 5 2 1 1
# Two aggregators on the node, the two-phase writer choosing per member (auto): shuffled members
# go through an aggregator, direct ones to one of the two; no other rank opens the file (the
# home's create, each aggregator's share and direct copy: at most 5).
SLUICE_CB_WRITE=auto SLUICE_STRIPING_UNIT=4K SLUICE_CB_NODES=2 run auto8 8
check auto8 8 5 5 2
