#!/usr/bin/env bash
# go-install.sh installs a Go command at a pinned version as a versioned binary, e.g.
# bin/controller-gen-v0.23.0. The versioned name is the cache: make skips the rule when it exists.
#
# Usage: hack/go-install.sh <target path> <package> <version> [extra -ldflags]
set -euo pipefail
target=$1 pkg=$2 version=$3 ldflags=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "building $(basename "$target") from $pkg@$version"
GOBIN=$tmp CGO_ENABLED=0 go install -trimpath -ldflags "-s -w $ldflags" "$pkg@$version"
# The binary is named after the last path element, or the one before a major-version suffix
# (sigs.k8s.io/kustomize/kustomize/v5 installs "kustomize").
name=$(basename "$pkg")
if [[ $name =~ ^v[0-9]+$ ]]; then name=$(basename "$(dirname "$pkg")"); fi
mkdir -p "$(dirname "$target")"
mv "$tmp/$name" "$target"
