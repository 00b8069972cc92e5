# SPDX-License-Identifier: MIT
# `sluice-trace io` on real checkpoint runs under mpiexec: per set and version the members and
# their bytes match what the programs wrote, the container's extent matches its size on disk,
# the metadata operations are those of a commit (create, rename, fsyncs), and the Young/Daly
# intervals match the formulas computed here by hand from the measured costs and for a given
# cost (60 s at an MTBF of 24 h: Young sqrt(2*60*86400) = 3219.9 s, Daly 3180.1 s).
TRACE=$SLUICE_BIN_DIR/sluice-trace
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE

# check_intervals FILE: recomputes Young and Daly from each measured cost line of `io` output.
check_intervals() {
  /usr/bin/python3 - "$1" <<'PYEOF'
import math, re, sys
text = open(sys.argv[1]).read()
m = float(re.search(r"MTBF of (\d+) s", text).group(1))
lines = re.findall(r"cost = ([a-z -]+): ([0-9.]+) s.*?: Young ([0-9.]+) s, Daly ([0-9.]+) s", text)
assert len(lines) >= 2, lines
for what, c, young, daly in lines:
    c = float(c)
    y = math.sqrt(2 * c * m)
    d = y * (1 + math.sqrt(c / (2 * m)) / 3 + c / (2 * m) / 9) - c if c < 2 * m else m
    assert abs(float(young) - y) <= 0.051 and abs(float(daly) - d) <= 0.051, (what, c, young, y, daly, d)
    print("ok: %s cost %.6f s: Young %s (%.2f), Daly %s (%.2f)" % (what, c, young, y, daly, d))
PYEOF
}

# Two-phase on 3 ranks, one version at exit.
sizes="200001 333333 150000"
d=$PWD/tp; mkdir -p "$d"
SLUICE_CB_WRITE=enable SLUICE_CB_NODES=2 SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_TRACE_DIR=$PWD/tp.trace \
  run_dist 3 "$SLUICE_APPS_DIR/ckpt_sized" write "$d" $sizes \
  || fail "two-phase job failed"
"$TRACE" io --mtbf 24h --cost 60 tp.trace >tp.io || fail "io failed"
cat tp.io
expect_contains "one version" "1 checkpoint version in 3 files of 3 ranks" "$(cat tp.io)"
expect_contains "members and bytes" "members        3 of 3 declared, 683334 bytes" "$(cat tp.io)"
expect_contains "container extent = its size" "container extent $(stat -c %s "$d/ckpt.@r.sluice") bytes" "$(cat tp.io)"
# The writers are the ranks whose file-system writes the trace holds (at most SLUICE_CB_NODES;
# the planner may take fewer aggregators for a set this small).
writers=$("$TRACE" dump tp.trace | sed -n 's/^rank \([0-9]*\) .*COMMIT_FS_WRITE.*/\1/p' | sort -u | wc -l)
[ "$writers" -ge 1 ] && [ "$writers" -le 2 ] || fail "$writers ranks wrote the container (SLUICE_CB_NODES=2)"
expect_contains "writers as in the trace" "writers        $writers rank" "$(cat tp.io)"
for op in create rename fsync; do
  grep -q "metadata ops .* $op [1-9]" tp.io || fail "no $op among the metadata operations"
done
echo "ok: create, rename, fsync"
grep -q "app-visible    0\.[0-9]* s (the longest wait of any rank in the exit flush)" tp.io || fail "no exit wait"
grep -q "until durable  0\.[0-9]* s" tp.io || fail "no time until durable"
expect_contains "given cost, by hand" "cost = given: 60.000000 s: Young 3219.9 s, Daly 3180.1 s" "$(cat tp.io)"
check_intervals tp.io

# Direct path on 4 ranks, two steps, each waited for by fsync.
d=$PWD/st; mkdir -p "$d"
SLUICE_CB_WRITE=disable SLUICE_CAPTURE="$d/ckpt.%r" SLUICE_TRACE_DIR=$PWD/st.trace \
  run_dist 4 "$SLUICE_APPS_DIR/ckpt_commit_steps" write "$d" 2 --fsync \
  || fail "steps job failed"
"$TRACE" io --mtbf 1h st.trace >st.io || fail "io failed"
cat st.io
# A member fsynced before the others were may start a version of its own: two or more versions.
nv=$(sed -n 's/^\([0-9]*\) checkpoint versions in 4 files of 4 ranks$/\1/p' st.io)
[ "${nv:-0}" -ge 2 ] || fail "expected two or more versions: $(head -1 st.io)"
# Members of step s: 0, 1, 3 MiB + 12345 + s, 100000 + 21 + s bytes (ckpt_commit_steps.c). Ranks
# that fsync step 1 before the others have opened their files commit a version of their own
# (docs/COMMIT.md, Limits), so step 1's four members are whole in some version before the last,
# and the last version holds step 2's.
whole_in() { # STEP -> the versions that hold all four of its members, one per line
  local b=$((0 + 1 + (3 << 20) + 12345 + $1 + 100000 + 21 + $1))
  grep -A1 "ckpt.%r version " st.io | grep -B1 "members        4 of 4 declared, $b bytes" \
    | sed -n 's/.*ckpt.%r version \([0-9]*\) .*/\1/p'
}
v1=$(whole_in 1 | sed -n 1p)
[ -n "$v1" ] && [ "$v1" -lt "$nv" ] || fail "step 1's four members are in no version before the last"
echo "ok: step 1 whole in version $v1"
expect_eq "version $nv: step 2's members and bytes" "$nv" "$(whole_in 2 | tail -1)"
expect_eq "the last version's extent = the container's size" "$(stat -c %s "$d/ckpt.@r.sluice")" \
  "$(grep 'container extent' st.io | tail -1 | sed 's/.*extent \([0-9]*\) bytes.*/\1/')"
# Each fsync wait names no version: it goes to the version it overlapped.
[ "$(grep -c 'app-visible    .* s (the longest wait of any rank)$' st.io)" -ge 2 ] \
  || fail "fsync waits not given to their versions"
echo "ok: fsync waits given to their versions"
check_intervals st.io
expect_contains "a bad MTBF is refused" "--mtbf wants a duration" "$("$TRACE" io --mtbf soon st.trace 2>&1 || true)"

# A rank without a file (as after a crash or SIGKILL): every command still works on the others
# and says which rank is missing.
# The rank left out is not the set's home (which the set's name hashes to), whose records
# whatif and io need.
"$TRACE" dump tp.trace >tp.dump
home=$(awk '/ COMMIT_BEGIN / {print $2; exit}' tp.dump)
[ -n "$home" ] || fail "no COMMIT_BEGIN in the trace"
gone=$(((home + 1) % 3))
mkdir -p miss
for r in 0 1 2; do [ "$r" = "$gone" ] || cp tp.trace/rank-$r.* miss/; done
for c in "perfetto -" "heatmap --csv -" "time --csv -" "io" "calls" "whatif" "summary"; do
  err=$("$TRACE" $c miss 2>&1 >/dev/null) || fail "$c on a trace without rank $gone failed: $err"
  case "$c" in
    summary) expect_contains "$c: says a rank is missing" "2 of 3 ranks have a trace file" "$("$TRACE" summary miss)" ;;
    *) expect_contains "$c: names the missing rank" "1 of 3 ranks have no trace file (rank $gone)" "$err" ;;
  esac
done
