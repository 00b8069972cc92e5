# SPDX-License-Identifier: MIT
# sluice beside a second preload library shaped like Darshan (apps/plugins/preload_tool.c: it
# wraps open, write and MPI_Init/MPI_Finalize, exports the PMPI_ names as aliases and forwards with
# dlsym(RTLD_NEXT, "PMPI_...")), in both orders, under 3 and 4 ranks. Whatever the order:
# the program's output and exit status are those of a run without either library, every set is
# committed collectively in as many versions as with sluice alone, with every rank's member, the
# containers verify and a restart reads every byte back; the tool sees each rank's MPI_Init and
# MPI_Finalize once. Tool first, it sees exactly what it sees without sluice (the program's
# per-rank names, same opens, writes and bytes); sluice first, it sees sluice's stage files and
# the container writes instead. Before sluice exported PMPI_Init/PMPI_Finalize, the tool-first
# order sent MPI_Init and MPI_Finalize past sluice: MPI came up without MPI_THREAD_MULTIPLE and
# every rank committed alone after MPI was finalized (twice the versions, one member each).
# A program without MPI is checked the same way at the end.

tool="$SLUICE_APPS_DIR/libpreload_tool.so"
app="$SLUICE_APPS_DIR/mpi_ckpt_multifile"
export SLUICE_STAGE_DIR="$SLUICE_TEST_STAGE"
cap='s*/ckpt.%r:state.%r:log.%r'
steps=2

# run NAME N PRELOAD: one write job in NAME/data (the folder the patterns are relative to, the tool's reports in
# NAME/tool, sluice's trace in NAME/trace); prints the program's stdout.
run() {
  local name=$1 n=$2 pre=$3
  mkdir -p "$name/data" "$name/tool" "$name/trace"
  (cd "$name/data" && mpirun "$n" env ${pre:+LD_PRELOAD="$pre"} PRELOAD_TOOL_DIR="$PWD/../tool" \
    SLUICE_CAPTURE="$cap" SLUICE_TRACE_DIR="$PWD/../trace" "$app" write . "$steps") | grep -v '^write_phase_s'
}

# program_files NAME: the tool's lines for the program's own files, rank by rank, folders cut.
program_files() {
  local f
  for f in "$1"/tool/tool.*; do
    grep -E '/(state|log)\.[0-9]+$|/s[0-9]+/ckpt\.[0-9]+$' "$f" | sed "s#$PWD/$1/data/##" | sort
  done | sort
}

