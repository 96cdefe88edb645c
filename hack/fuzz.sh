#!/usr/bin/env bash
# fuzz.sh runs every Go fuzz target of the module for a bounded time each (default 20s), one
# after the other (go test -fuzz accepts one target per run). Usage: hack/fuzz.sh [duration]
set -euo pipefail
fuzztime=${1:-20s}
cd "$(dirname "$0")/.."
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "== $pkg $target ($fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
  done
done
