"""Which namespace a command looks in: decided here once, the same for live, files, bundles and stdin.

The rule, as kubectl's: `-n NS` wins; else the namespace the input carries (live: the kubeconfig context's; a
`kubectl dra dump` bundle: the one it was dumped from); else `default`. With `-A` a bare NAME is looked up in every
namespace of the input: found in one, that one; in several, an error naming them (pass -n); in none, not found.
A name not found where the command looked says where else the input has it, so `-n` is one step away."""

from __future__ import annotations

from kubectl_dra.errors import DraError
from kubectl_dra.model.kinds import WORKLOADS

# kind -> what kubectl calls it in "not found" errors, and the Snapshot field that holds it
_RESOURCES = {
    "Pod": ("pods", "pods"),
    "ResourceClaim": ("resourceclaims.resource.k8s.io", "claims"),
    **{k.kind: (k.qualified, "workloads") for k in WORKLOADS},
}


def qualified(kind: str) -> str:
    """The resource as kubectl names it in errors: pods, resourceclaims.resource.k8s.io, deployments.apps."""
    return _RESOURCES[kind][0]


def base_namespace(flag: str | None, carried: str | None) -> str:
    """The namespace of the scope: -n, else the input's own (context or bundle), else default."""
    return flag or carried or "default"


def namespaces_of(snap, kind: str, name: str) -> list[str]:
    """Every namespace of the input that holds a `kind` named `name`, sorted."""
    items = getattr(snap, _RESOURCES[kind][1])
    return sorted(
        {
            (o.get("metadata") or {}).get("namespace") or ""
            for o in items
            if o.get("kind", kind) == kind and (o.get("metadata") or {}).get("name") == name
        }
    )


def locate(snap, kind: str, name: str, namespace: str, all_namespaces: bool) -> str:
    """The namespace the named object is looked up in. Without -A it is `namespace`; with -A the one namespace of
    the input that has it (several or none is an error)."""
    if not all_namespaces:
        return namespace
    return only_namespace(kind, name, namespaces_of(snap, kind, name))


def only_namespace(kind: str, name: str, found: list[str]) -> str:
    """-A with a bare name: the one namespace that has it (found: the namespaces that do); none or several is an
    error, as kubectl's."""
    if not found:
        raise DraError(f'{qualified(kind)} "{name}" not found in any namespace')
    if len(found) > 1:
        raise DraError(f'{kind.lower()} "{name}" exists in several namespaces ({", ".join(sorted(found))}); pass -n')
    return found[0]


def not_found(snap, kind: str, name: str, namespace: str) -> DraError:
    """kubectl's "not found" error, with the namespaces where the input does have that name."""
    msg = f'{qualified(kind)} "{name}" not found in namespace "{namespace}"'
    elsewhere = [ns for ns in namespaces_of(snap, kind, name) if ns != namespace]
    if len(elsewhere) == 1:
        msg += f" (namespace {elsewhere[0]} has one: pass -n {elsewhere[0]})"
    elif elsewhere:
        msg += f" (namespaces {_first(elsewhere)} have one: pass -n)"
    return DraError(msg)


def found_elsewhere(counts: dict[str, int], counted: str = "") -> str:
    """What the other namespaces of the input hold of what a command looked for where it found none: "7 in
    ml-team, 2 in team-b" (the most first, five at most; counted: what was counted, when it needs saying), and
    how to look there."""
    order = sorted(counts, key=lambda ns: (-counts[ns], ns))
    listed = [f"{counts[ns]} in {ns}" for ns in order]
    where = f"-n {order[0]}" if len(order) == 1 else "-n NAMESPACE"
    return f"{_first(listed, 'namespaces')}{', ' + counted if counted else ''}: pass {where} or -A"


def _first(items: list[str], unit: str = "") -> str:
    """The first five items, and how many more."""
    more = len(items) - 5
    return ", ".join(items[:5]) + (f" and {more} more{' ' + unit if unit else ''}" if more > 0 else "")
