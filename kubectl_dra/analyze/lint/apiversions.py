"""Which resource.k8s.io versions serve which kinds, per Kubernetes minor (data, in one place).

From k8s.io/api resource/<version>/zz_generated.prerelease-lifecycle.go (introduced, deprecated, removed: the API
server stops serving a kind at its removed minor) and k8s.io/kubernetes pkg/controlplane/instance.go, which lists
resource.k8s.io v1beta1 and v1beta2 under betaAPIGroupVersionsDisabledByDefault and v1alpha3 under the alpha
versions: from 1.34 on only v1 is served unless --runtime-config enables the others."""

from __future__ import annotations

from typing import NamedTuple

GROUP = "resource.k8s.io"


class Lifecycle(NamedTuple):
    introduced: tuple[int, int]
    deprecated: tuple[int, int] | None
    removed: tuple[int, int] | None


_CORE = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")
KINDS: dict[str, dict[str, Lifecycle]] = {
    "v1": {
        **{k: Lifecycle((1, 34), None, None) for k in _CORE},
        "DeviceTaintRule": Lifecycle((1, 37), None, None),
    },
    "v1beta2": {
        **{k: Lifecycle((1, 33), (1, 36), (1, 39)) for k in _CORE},
        "DeviceTaintRule": Lifecycle((1, 36), (1, 39), (1, 42)),
    },
    "v1beta1": {k: Lifecycle((1, 32), (1, 35), (1, 38)) for k in _CORE},
    "v1alpha3": {
        "DeviceTaintRule": Lifecycle((1, 33), (1, 36), (1, 39)),
        "ResourcePoolStatusRequest": Lifecycle((1, 36), None, None),
    },
}
ON_BY_DEFAULT = frozenset({"v1"})


def _v(t: tuple[int, int]) -> str:
    return f"{t[0]}.{t[1]}"


def served(version: str, kind: str, target: tuple[int, int]) -> tuple[str, str] | None:
    """None when the target minor serves the kind at this version by default, else (code, why): DRA704 when it
    cannot serve it at all, DRA712 when only --runtime-config turns it on."""
    kinds = KINDS.get(version)
    if kinds is None:
        return "DRA704", f"{GROUP}/{version} is no API version of any Kubernetes release ({', '.join(KINDS)} are)"
    life = kinds.get(kind)
    if life is None:
        where = [v for v, ks in KINDS.items() if kind in ks]
        return "DRA704", f"{GROUP}/{version} has no kind {kind}" + (f" (it is in {', '.join(where)})" if where else "")
    if target < life.introduced:
        return "DRA704", f"{kind} is in {GROUP}/{version} from Kubernetes {_v(life.introduced)}, not {_v(target)}"
    if life.removed is not None and target >= life.removed:
        return (
            "DRA704",
            f"Kubernetes {_v(target)} no longer serves {GROUP}/{version} {kind} (removed in {_v(life.removed)})",
        )
    if version in ON_BY_DEFAULT:
        return None
    parts = [
        f"{GROUP}/{version} is off by default: the API server serves it only with --runtime-config={GROUP}/{version}=true"
    ]
    if life.deprecated is not None and target >= life.deprecated:
        parts.append(f"deprecated since {_v(life.deprecated)}")
    if life.removed is not None:
        parts.append(f"removed in {_v(life.removed)}")
    return "DRA712", "; ".join(parts)


def suggestion(kind: str, target: tuple[int, int]) -> str | None:
    """The version to write the kind as on the target minor (served by default), if there is one."""
    for version in ON_BY_DEFAULT:
        life = KINDS[version].get(kind)
        if life is not None and target >= life.introduced:
            return f"{GROUP}/{version}"
    return None
