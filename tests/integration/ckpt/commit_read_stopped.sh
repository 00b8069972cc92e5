# SPDX-License-Identifier: MIT
# A restart read while the checkpoint set's home rank is stopped (SIGSTOP): the read cannot
# know whether a newer version is on its way, so it neither hangs nor serves what may be stale.
# After 3 s one line names the home rank and what the read waits for; at 20 s the program's
# fopen fails with ETIMEDOUT and a second line says so; the job then ends normally once the
# home is continued. 2 and 3 ranks, the two jobs at once.
app=$SLUICE_APPS_DIR/mpi_ckpt_read_stopped
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
export SLUICE_CAPTURE='ckpt.%r'

# The home of a set: FNV-1a of its key modulo the job size (commit_home_of in commit_member.c).
home_of() {
  /usr/bin/python3 -c '
import sys
h = 14695981039346656037
for b in sys.argv[1].encode():
    h = ((h ^ b) * 1099511628211) % (1 << 64)
print(h % int(sys.argv[2]))' "$1" "$2"
}

# The two jobs wait out the same 20 s: they run at the same time, each in its own folder.
for n in 2 3; do
  mkdir run$n
  (
    cd run$n
    export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE/run$n
    home=$(home_of "$PWD/ckpt.%r" $n)
    reader=$(((home + 1) % n))
    other=$((n == 2 ? home : (home + 2) % n))
    echo "$home $reader $other" >ranks
    rc_of run_dist $n "$app" $home $reader $other >out 2>err
    echo "$rc" >rc
  ) &
done
wait
for n in 2 3; do
  cd run$n
  read -r home reader other <ranks
  echo "$n ranks: home rank $home is stopped, rank $reader reads ckpt.$other"
  cat out err
  expect_eq "$n ranks: the job ends normally" 0 "$(cat rc)"
  expect_contains "$n ranks: fopen failed with ETIMEDOUT in about 20 s" "reread failed: Connection timed out after 20 s" "$(cat out)"
  expect_eq "$n ranks: one line while waiting, naming the home" 1 \
    "$(grep -c "sluice\[$reader\]: .*reading $PWD/ckpt.$other: rank $home, the home of checkpoint set $PWD/ckpt.%r, has not answered for 3 s" err)"
  expect_eq "$n ranks: one line when giving up" 1 \
    "$(grep -c "sluice\[$reader\]: .*rank $home, the home of checkpoint set .* did not answer in 20 s: the read fails (ETIMEDOUT)" err)"
  cd ..
done
