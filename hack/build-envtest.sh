#!/usr/bin/env bash
# build-envtest.sh builds the control-plane binaries envtest needs (kube-apiserver, etcd and
# kubectl) from their Go modules, because release downloads are not reachable from the machines
# this project is built on. The binaries land in setup-envtest's store layout:
#
#   $OUT/k8s/<version>-linux-amd64/{kube-apiserver,etcd,kubectl}
#
# A binary that already reports the wanted version is not rebuilt, so a warm run costs ~0 s.
#
# Usage: hack/build-envtest.sh <kubernetes version, e.g. 1.36.3> <output dir> [--without-kubectl]
#          [--etcd-from <dir>]
#
# --without-kubectl builds kube-apiserver only, no kubectl (test/skew's older control plane runs
# no kubectl; the newest version's kubectl serves every suite), which saves a few minutes cold.
# kube-apiserver and kubectl are built with Kubernetes's providerless tag (as its own providerless
# CI build is): no in-tree cloud providers, which envtest never configures. Up to 1.30 those
# were still in the tree (GCE's compute API, Azure's and vSphere's SDKs: 240 of kube-apiserver
# 1.29's 1,983 packages, the GCE API ones among the largest Go packages there are); from 1.31 the
# tag changes nothing.
# etcd is the version k8s.io/kubernetes requires (go.etcd.io/etcd/server/v3 in its go.mod), built
# in the same go build as kube-apiserver, with the same dependency versions.
# --etcd-from copies <dir>/etcd instead of building the etcd this version requires: test/skew
# runs the oldest kube-apiserver on the newest etcd (kube-apiserver is etcd's v3 API client, which
# newer etcd servers keep serving; the operator never talks to etcd), which saves etcd's build.
set -euo pipefail

KUBE_VERSION=${1:?kubernetes version, e.g. 1.36.3}
OUT=${2:?output dir}
shift 2
WITH_KUBECTL=1
ETCD_FROM=
while [ $# -gt 0 ]; do
  case "$1" in
  --without-kubectl) WITH_KUBECTL=0 ;;
  --etcd-from)
    ETCD_FROM=${2:?--etcd-from needs a directory holding etcd}
    shift
    ;;
  *) echo "build-envtest.sh: unknown option $1 (want --without-kubectl or --etcd-from <dir>)" >&2; exit 2 ;;
  esac
  shift
done
MINOR=$(echo "$KUBE_VERSION" | cut -d. -f2)
GOOS=$(go env GOOS)
GOARCH=$(go env GOARCH)
DEST="$OUT/k8s/${KUBE_VERSION}-${GOOS}-${GOARCH}"
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)

# grep reads the whole output (no -q): with pipefail, grep -q exiting at the first match can
# kill the writer with SIGPIPE and make a cached binary look stale.
has_version() { # binary, expected substring of its --version output
  [ -x "$1" ] && "$1" --version 2>/dev/null | grep -- "$2" >/dev/null
}

ldflags_kube() {
  local f=""
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    f+=" -X ${pkg}.gitVersion=v${KUBE_VERSION} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${MINOR}"
  done
  echo "-s -w${f}"
}

