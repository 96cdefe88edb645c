#!/usr/bin/env bash
# verify-gen.sh fails when generated files differ from what is committed. Run by `make
# verify-gen` after regenerating; CI runs it on a clean clone.
set -euo pipefail
paths=(api config charts/apf-operator/templates/crds)
changed=$(git status --porcelain -- "${paths[@]}")
if [ -n "$changed" ]; then
  echo "Generated files are stale; run 'make manifests generate' and commit the result:" >&2
  echo "$changed" >&2
  git --no-pager diff --stat -- "${paths[@]}" >&2
  exit 1
fi
echo "generated files are up to date"
