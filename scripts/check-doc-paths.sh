#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every source path the docs name exists: a path under runtime/, shim/, tools/, tests/, scripts/
# or bench/ in README.md or docs/*.md must name a file or folder of the tree, or be the stem of
# one (`stripe.{c,h}`, `dist_*.c`: something starts with it). A moved file then fails here
# instead of leaving a doc that sends the next engineer nowhere. Run by integration.build_doc_paths,
# also on a tree made to fail.
#   check-doc-paths.sh [SOURCE_DIR]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
bad=0
while IFS=: read -r doc path; do
  p=${path%%[.,)]}
  while [ "$p" != "${p%[.,)]}" ]; do p=${p%[.,)]}; done
  [ -e "$p" ] && continue
  compgen -G "$p*" >/dev/null && continue
  echo "check-doc-paths: $doc names $p, which is not in the tree" >&2
  bad=1
done < <(grep -oE '\b(runtime|shim|tools|tests|scripts|bench)/[A-Za-z0-9_./-]+' README.md docs/*.md | sort -u)
exit $bad
