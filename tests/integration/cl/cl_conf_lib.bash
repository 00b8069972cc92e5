# SPDX-License-Identifier: MIT
# Helpers of the cl_conf_* tests (sourced; not a test itself): the same program without sluice on
# plain PoCL, with the pass-through layer, and distributed, where every answer must be the same.
export POCL_MAX_PTHREAD_COUNT=1

# conf_same NAME CMD...: CMD's stdout with N local devices (plain PoCL, then SLUICE_OPENCL=on) and
# distributed on N ranks of one device each (device 0 on rank 0, the others remote), for N = 2
# and 3: identical, exit codes 0, nothing from sluice on stderr. Leaves NAME.{plain,on,dist}.N.
conf_same() {
  local name=$1 n rc devs
  shift
  for n in 2 3; do
    devs=$(printf 'pthread %.0s' $(seq "$n"))
    set +e
    POCL_DEVICES="$devs" timeout 120 "$@" >"$name.plain.$n" 2>"$name.plain.$n.err"
    rc=$?
    set -e
    expect_eq "$name, $n local devices without sluice: exit code" 0 "$rc"
    set +e
    POCL_DEVICES="$devs" SLUICE_OPENCL=on LD_PRELOAD="$SLUICE_LIB" timeout 120 "$@" >"$name.on.$n" 2>"$name.on.$n.err"
    rc=$?
    set -e
    expect_eq "$name, pass-through: exit code" 0 "$rc"
    diff "$name.plain.$n" "$name.on.$n" >diff.out || fail "$name with SLUICE_OPENCL=on differs: $(head -20 diff.out)"
    set +e
    POCL_DEVICES=pthread timeout 120 "$MPIEXEC" -n "$n" env SLUICE_OPENCL=distributed LD_PRELOAD="$SLUICE_LIB" \
      "$@" >"$name.dist.$n" 2>"$name.dist.$n.err"
    rc=$?
    set -e
    expect_eq "$name on $n ranks: exit code" 0 "$rc"
    diff "$name.plain.$n" "$name.dist.$n" >diff.out ||
      fail "$name on $n ranks differs from $n local devices: $(head -30 diff.out)"
    if grep -q 'sluice' "$name.dist.$n.err"; then fail "$name on $n ranks: sluice said: $(head -3 "$name.dist.$n.err")"; fi
    echo "ok: $name prints the same without sluice, passed through and on $n ranks ($(wc -l <"$name.dist.$n") lines)"
  done
}
