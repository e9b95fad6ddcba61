#!/usr/bin/env bash
# Called by ../build.sh 1.38 with the build's copy of this module (go.mod, go.sum, tools.go) as $1: writes the
# stand-in for k8s.io/apiextensions-api that go.mod's `replace k8s.io/apiextensions-api => ./apiextensions-api`
# points at.
#
# Why: in 1.38 the CustomResourceDefinition types and their generated client moved out of
# k8s.io/apiextensions-apiserver into the new staging module k8s.io/apiextensions-api (apiextensions-apiserver
# v0.38 keeps `type X = apiextensionsapi.X` aliases, pkg/apis/apiextensions/v1/deprecated.go), and kube-apiserver
# and kube-controller-manager import it. The Go module proxy refuses k8s.io/apiextensions-api at every version
# ("403 ... This module version is not available", also for @v/list). So it is rebuilt from the packages it was moved
# out of, in k8s.io/apiextensions-apiserver $FROM (checked against FROM_SUM, its go.sum hash, the same version
# ../go.mod pins): pkg/apis/apiextensions/{v1,v1beta1} without the conversion to the internal types (that stays in
# apiextensions-apiserver, which registers it on top, as v0.38 does) and pkg/client/..., with the import paths
# renamed (and structured-merge-diff v6 -> v7, which apimachinery v0.38 uses).
#
# What this changes: the CRD API types (apiextensions.k8s.io) of this control plane are those of 1.37.2. Everything
# else - kube-apiserver's resource.k8s.io registry and validation, kube-scheduler's DynamicResources plugin and
# structured allocator, the controllers - is v1.38.0-beta.0 as published. kube-scheduler and kubectl do not import
# k8s.io/apiextensions-api at all. The e2e tests create no CRDs.
set -euo pipefail
dst="${1:?usage: apiextensions-api.sh BUILD_MODULE_DIR}/apiextensions-api"
FROM=k8s.io/apiextensions-apiserver@v0.37.2
FROM_SUM=h1:myaUiAlm1NRLYdpAvWYTqdgeiCepFupJiRFVVueMUYw=
info="$(cd "$(mktemp -d)" && GOFLAGS= GOTOOLCHAIN=local go mod download -json "$FROM")"
field() { printf '%s' "$info" | sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",\{0,1\}$/\1/p" | head -n1; }
sum="$(field Sum)"
[ "$sum" = "$FROM_SUM" ] || { echo "apiextensions-api.sh: $FROM has sum '$sum', expected $FROM_SUM" >&2; exit 1; }
src="$(field Dir)"
rm -rf "$dst"
n=0
while IFS= read -r f; do
  mkdir -p "$dst/$(dirname "$f")"
  sed -e 's#"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1#"k8s.io/apiextensions-api/pkg/apis/apiextensions/v1#' \
    -e 's#"k8s.io/apiextensions-apiserver/pkg/client/#"k8s.io/apiextensions-api/pkg/client/#' \
    -e 's#"sigs.k8s.io/structured-merge-diff/v6/#"sigs.k8s.io/structured-merge-diff/v7/#' \
    "$src/$f" >"$dst/$f"
  n=$((n + 1))
done < <(cd "$src" && find pkg/client pkg/apis/apiextensions/v1 pkg/apis/apiextensions/v1beta1 -name '*.go' \
  ! -name '*_test.go' ! -path 'pkg/apis/*/conversion.go' ! -path 'pkg/apis/*/zz_generated.conversion.go' | LC_ALL=C sort)
if grep -rq '"k8s.io/apiextensions-apiserver/' "$dst"; then
  echo "apiextensions-api.sh: the stand-in still imports k8s.io/apiextensions-apiserver:" >&2
  grep -rn '"k8s.io/apiextensions-apiserver/' "$dst" >&2
  exit 1
fi
# marshal.go uses nullLiteral, which conversion.go (left out) declares.
for v in v1 v1beta1; do
  printf '// apiextensions-api.sh: declared in conversion.go, which the stand-in leaves out.\n\npackage %s\n\nvar nullLiteral = []byte(`null`)\n' \
    "$v" >"$dst/pkg/apis/apiextensions/$v/zz_standin.go"
done
printf 'module k8s.io/apiextensions-api\n\ngo 1.27.0\n' >"$dst/go.mod"
echo "apiextensions-api.sh: k8s.io/apiextensions-api stand-in from $FROM ($n files)" >&2
