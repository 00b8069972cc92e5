# SPDX-License-Identifier: MIT
# cmake -DIN=twophase_exec.c -DOUT=copy.c -P tsan_racy_copy.cmake: a copy of the two-phase
# executor whose write-behind thread hands a written round back with a plain store, read with a
# plain load (the atomics dropped): a real data race in sluice's own code, for the TSan job's test
# of itself (tests/integration/sanitize/sanitize_tsan_race.sh). Fails when the source no longer has them.
file(READ ${IN} src)
set(pairs
  "__atomic_store_n(&t->s->written, 1, __ATOMIC_RELEASE)" "t->s->written = 1"
  "__atomic_load_n(&s->written, __ATOMIC_ACQUIRE)" "s->written")
while(pairs)
  list(POP_FRONT pairs from to)
  string(FIND "${src}" "${from}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${IN} no longer has `${from}`: update tests/tsan_racy_copy.cmake")
  endif()
  string(REPLACE "${from}" "${to}" src "${src}")
endwhile()
file(WRITE ${OUT} "${src}")
