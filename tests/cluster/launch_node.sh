#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hydra's "ssh" for the testbed (testbed.sh writes an mpiexec that passes it as -launcher-exec):
# called as `launch_node.sh [ssh options] HOST COMMAND`, it runs COMMAND with sh -c inside node
# HOST's namespaces (mount, UTS, IPC, network, PID, time), as sshd would, in mpiexec's working
# folder. TESTBED_DIR names the testbed.
set -euo pipefail
while [ $# -gt 0 ]; do
  case $1 in
    -[46AaCfGgKkMNnqsTtVXxYy]*) shift ;;  # ssh's flags without a value (hydra passes -x)
    -[BbcDEeFIiJLlmOoPpQRSWw]) shift 2 ;; # ssh's options with a value
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "launch_node.sh: usage: launch_node.sh [ssh options] HOST COMMAND" >&2; exit 255; }
host=$1
shift
i=${host#node}
[ -n "${TESTBED_DIR:-}" ] && [ -r "$TESTBED_DIR/node$i.pid" ] || { echo "launch_node.sh: no node $host in testbed ${TESTBED_DIR:-(TESTBED_DIR unset)}" >&2; exit 255; }
read -r pid start < "$TESTBED_DIR/node$i.pid"
[ "$(awk '$3 != "Z" {print $22}' "/proc/$pid/stat" 2>/dev/null)" = "$start" ] || { echo "launch_node.sh: node $host is down" >&2; exit 255; }
exec nsenter -t "$pid" -m -u -i -n -p -T --wd="$PWD" sh -c "$*"
