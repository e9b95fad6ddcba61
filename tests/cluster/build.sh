#!/usr/bin/env bash
# Build (or reuse) etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubectl
# from the Go module proxy at the version pinned in go.mod/go.sum.
#   build.sh          the default control plane: go.mod here (k8s.io/kubernetes v1.37.2)
#   build.sh 1.38     the module in v1.38/ (k8s.io/kubernetes v1.38.0-beta.0): the four Kubernetes
#                     binaries built with the Go toolchain its go.mod pins (tests/oracle/toolchain.sh),
#                     in a copy of the module that v1.38/apiextensions-api.sh completes; etcd is the
#                     default one (go.mod here, local Go)
# Output: $KUBECTL_DRA_CACHE/cluster/<k8s version>-<hash>/bin (printed on stdout, last line).
# The hash covers go.mod, go.sum and this script (with a version: also every file of its
# directory), so a change to any of them rebuilds.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
cache="${KUBECTL_DRA_CACHE:-$HOME/.cache/kubectl-dra}"
minor_arg="${1:-}"
if [ -n "$minor_arg" ]; then
  vdir="$here/v$minor_arg"
  [ -f "$vdir/go.mod" ] || { echo "build.sh: no control-plane module for $minor_arg ($vdir/go.mod)" >&2; exit 2; }
  k8s_version="$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3} $1=="k8s.io/kubernetes" && $2 ~ /^v1\./ {print $2}' "$vdir/go.mod" | head -1)"
  hash="$( (cat go.mod go.sum build.sh; cd "$vdir" && find . -type f | LC_ALL=C sort | while IFS= read -r f; do echo "$f"; cat "$f"; done) | sha256sum | cut -c1-12)"
else
  k8s_version="$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3} $1=="k8s.io/kubernetes" && $2 ~ /^v1\./ {print $2}' go.mod | head -1)"
  hash="$(cat go.mod go.sum build.sh | sha256sum | cut -c1-12)"
fi
out="$cache/cluster/${k8s_version}-${hash}"
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl)
ok=1
for b in "${bins[@]}"; do [ -x "$out/bin/$b" ] || ok=0; done
if [ "$ok" = 1 ]; then
  echo "cluster binaries up to date in $out/bin" >&2
  echo "$out/bin"
  exit 0
fi
minor="${k8s_version#v1.}"; minor="${minor%%.*}"
pkg=k8s.io/component-base/version
cgo=k8s.io/client-go/pkg/version
ld="-s -w"
for p in $pkg $cgo; do
  ld="$ld -X $p.gitVersion=${k8s_version} -X $p.gitMajor=1 -X $p.gitMinor=${minor} -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
tmp="$(mktemp -d "$cache/cluster/.build.XXXXXX" 2>/dev/null || { mkdir -p "$cache/cluster"; mktemp -d "$cache/cluster/.build.XXXXXX"; })"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
echo "building Kubernetes ${k8s_version} control plane into $out (cold builds take 10-25 min on 2 cores)" >&2
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false"
if [ -n "$minor_arg" ]; then
  # The version's module, copied next to the output and completed by its hook (1.38: the stand-in for
  # k8s.io/apiextensions-api that its go.mod replaces with ./apiextensions-api).
  src="$tmp/.src"
  mkdir -p "$src"
  cp "$vdir/go.mod" "$vdir/go.sum" "$vdir"/*.go "$src/"
  for hook in "$vdir"/*.sh; do [ -e "$hook" ] && bash "$hook" "$src"; done
  # shellcheck source=../oracle/toolchain.sh
  . "$here/../oracle/toolchain.sh"
  oracle_toolchain "$vdir/go.mod"
  echo "Go toolchain for $k8s_version: $oracle_go" >&2
  (cd "$src" && go build -trimpath -ldflags "$ld" -o "$tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kubectl)
  rm -rf "$src"
  GOTOOLCHAIN=local go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
else
  go build -trimpath -ldflags "$ld" -o "$tmp/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kubectl
  go build -trimpath -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3
fi
mkdir -p "$out"
rm -rf "$out/bin"
mv "$tmp" "$out/bin"
trap - EXIT
echo "built in $(( $(date +%s) - start ))s" >&2
echo "$out/bin"
