# SPDX-License-Identifier: MIT
# Unmodified programs find their descriptor table already grown past sluice's floor (512, or half
# the descriptor limit) at start and in a fork child, while the process has one thread: growing
# it later, once sluice's threads run, waits for an RCU grace period in the kernel (35-51 ms per
# step under 16 busy threads on a 16-core host). Checked with grep reading its own
# /proc/self/status, and python3 reading it in os.fork()'s child; without the library the table
# stays at its inherited size. The program's own numbering is unchanged: its first open is 3.
floor=$(( $(ulimit -n) / 2 < 512 ? $(ulimit -n) / 2 : 512 ))
size_of() { sed -n 's/^FDSize:[[:space:]]*//p'; }

plain=$(grep FDSize /proc/self/status | size_of)
[ "$plain" -le "$floor" ] || fail "this shell's table ($plain) is past the floor already: the test would prove nothing"

got=$(run_sluice grep FDSize /proc/self/status | size_of)
[ "$got" -gt "$floor" ] || fail "grep under sluice: table $got, not past the floor $floor"
echo "ok: grep under sluice starts with a table of $got (without sluice: $plain)"

fork_child='
import os
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    for line in open("/proc/self/status"):
        if line.startswith("FDSize:"):
            os.write(w, line.split()[1].encode())
    os._exit(0)
os.close(w)
os.waitpid(pid, 0)
print(os.read(r, 32).decode(), os.open("/dev/null", os.O_RDONLY))
'
read -r child first < <(run_sluice python3 -c "$fork_child")
[ "$child" -gt "$floor" ] || fail "python3's fork child under sluice: table $child, not past the floor $floor"
echo "ok: python3's fork child under sluice has a table of $child"
read -r _ first_plain < <(python3 -c "$fork_child")
expect_eq "python3's first open after the fork under sluice, as without it" "$first_plain" "$first"
