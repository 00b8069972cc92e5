# SPDX-License-Identifier: MIT
# Helpers for the multi-node tests (tests/cluster/test_*.sh, sourced after
# tests/integration/lib.bash by run_integration.sh; docs/CLUSTER_TESTBED.md). Each test brings
# up its own testbed in its scratch folder and takes it down on every exit.
TESTBED=$SOURCE_DIR/tests/cluster/testbed.sh

# tb_up NODES [testbed.sh up options]: a testbed of NODES nodes in ./tb (shared folder
# ./tb/shared, where the jobs run); skips the test (77) where the machine cannot host one.
tb_up() {
  local n=$1 rc=0
  shift
  TB_DIR=$PWD/tb
  case $PWD/ in /tmp/* | /dev/shm/*) echo "SKIP: the scratch folder $PWD is under /tmp or /dev/shm, which every node has its own of"; exit 77 ;; esac
  for p in "$SLUICE_LIB" "$SLUICE_APPS_DIR" "$SLUICE_BIN_DIR"; do
    case $p/ in /tmp/* | /dev/shm/*) echo "SKIP: $p is under /tmp or /dev/shm, which the nodes cannot see"; exit 77 ;; esac
  done
  trap tb_down EXIT
  "$TESTBED" up --dir "$TB_DIR" --nodes "$n" "$@" || rc=$?
  [ "$rc" -ne 77 ] || exit 77
  [ "$rc" -eq 0 ] || fail "testbed up failed (exit $rc)"
  SHARED=$TB_DIR/shared
}
tb_down() { "$TESTBED" down --dir "$TB_DIR" || true; }

# tb_mpiexec ARGS...: mpiexec in the testbed's head, from the shared folder (ranks round robin
# over the nodes unless -hosts says otherwise; hydra's -hosts node0:2,node1:2 puts 2 on each).
tb_mpiexec() { (cd "$SHARED" && "$TESTBED" run --dir "$TB_DIR" mpiexec "$@"); }
# tb_exec NODE CMD...: CMD inside node NODE (its /dev/shm, /tmp, host name, processes).
tb_exec() { "$TESTBED" exec --dir "$TB_DIR" "$@"; }
# job_end JOB SECONDS: waits up to SECONDS for the background job JOB; then sets JOB_RC (its
# status) and JOB_TOOK (seconds waited) and returns 0, or returns 1 if it still runs.
job_end() {
  local t0
  t0=$(date +%s.%N)
  timeout "$2" bash -c "while kill -0 $1 2> /dev/null; do sleep 0.05; done" || return 1
  JOB_TOOK=$(echo "$(date +%s.%N) - $t0" | bc)
  set +e
  wait "$1"
  JOB_RC=$?
  set -e
}
