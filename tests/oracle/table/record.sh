#!/usr/bin/env bash
# Record upstream's own allocator test table for one minor as JSON lines and print the file's path:
#   tests/oracle/table/record.sh 1.37 -> ${KUBECTL_DRA_CACHE:-~/.cache/kubectl-dra}/oracle/table-1.37-<hash>.jsonl
# The pinned k8s.io/dynamic-resource-allocation of that minor's oracle (tests/oracle/v<minor>/go.mod) is copied
# from the Go module cache into a scratch directory, record_test.go.in is added to its experimental package (the
# superset channel), and `go test` runs the table there; its own go.sum pins the test dependencies.
set -euo pipefail
minor="${1:?usage: record.sh 1.34|1.35|1.36|1.37}"
here="$(cd "$(dirname "$0")" && pwd)"
mod="$here/../v$minor"
cache="${KUBECTL_DRA_CACHE:-$HOME/.cache/kubectl-dra}"
version="$(cd "$mod" && go list -m -f '{{.Version}}' k8s.io/dynamic-resource-allocation)"
hash="$(cat "$here/record_test.go.in" "$0" | sha256sum | cut -c1-12)"
out="$cache/oracle/table-$minor-$version-$hash.jsonl"
if [ ! -s "$out" ]; then
  src="$(cd "$mod" && go mod download -json "k8s.io/dynamic-resource-allocation@$version" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
  work="$(mktemp -d)"
  trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
  cp -r "$src" "$work/dra" && chmod -R u+w "$work/dra"
  cp "$here/record_test.go.in" "$work/dra/structured/internal/experimental/zz_record_test.go"
  mkdir -p "$(dirname "$out")"
  echo "record.sh: running upstream's allocator table of $version" >&2
  (cd "$work/dra" && KUBECTL_DRA_RECORD="$out.tmp" GOFLAGS=-mod=mod go test -count=1 -run '^TestRecordAllocatorTable$' \
    ./structured/internal/experimental >&2)
  mv -f "$out.tmp" "$out"
fi
echo "$out"
