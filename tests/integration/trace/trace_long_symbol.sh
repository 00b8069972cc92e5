# SPDX-License-Identifier: MIT
# `sluice-trace calls` names frames whose function name is longer than a line buffer (docs/TRACE.md):
# tests/apps/trace_long_symbol opens its checkpoint from a function of a 2816-byte name, called
# by main, under mpiexec -n 3 and -n 2 with SLUICE_BACKTRACE. addr2line prints that name on one
# line; read in pieces, the rest of the name took the place of its file:line and every later
# frame of the module was off by one. Each frame is named at its own source line: the long
# function (cut at 1000 bytes, marked "...") at the open, main at the call.
SRC=$SOURCE_DIR/tests/apps/trace_long_symbol.c
export SLUICE_STAGE_DIR=$SLUICE_TEST_STAGE
open_line=$(grep -n 'int fd = open(' "$SRC" | cut -d: -f1)
call_line=$(grep -n 'int rc = LONG_NAME(path);' "$SRC" | cut -d: -f1)
for n in 3 2; do
  mkdir "run$n"
  (cd "run$n" && SLUICE_CAPTURE="$PWD/ckpt.%r" SLUICE_TRACE_DIR="$PWD/tr" SLUICE_BACKTRACE=4 \
    run_dist "$n" "$SLUICE_APPS_DIR/trace_long_symbol" >out) ||
    fail "trace_long_symbol on $n ranks failed"
  expect_eq "$n ranks wrote" "$n" "$(grep -c ': 0$' "run$n/out")"
  "$SLUICE_BIN_DIR/sluice-trace" calls "run$n/tr" >calls.$n || fail "calls failed"
  grep -A2 "^#[0-9]*  CKPT_OPEN: $n calls" calls.$n >open.$n || fail "no CKPT_OPEN row: $(head -5 calls.$n)"
  sed -n 2p open.$n | grep -q "^      \(a_function_name_part_\)\{47\}a_function_na\.\.\. at .*trace_long_symbol\.c:$open_line " ||
    fail "$n ranks: the long function is not named at trace_long_symbol.c:$open_line: $(sed -n 2p open.$n | cut -c1-80)...$(sed -n 2p open.$n | cut -c990-)"
  sed -n 3p open.$n | grep -q "^      main at .*trace_long_symbol\.c:$call_line " ||
    fail "$n ranks: its caller is not main at trace_long_symbol.c:$call_line: $(sed -n 3p open.$n | cut -c1-200)"
  echo "ok: $n ranks: the open named in the long function at line $open_line, its caller main at line $call_line"
done
