# SPDX-License-Identifier: MIT
# Calls by name on virtual per-rank folders answer as on real folders (docs/CAPTURE.md).
# The shape of IOR -u: every rank makes <rank>/ and writes <rank>/out.<rank, 8 digits> in it,
# captured by SLUICE_CAPTURE='ior/%r/out.%r' (the rank twice in one name: one set, one
# container). Then every rank looks at another rank's folder with coreutils, find, tar, bash's
# cd (tests/apps/vdir_calls.sh: stat, stat -f, ls -la and its "..", df, realpath, chmod, touch,
# chown, ...) and with
# Python's os functions by name, by descriptor and as the working directory
# (tests/apps/vdir_calls.py), under 2, 3 and 4 ranks; the output must be what the same
# commands print on real folders.
export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
probe_sh="$SOURCE_DIR/tests/apps/vdir_calls.sh"
probe_py="$SOURCE_DIR/tests/apps/vdir_calls.py"

# job N CMD...: CMD on N ranks (R: another rank's number), the ranks' outputs in rank order.
job() {
  local n=$1; shift
  timeout 120 "$MPIEXEC" -n "$n" $PRE bash -c "r=\${PMI_RANK:-0}; R=\$(( (r + 1) % $n )); { $*; } >out.\$r 2>&1" || true
  for r in $(seq 0 $((n - 1))); do echo "-- rank $r"; cat out.$r; done
  rm -f out.*
}

scenario() {
  local n=$1
  job "$n" 'mkdir -p ior/$r && echo "data of $r" > ior/$r/out.$(printf %08d $r) && echo wrote'
  job "$n" "bash $probe_sh ior/\$R; python3 $probe_py ior/\$R"
}

for n in 2 3 4; do
  mkdir -p real$n/ior virt$n/ior
  (cd real$n && PRE= scenario "$n") >real$n.out
  pre="env LD_PRELOAD=$SLUICE_LIB SLUICE_CAPTURE=$PWD/virt$n/ior/%r/out.%r"
  (cd virt$n && PRE=$pre scenario "$n") >virt$n.out
  if ! diff real$n.out virt$n.out >diff$n.txt; then
    cat diff$n.txt >&2
    fail "$n ranks: virtual folders answer differently from real ones (above: < real, > sluice)"
  fi
  expect_eq "$n ranks: no real per-rank folder" "" "$(find virt$n/ior -mindepth 1 -type d)"
  expect_eq "$n ranks: one container" "1" "$(ls virt$n/ior | grep -c '\.sluice$')"
  info=$("$SLUICE_BIN_DIR/sluice-ckpt" ls virt$n/ior)
  expect_contains "$n ranks: one set of $n members" "members $n " "$info"
  case "$info" in *partial*) fail "$n ranks: a partial set: $info" ;; esac
  echo "ok: $n ranks: the same $(wc -l <real$n.out) lines as on real folders"
done
