# SPDX-License-Identifier: MIT
# Checkpoint capture when the rank's checkpoint is written by another process than the one the
# launcher started (docs/MPI.md, "Every process of a rank"): env chains of one and two levels, bash -c, a job script that runs
# the writer, a Python driver whose subprocess writes (Python closes the PMI socket in its
# children), and an MPI program whose system() child or forked child writes. Under real mpiexec
# on 1, 2, 3 and 4 ranks, each run under `timeout` (a hang fails), against the same run without
# sluice: the same output (sorted: ranks print concurrently), exit code 0, stderr empty, one
# container and no per-rank file, and every member extracted equal to the file written without
# sluice.
export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
head -c 70000 /dev/urandom > data

# the writer every non-MPI case runs: its rank's member, then reads it back
cat > writer.sh <<'SH'
#!/bin/sh
r=${PMI_RANK:-$OMPI_COMM_WORLD_RANK}
head -c $((1000 + r * 3001)) ../data > ckpt.$r
wc -c < ckpt.$r
SH
cat > driver.py <<'PY'
import os, subprocess
r = os.environ.get("PMI_RANK") or os.environ["OMPI_COMM_WORLD_RANK"]
subprocess.run(["sh", "-c", "head -c %d ../data > ckpt.%s" % (1000 + int(r) * 3001, r)], check=True)
with open("ckpt." + r, "rb") as f:
    n = len(f.read())
# one write per line: ranks share the output pipe, and print() writes in pieces unbuffered
os.write(1, ("rank %s read %d\n" % (r, n)).encode())
PY
chmod +x writer.sh

# run LABEL N CMD...: CMD on N ranks without sluice (in ref/) and with it (in cap/), compared.
run() {
  local label=$1 n=$2; shift 2
  rm -rf ref cap && mkdir ref cap
  (cd ref && timeout 120 "$MPIEXEC" -n "$n" "$@" >../ref.out 2>../ref.err) || fail "$label: without sluice: $(head -3 ref.err)"
  set +e
  (cd cap && run_dist "$n" SLUICE_CAPTURE='ckpt.%r' "$@" \
    >../cap.out 2>../cap.err)
  local rc=$?
  set -e
  [ "$rc" == 0 ] || fail "$label on $n ranks: exit code $rc: $(head -5 cap.err)"
  [ ! -s cap.err ] || fail "$label on $n ranks: stderr: $(head -5 cap.err)"
  expect_eq "$label on $n ranks: output" "$(sort ref.out)" "$(sort cap.out)"
  expect_eq "$label on $n ranks: one container, no per-rank file" "ckpt.@r.sluice" "$(cd cap && echo ckpt*)"
  mkdir cap/x
  "$SLUICE_BIN_DIR/sluice-ckpt" extract -o cap/x cap/ckpt.@r.sluice >/dev/null
  expect_eq "$label on $n ranks: members" "$(cd ref && echo ckpt*)" "$(cd cap/x && echo ckpt*)"
  for f in ref/ckpt.*; do
    cmp "$f" "cap/x/${f#ref/}" || fail "$label on $n ranks: ${f#ref/} differs from the file written without sluice"
  done
}

for n in 1 2 3 4; do
  run "env chain" "$n" env A=1 ../writer.sh
  run "env env chain" "$n" env A=1 env B=2 ../writer.sh
  run "bash -c" "$n" bash -c 'r=${PMI_RANK:-$OMPI_COMM_WORLD_RANK}; head -c $((500 + r * 777)) ../data > ckpt.$r; wc -c < ckpt.$r'
  run "job script" "$n" sh -c '../writer.sh; true'
  run "python driver" "$n" /usr/bin/python3 ../driver.py
  run "system() child" "$n" "$SLUICE_APPS_DIR/mpi_proc_writer" system 2
  run "forked child" "$n" "$SLUICE_APPS_DIR/mpi_proc_writer" fork 2
done
