# SPDX-License-Identifier: MIT
# cmake -DIN=io_worker.c -DOUT=copy.c -P tsan_racy_copy.cmake: a copy of the commit's I/O threads
# whose thread hands a finished task back with a plain store (the release atomic dropped), read by
# the progress thread with its acquire load (sluice_io_done): a real data race in sluice's own
# code, for the TSan job's test of itself (tests/integration/sanitize/sanitize_tsan_race.sh).
# Fails when the source no longer has it.
file(READ ${IN} src)
set(pairs
  "__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE)" "t->done = 1")
while(pairs)
  list(POP_FRONT pairs from to)
  string(FIND "${src}" "${from}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${IN} no longer has `${from}`: update tests/tsan_racy_copy.cmake")
  endif()
  string(REPLACE "${from}" "${to}" src "${src}")
endwhile()
file(WRITE ${OUT} "${src}")