for n in 3 4; do
  plain=$(run "plain$n" "$n" "")
  expect_contains "$n ranks: the program reports its bytes" "bytes " "$plain"
  run "sluice$n" "$n" "$SLUICE_LIB" > /dev/null
  # Kept in a file before head: under pipefail, head's early exit would fail the writer (SIGPIPE).
  "$SLUICE_BIN_DIR/sluice-trace" io "sluice$n/trace" >"sluice$n.io"
  versions=$(head -1 "sluice$n.io")
  expect_contains "$n ranks: sluice alone commits every set" "of $n ranks" "$versions"
  run "tool$n" "$n" "$tool" > /dev/null
  alone=$(program_files "tool$n")
  for order in tool-first sluice-first; do
    pre="$tool:$SLUICE_LIB"
    [ "$order" = tool-first ] || pre="$SLUICE_LIB:$tool"
    w="$order$n"
    expect_eq "$w: the program's output" "$plain" "$(run "$w" "$n" "$pre")"
    expect_eq "$w: one container per set" "log.@r.sluice s1 s2 state.@r.sluice" "$(cd "$w/data" && echo *)"
    for c in "$w"/data/*.sluice "$w"/data/s*/*.sluice; do
      expect_contains "$w: $c verifies" "ok ($n members" "$("$SLUICE_BIN_DIR/sluice-ckpt" verify "$c")"
    done
    io=$("$SLUICE_BIN_DIR/sluice-trace" io "$w/trace")
    expect_eq "$w: as many versions as with sluice alone" "$versions" "$(echo "$io" | head -1)"
    expect_eq "$w: every version holds every rank's member" \
      "$(echo "$io" | grep -c '^  members')" "$(echo "$io" | grep -c "^  members  *$n of $n declared")"
    expect_eq "$w: one tool report per rank" "$n" "$(ls "$w/tool" | wc -l)"
    for f in "$w"/tool/tool.*; do
      expect_eq "$w: the tool saw MPI_Init and MPI_Finalize once ($f)" "mpi_init 1 mpi_finalize 1" \
        "$(head -2 "$f" | tr '\n' ' ' | sed 's/ $//')"
    done
    if [ "$order" = tool-first ]; then
      expect_eq "$w: the tool sees the program's files as without sluice" "$alone" "$(program_files "$w")"
    else
      expect_eq "$w: the tool sees no write to a per-rank name" "" "$(program_files "$w" | awk '$3 != 0')"
      staged=$(cat "$w"/tool/tool.* | grep -c " $SLUICE_STAGE_DIR/m-[0-9a-f-]*\.data$" || true)
      [ "$staged" -gt 0 ] || fail "$w: the tool saw no stage file"
      echo "ok: $w: the tool saw $staged stage files"
      cbytes=$(cat "$w"/tool/tool.* | awk '$5 ~ /\.sluice\.tmp\.[0-9]+$/ {b += $4} END {print b + 0}')
      pbytes=$(echo "$plain" | awk '/^bytes/ {print $2}')
      [ "$cbytes" -ge "$pbytes" ] || fail "$w: container writes seen by the tool ($cbytes) < program bytes ($pbytes)"
      echo "ok: $w: the tool saw $cbytes bytes of container writes (program: $pbytes)"
    fi
    (cd "$w/data" && mpirun "$n" env LD_PRELOAD="$pre" SLUICE_CAPTURE="$cap" "$app" verify . "$steps" "$n")
    echo "ok: $w: a restart under the same order reads every byte back"
  done
done

# A program without MPI (ckpt_sized: sluice initializes MPI itself for the commit). Both orders:
# one collective version with every member, the restart reads every byte back. sluice hides its
# own MPI from what is above it: the tool first sees no MPI_Init; the tool after sluice is
# called by sluice and sees it once, with its MPI_Finalize.
sized="$SLUICE_APPS_DIR/ckpt_sized"
for n in 3 4; do
  for order in tool-first sluice-first; do
    pre="$tool:$SLUICE_LIB"
    seen="mpi_init 0 mpi_finalize 0"
    if [ "$order" = sluice-first ]; then
      pre="$SLUICE_LIB:$tool"
      seen="mpi_init 1 mpi_finalize 1"
    fi
    w="serial-$order$n"
    mkdir -p "$w/data" "$w/tool" "$w/trace"
    (cd "$w/data" && mpirun "$n" env LD_PRELOAD="$pre" PRELOAD_TOOL_DIR="$PWD/../tool" SLUICE_CAPTURE='ckpt.%r' \
      SLUICE_TRACE_DIR="$PWD/../trace" "$sized" write . 1000000 2345678 77)
    expect_contains "$w: the container verifies" "ok ($n members" \
      "$("$SLUICE_BIN_DIR/sluice-ckpt" verify "$w/data/ckpt.@r.sluice")"
    expect_eq "$w: one collective version" "1 checkpoint version in $n files of $n ranks" \
      "$("$SLUICE_BIN_DIR/sluice-trace" io "$w/trace" | head -1)"
    for f in "$w"/tool/tool.*; do
      expect_eq "$w: what the tool sees of MPI ($f)" "$seen" "$(head -2 "$f" | tr '\n' ' ' | sed 's/ $//')"
    done
    (cd "$w/data" && mpirun "$n" env LD_PRELOAD="$pre" SLUICE_CAPTURE='ckpt.%r' "$sized" verify . "$n" 1000000 2345678 77)
    echo "ok: $w: a restart under the same order reads every byte back"
  done
done
