# SPDX-License-Identifier: MIT
# Virtual per-rank folders (SLUICE_CAPTURE='rank%r/ckpt.dat') behave like real folders for every
# process of a job: made by one rank, filled by another (through a child shell), emptied, seen
# empty, refilled, refused by rmdir while full, removed, listed and stat-ed by others, under
# 1 to 4 ranks, each step a separate mpiexec job. The same script on real folders (no sluice)
# gives the same output.
export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"

# step N SHIFT CMD: every rank r runs CMD with R = (r + SHIFT) % N (another rank's folder);
# each rank's output to its own file, then all sorted. Container files are not part of the comparison.
step() {
  local n=$1 shift_=$2; shift 2
  timeout 60 "$MPIEXEC" -n "$n" $PRE sh -c "R=\$(( (\${PMI_RANK:-0} + $shift_) % $n )); { $*; } >../step.\${PMI_RANK:-0} 2>&1" || true
  cat ../step.* | grep -v '\.sluice$' | sed "s|$PWD/||g" | LC_ALL=C sort
  rm -f ../step.*
}

script() { # script N: the scenario, run in the current folder
  local n=$1
  step "$n" 0 'mkdir rank$R && echo "made rank$R"'
  step "$n" 0 'mkdir rank$R || true'
  step "$n" 1 'ls -d rank*; stat -c "%n %F" rank$R'
  step "$n" 1 "sh -c 'echo hi from \$\$ > rank'\$R'/ckpt.dat' && echo filled rank\$R"
  step "$n" 2 'cat rank$R/ckpt.dat | sed s/[0-9]*$//; ls rank$R'
  step "$n" 3 'rmdir rank$R || echo "rmdir rank$R refused"'
  step "$n" 2 'rm rank$R/ckpt.dat && echo emptied rank$R'
  step "$n" 1 'stat -c "%n %F" rank$R; ls -A rank$R | wc -l; ls -d rank* | wc -l'
  step "$n" 3 'echo again > rank$R/ckpt.dat && cat rank$R/ckpt.dat'
  step "$n" 0 'rm rank$R/ckpt.dat && rmdir rank$R && echo removed rank$R'
  step "$n" 1 'stat -c "%n %F" rank$R || echo "rank$R gone"; ls -A . | grep -c "^rank" || true'
  step "$n" 2 'rmdir rank$R || true'
}

for n in 1 2 3 4; do
  mkdir -p real$n virt$n
  (cd real$n && PRE= script "$n") >real$n.out
  pre="env LD_PRELOAD=$SLUICE_LIB SLUICE_CAPTURE=$PWD/virt$n/rank%r/ckpt.dat" # $PWD before the cd
  (cd virt$n && PRE=$pre script "$n") >virt$n.out
  sed -i "s|virt$n/||g; s|real$n/||g" real$n.out virt$n.out
  if ! diff real$n.out virt$n.out >diff$n.txt; then
    cat diff$n.txt >&2
    fail "$n ranks: virtual folders differ from real ones (above: < real, > sluice)"
  fi
  [ -z "$(find virt$n -mindepth 1 -type d)" ] || fail "$n ranks: sluice made real folders"
  grep -q "made rank" virt$n.out && grep -q "filled rank" virt$n.out || fail "$n ranks: the scenario did not run"
  # The pattern does capture: a per-rank folder made with it is a marker, not a folder.
  (cd virt$n && $pre mkdir rank0 && rm .rank0.sluice-dir) || fail "$n ranks: the pattern captures nothing"
  echo "ok: $n ranks: the same output as real folders ($(wc -l <real$n.out) lines)"
done
