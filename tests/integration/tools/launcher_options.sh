# SPDX-License-Identifier: MIT
# The launcher's options (getopt_long over vars.def): a forgotten value is an error, not the
# value "--"; short options; misspelt and abbreviated long options get "did you mean"; --help
# shows what each option accepts; a bad value is reported once per job and every rank exits 2.
sluice=$SLUICE_BIN_DIR/sluice

# run_launcher ARGS...: sets rc, out (stdout) and err (stderr) of the launcher.
run_launcher() {
  set +e
  out=$(timeout 60 "$sluice" "$@" 2>err.txt)
  rc=$?
  set -e
  err=$(cat err.txt)
}

# 1. `--trace -- ./prog`: "--" is never the value; nothing runs, no folder named "--".
run_launcher --trace -- sh -c 'echo ran'
expect_eq "--trace without a value exits 2" 2 "$rc"
expect_eq "--trace without a value runs nothing" "" "$out"
expect_eq "one line on stderr" 1 "$(wc -l < err.txt)"
expect_contains "names the option and what it needs" "-t/--trace needs a value before the program: a directory" "$err"
[ ! -e ./-- ] || fail "a folder named -- was created"
run_launcher --trace --capture 'ckpt.%r' -- true
expect_eq "another option is not a value" 2 "$rc"
expect_contains "--trace --capture names --trace" "--trace needs a value" "$err"

# 2. `-t x -- true`: short option, the program runs with the variable set and traces into x.
run_launcher -t x -- true
expect_eq "-t x -- true exits 0" 0 "$rc"
expect_eq "-t x -- true says nothing" "" "$err"
run_launcher -t x -- sh -c 'echo "dir=$SLUICE_TRACE_DIR"'
expect_eq "-t sets SLUICE_TRACE_DIR" "dir=x" "$out"
echo hello > input.txt
run_launcher -t x -- cat input.txt
expect_eq "-t x -- cat: the program's output" "hello" "$out"
[ -d x ] && [ -n "$(ls x)" ] || fail "-t x: no trace file in x"
expect_contains "the trace in x records the program" "PROCESS_EXIT exit status=0" "$(timeout 60 "$SLUICE_BIN_DIR/sluice-trace" dump x)"
run_launcher -t y -c 'ckpt.%r' -d off -b 4 -n
expect_eq "short options with --print-env exit 0" 0 "$rc"
expect_contains "-c sets SLUICE_CAPTURE" "SLUICE_CAPTURE=ckpt.%r" "$out"
expect_contains "-b sets SLUICE_BACKTRACE" "SLUICE_BACKTRACE=4" "$out"
expect_contains "--print-env shows LD_PRELOAD" "LD_PRELOAD=" "$out"
run_launcher --trace=z --stage-limit=1G -- sh -c 'echo "$SLUICE_TRACE_DIR $SLUICE_STAGE_LIMIT"'
expect_eq "--opt=value form" "z 1G" "$out"
run_launcher sh -c 'echo no-separator'
expect_eq "the program may follow the options without --" "no-separator" "$out"

# 3. Misspelt or abbreviated long options: "did you mean", exit 2, nothing runs.
run_launcher --captur 'ckpt.%r' -- sh -c 'echo ran'
expect_eq "--captur exits 2" 2 "$rc"
expect_eq "--captur runs nothing" "" "$out"
expect_eq "--captur message" "sluice: unknown option --captur (did you mean --capture?)" "$err"
run_launcher --captrue 'ckpt.%r' -- true
expect_eq "--captrue message" "sluice: unknown option --captrue (did you mean --capture?)" "$err"
run_launcher --trace-lim=1M -- true
expect_eq "an abbreviation is not accepted silently" "sluice: unknown option --trace-lim (did you mean --trace-limit?)" "$err"
run_launcher --frobnicate -- true
expect_eq "unknown option exits 2" 2 "$rc"
expect_contains "unknown option message" "unknown option --frobnicate (sluice --help lists them)" "$err"
run_launcher -x -- true
expect_contains "unknown short option" "unknown option -x" "$err"

# 4. --help: every option with its placeholder and accepted values, no generic VALUE.
run_launcher --help
expect_eq "--help exits 0" 0 "$rc"
expect_contains "short and long trace option" "-t, --trace DIR" "$out"
expect_contains "enum choices shown as the placeholder" "--cb-write auto|enable|disable" "$out"
expect_contains "opencl choices" "--opencl off|on|distributed" "$out"
expect_contains "size placeholder" "--trace-limit SIZE" "$out"
expect_contains "accepted values of a size" "SLUICE_TRACE_LIMIT: a size such as 16M or 1GiB; default 64M" "$out"
if grep -q "VALUE" <<<"$out"; then fail "--help still shows VALUE: $(grep VALUE <<<"$out")"; fi
if grep -q "docs/ENV.md" <<<"$out"; then fail "--help points at docs/ENV.md"; fi
expect_contains "points at the man page" "sluice(7)" "$out"
nvars=$("$sluice" --list-variables | wc -l)
nhelp=$(grep -c '^ *SLUICE_' <<<"$out")
expect_eq "one --help entry per variable" "$nvars" "$nhelp"

# 5. A bad value: once per job (the first rank), every rank exits 2.
run_launcher --stage-limit lots -- sh -c 'echo ran'
expect_eq "bad value exits 2" 2 "$rc"
expect_eq "bad value message" "sluice: invalid value SLUICE_STAGE_LIMIT='lots': expected a size such as 512M or 8GiB" "$err"
PMI_RANK=1 rc_of timeout 60 "$sluice" --stage-limit lots -- true 2>err.txt
expect_eq "a later rank exits 2 too" 2 "$rc"
expect_eq "a later rank says nothing" "" "$(cat err.txt)"
for n in 2 3; do
  set +e
  out=$(timeout 120 "$MPIEXEC" -n $n "$sluice" --stage-limit lots -- sh -c 'echo ran' 2>err.txt)
  rc=$?
  set -e
  expect_eq "mpiexec -n $n: the job exits 2" 2 "$rc"
  expect_eq "mpiexec -n $n: no rank ran the program" "" "$out"
  expect_eq "mpiexec -n $n: the message once" 1 "$(grep -c "invalid value SLUICE_STAGE_LIMIT='lots'" err.txt)"
done
echo "launcher_options: all passed"
