# SPDX-License-Identifier: MIT
# Errors OpenCL returns at enqueue are returned at enqueue in distributed mode too (docs/DISTRIBUTED.md, "Conformance"):
# tests/apps/cl_conf_enqueue on every device (rank 0's own and remote ones) prints the same codes
# and the same buffer contents as without sluice. NDRanges that contradict reqd_work_group_size,
# non-uniform work-groups (the device has none, with and without -cl-std=CL2.0), local sizes over
# the device's limits, bad work_dim, NULL and zero global sizes (valid since OpenCL 2.1), unset
# arguments; reads, writes, copies, fills, maps and rect reads out of bounds or with bad patterns,
# overlaps and wait lists; clEnqueueMigrateMemObjects. Refused commands change nothing, and a valid one still runs.
source "$(dirname "${BASH_SOURCE[0]}")/cl_conf_lib.bash"
conf_same enqueue "$SLUICE_APPS_DIR/cl_conf_enqueue"
out=$(cat enqueue.dist.3)
# The codes are the driver's, not only the same as locally.
expect_eq "local size against reqd_work_group_size refused on every device" 3 \
  "$(grep -c 'reqd 4, local 8: rc=-54 event=no' <<<"$out")"
expect_eq "no local size with reqd_work_group_size refused" 3 "$(grep -c 'reqd 4, no local size: rc=-54' <<<"$out")"
expect_eq "non-uniform work-groups refused" 3 "$(grep -c '^  non-uniform 10 / 4: rc=-54 event=no' <<<"$out")"
expect_eq "local size over the device's work-group size refused" 3 \
  "$(grep -c "local over the device's work-group size: rc=-54" <<<"$out")"
expect_eq "work_dim 4 refused" 3 "$(grep -c 'work_dim 4: rc=-53' <<<"$out")"
expect_eq "NULL global size: a command that does nothing" 3 "$(grep -c 'null global size: rc=0 event=yes' <<<"$out")"
expect_eq "unset argument refused" 3 "$(grep -c 'an argument not set: rc=-52' <<<"$out")"
expect_eq "reads past the end refused" 3 "$(grep -c '^  read past the end: -30' <<<"$out")"
expect_eq "read of 0 bytes is a command" 3 "$(grep -c 'read of 0 bytes: 0 event made' <<<"$out")"
expect_eq "valid kernels right after the refused ones" 3 "$(grep -c 'still runs: rc=0 event=yes finish=0 sum=16' <<<"$out")"
expect_eq "migrations are commands, and keep the contents" 3 \
  "$(grep -c 'migrate to the device: 0 type 0x1206; none: -30; unknown flag: -30; to the host: 0; content undefined: 0' <<<"$out")"
expect_eq "refused commands changed nothing" 3 "$(grep -c 'nothing refused changed the buffer: sum=0' <<<"$out")"