# kubernetes_gomod prints the path of k8s.io/kubernetes@v$KUBE_VERSION's go.mod in the module
# cache (downloading it when missing).
kubernetes_gomod() {
  (cd "$1" && go mod download -json "k8s.io/kubernetes@v${KUBE_VERSION}" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
}

# copy_etcd puts $ETCD_FROM/etcd in place of this version's own etcd.
copy_etcd() {
  if [ ! -x "$ETCD_FROM/etcd" ]; then
    echo "build-envtest.sh: --etcd-from $ETCD_FROM: no etcd there (build that version first)" >&2
    exit 1
  fi
  if cmp -s "$ETCD_FROM/etcd" "$DEST/etcd"; then
    echo "etcd from $ETCD_FROM: cached"
    return
  fi
  cp "$ETCD_FROM/etcd" "$DEST/etcd.tmp" && mv "$DEST/etcd.tmp" "$DEST/etcd"
  echo "etcd: $("$DEST/etcd" --version | head -1), copied from $ETCD_FROM"
}

# write_module writes the build module into $1: k8s.io/kubernetes at $KUBE_VERSION with every
# staging module at its published version, the commands to build (tools.go), and etcd's main
# (etcd/main.go) when etcd is one of them.
write_module() {
  local work=$1 gomod=$2 with_etcd=$3
  {
    echo "module envtestbuild"
    grep -E '^(go|godebug) ' "$gomod"
    echo "require k8s.io/kubernetes v${KUBE_VERSION}"
    # Every staging module k8s.io/kubernetes replaces with a local path is published at
    # v0.<minor>.<patch>; point the replace there instead (sample-* modules are not published).
    grep -E '^\s*k8s.io/[a-z0-9-]+ => ./staging/' "$gomod" | grep -v 'k8s.io/sample-' |
      awk -v v="v0.${KUBE_VERSION#*.}" '{print "replace " $1 " => " $1 " " v}'
  } >"$work/go.mod"
  cat >"$work/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  [ "$with_etcd" = 1 ] || return 0
  mkdir -p "$work/etcd"
  cat >"$work/etcd/main.go" <<'GO'
// Command etcd is etcd's server, built from its Go module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
}

# build_control_plane builds whichever of kube-apiserver, kubectl and etcd are missing or of
# another version, in one go build of one module: etcd is the server/v3 version k8s.io/kubernetes
# requires, built with the dependency versions kube-apiserver is built with (as Kubernetes's
# integration tests run it), so that the packages both link (gRPC, protobuf, etcd's client and
# API, zap, Prometheus's client, OpenTelemetry) are compiled once, and one go build schedules the
# three compilations and links together.
build_control_plane() {
  local work gomod etcd_version targets=() names=()
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  gomod=$(kubernetes_gomod "$work")
  if has_version "$DEST/kube-apiserver" "v${KUBE_VERSION}"; then
    echo "kube-apiserver v${KUBE_VERSION}: cached"
  else
    targets+=(k8s.io/kubernetes/cmd/kube-apiserver) names+=(kube-apiserver)
  fi
  if [ "$WITH_KUBECTL" = 1 ]; then
    if [ -x "$DEST/kubectl" ] && "$DEST/kubectl" version --client 2>/dev/null | grep "v${KUBE_VERSION}" >/dev/null; then
      echo "kubectl v${KUBE_VERSION}: cached"
    else
      targets+=(k8s.io/kubernetes/cmd/kubectl) names+=(kubectl)
    fi
  fi
  local with_etcd=0
  if [ -z "$ETCD_FROM" ]; then
    etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2; exit}' "$gomod")
    if has_version "$DEST/etcd" "etcd Version: ${etcd_version#v}"; then
      echo "etcd ${etcd_version}: cached"
    else
      with_etcd=1 targets+=(./etcd) names+=("etcd ${etcd_version}")
    fi
  fi
  [ ${#targets[@]} -gt 0 ] || return 0
  write_module "$work" "$gomod" "$with_etcd"
  (
    cd "$work"
    echo "building ${names[*]} (v${KUBE_VERSION}'s) from Go modules (several minutes when cold)"
    GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true
    GOFLAGS=-mod=mod go mod download
    mkdir out
    CGO_ENABLED=0 GOFLAGS=-mod=mod go build -p 2 -trimpath -tags providerless -ldflags "$(ldflags_kube)" \
      -o out/ "${targets[@]}"
  )
  local b
  for b in "$work"/out/*; do mv "$b" "$DEST/$(basename "$b")"; done
  if [ "$with_etcd" = 1 ] && ! has_version "$DEST/etcd" "etcd Version: ${etcd_version#v}"; then
    echo "build-envtest.sh: the etcd built is not ${etcd_version}: $("$DEST/etcd" --version | head -1)" >&2
    exit 1
  fi
}

[ -z "$ETCD_FROM" ] || copy_etcd
build_control_plane
echo "envtest binaries in $DEST"
