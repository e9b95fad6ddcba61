#!/usr/bin/env bash
# Build (or reuse) the upstream DRA oracle for one Kubernetes minor and print its path.
#   tests/oracle/build.sh 1.36    -> ${KUBECTL_DRA_CACHE:-$HOME/.cache/kubectl-dra}/oracle/1.36-<hash>/oracle
# The hash covers go.mod, go.sum and the Go sources, so any change rebuilds; an existing binary is reused as is.
# Modules come from the Go module proxy, pinned by go.sum. A module that needs a newer Go than the local one
# (1.38: go 1.27.0) pins its toolchain in go.mod (`toolchain go1.27.3`), which the go command fetches through
# the proxy (toolchain.sh).
set -euo pipefail
#   tests/oracle/build.sh yaml    -> .../oracle/yaml-<hash>/oracle: the YAML oracle (tests/oracle/yaml: sigs.k8s.io/yaml)
#   tests/oracle/build.sh tracker134 -> .../oracle/tracker134-<hash>/oracle: 1.34's ResourceSlice tracker applying
#                                 DeviceTaintRules (tests/oracle/tracker134: k8s.io/dynamic-resource-allocation v0.34.13)
minor="${1:?usage: build.sh 1.34|1.35|1.36|1.37|1.38|yaml|tracker134}"
here="$(cd "$(dirname "$0")" && pwd)"
dir="$here/v$minor"
sources=("$dir/shim.go" "$here/src/main.go" "$here/src/trace.go")
if [ "$minor" = yaml ] || [ "$minor" = tracker134 ]; then
  dir="$here/$minor"
  sources=("$dir/main.go")
fi
[ -f "$dir/go.mod" ] || { echo "build.sh: no oracle module for $minor ($dir)" >&2; exit 2; }
# shellcheck source=toolchain.sh
. "$here/toolchain.sh"
oracle_toolchain "$dir/go.mod"
cache="${KUBECTL_DRA_CACHE:-$HOME/.cache/kubectl-dra}"
hash="$(cat "$dir/go.mod" "$dir/go.sum" "${sources[@]}" | sha256sum | cut -c1-16)"
out="$cache/oracle/$minor-$hash"
if [ ! -x "$out/oracle" ]; then
  mkdir -p "$out"
  tmp="$out/oracle.tmp.$$"
  echo "build.sh: building oracle $minor -> $out/oracle (Go toolchain: $oracle_go)" >&2
  (cd "$dir" && GOFLAGS=-mod=readonly CGO_ENABLED=0 go build -trimpath -o "$tmp" .)
  mv -f "$tmp" "$out/oracle"
fi
echo "$out/oracle"
