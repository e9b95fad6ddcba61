#!/usr/bin/env bash
# Record upstream's own allocator test table for one minor as JSON lines and print the file's path:
#   tests/oracle/table/record.sh 1.37 -> ${KUBECTL_DRA_CACHE:-~/.cache/kubectl-dra}/oracle/table-1.37-<hash>.jsonl
# The pinned k8s.io/dynamic-resource-allocation of that minor's oracle (tests/oracle/v<minor>/go.mod) is copied
# from the Go module cache into a scratch directory, record_test.go.in and the compat file for its API are added to
# its experimental package (the superset channel), and `go test` runs the table there; its own go.sum pins the test
# dependencies. The oracle module's replace directives apply there too, and its Go toolchain (../toolchain.sh:
# 1.38 pins go1.27.3 in its go.mod).
#
# k8s.io/ktesting (allocatortesting's test context since v0.38) is refused by the Go module proxy at every version
# ("403 This module version is not available", the list too). Where the proxy does not serve the version the table
# needs, a stand-in is built from the package it was moved out of, test/utils/ktesting of k8s.io/kubernetes
# $KTESTING_FROM (checked against KTESTING_FROM_SUM, the module's go.sum hash), with its import paths renamed and
# the one method the v0.38 table uses that it lacks (TContext.WithDeadline, as WithTimeout until the deadline).
# ktesting only runs the table (subtests, logging, assertions); the allocator and what is recorded are upstream's.
set -euo pipefail
minor="${1:?usage: record.sh 1.34|1.35|1.36|1.37|1.38}"
here="$(cd "$(dirname "$0")" && pwd)"
mod="$here/../v$minor"
KTESTING_FROM=k8s.io/kubernetes@v1.37.2
KTESTING_FROM_SUM=h1:A2VDEiObzkYqFTKhSsn0ZEb0RlLEXpHWj93gi2HqEwE=
# shellcheck source=../toolchain.sh
. "$here/../toolchain.sh"
oracle_toolchain "$mod/go.mod"
cache="${KUBECTL_DRA_CACHE:-$HOME/.cache/kubectl-dra}"
version="$(cd "$mod" && go list -m -f '{{.Version}}' k8s.io/dynamic-resource-allocation)"
# v0.38 hands the allocator draapi slices and keeps no share IDs in the allocated state.
compat=compat_v1.go.in
[ "${minor#1.}" -lt 38 ] || compat=compat_draapi.go.in
hash="$(cat "$here/record_test.go.in" "$here/$compat" "$0" | sha256sum | cut -c1-12)"
out="$cache/oracle/table-$minor-$version-$hash.jsonl"
if [ ! -s "$out" ]; then
  json_field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
  src="$(cd "$mod" && go mod download -json "k8s.io/dynamic-resource-allocation@$version" | json_field Dir)"
  work="$(mktemp -d)"
  trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
  cp -r "$src" "$work/dra" && chmod -R u+w "$work/dra"
  pkg="$work/dra/structured/internal/experimental"
  cp "$here/record_test.go.in" "$pkg/zz_record_test.go"
  cp "$here/$compat" "$pkg/zz_record_compat_test.go"
  # The oracle's replacements (1.38: structured-merge-diff/v7 v7.0.1, which the proxy refuses, by v7.0.0).
  (cd "$mod" && go mod edit -json) | python3 -c '
import json, sys
for r in json.load(sys.stdin).get("Replace") or []:
    old, new = r["Old"], r["New"]
    print(old["Path"] + ("@" + old["Version"] if old.get("Version") else "") + "=" + new["Path"] + ("@" + new["Version"] if new.get("Version") else ""))
' | while read -r rep; do (cd "$work/dra" && go mod edit -replace "$rep"); done
  kt="$(cd "$work/dra" && go mod edit -json | python3 -c '
import json, sys
print(next((r["Version"] for r in json.load(sys.stdin).get("Require") or [] if r["Path"] == "k8s.io/ktesting"), ""))
')"
  if [ -n "$kt" ] && ! (cd "$work/dra" && go mod download "k8s.io/ktesting@$kt" 2>/dev/null); then
    echo "record.sh: k8s.io/ktesting@$kt is not served; using a stand-in from $KTESTING_FROM test/utils/ktesting" >&2
    info="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$KTESTING_FROM")"
    sum="$(printf '%s' "$info" | json_field Sum)"
    [ "$sum" = "$KTESTING_FROM_SUM" ] || { echo "record.sh: $KTESTING_FROM has sum $sum, expected $KTESTING_FROM_SUM" >&2; exit 1; }
    from="$(printf '%s' "$info" | json_field Dir)/test/utils/ktesting"
    (cd "$from" && find . -name '*.go' ! -name '*_test.go' ! -path './examples/*') | while read -r f; do
      mkdir -p "$work/ktesting/$(dirname "$f")"
      sed 's#"k8s.io/kubernetes/test/utils/ktesting#"k8s.io/ktesting#' "$from/$f" >"$work/ktesting/$f"
    done
    printf 'module k8s.io/ktesting\n\ngo 1.25.0\n' >"$work/ktesting/go.mod"
    cat >"$work/ktesting/zz_withdeadline.go" <<'EOF'
package ktesting

import "time"

// WithDeadline corresponds to [context.WithDeadline] (record.sh's stand-in: k8s.io/ktesting has it, the
// test/utils/ktesting it came from does not yet).
func (tCtx TContext) WithDeadline(deadline time.Time, deadlineCause string) TContext {
	return tCtx.WithTimeout(time.Until(deadline), deadlineCause)
}
EOF
    (cd "$work/dra" && go mod edit -replace "k8s.io/ktesting=../ktesting")
  fi
  mkdir -p "$(dirname "$out")"
  echo "record.sh: running upstream's allocator table of $version (Go toolchain: $oracle_go)" >&2
  (cd "$work/dra" && KUBECTL_DRA_RECORD="$out.tmp" GOFLAGS=-mod=mod go test -count=1 -run '^TestRecordAllocatorTable$' \
    ./structured/internal/experimental >&2)
  mv -f "$out.tmp" "$out"
fi
echo "$out"
