# SPDX-License-Identifier: MIT
# Event profiling times mean in distributed mode what they mean locally (docs/DISTRIBUTED.md, "Conformance"): on rank 0's
# device and on remote ones, 2 and 3 ranks, tests/apps/cl_conf_profiling finds QUEUED <= SUBMIT <=
# START <= END, QUEUED within 2 ms of the host's clock around the enqueue call (rank 0's: stamped
# there, not on the serving rank when the command arrived; a write held by a user event reached
# its rank 200 ms later), and START after the user event that held the command back. The verdicts
# are the same as without sluice and passed through.
source "$(dirname "${BASH_SOURCE[0]}")/cl_conf_lib.bash"
conf_same profiling "$SLUICE_APPS_DIR/cl_conf_profiling"
expect_eq "every verdict holds on 3 ranks (5 commands x 3 devices)" 15 \
  "$(grep -c 'ordered=1 queued at the enqueue=1 start after the user event=1' profiling.dist.3)"
expect_contains "every kernel ran" "every kernel ran: yes" "$(cat profiling.dist.3)"
