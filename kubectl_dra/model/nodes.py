"""Node selection, as k8s.io/component-helpers nodeaffinity and the scheduler's node filters do it."""

from __future__ import annotations


class NodeSelectorError(ValueError):
    """A node selector that Kubernetes would refuse to evaluate."""


def _label_requirement(req: dict, labels: dict) -> bool:
    key = req.get("key", "")
    op = req.get("operator", "")
    values = req.get("values") or []
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise NodeSelectorError(f"{op} requires exactly one value for key {key!r}")
        try:
            want = int(values[0])
        except ValueError:
            raise NodeSelectorError(f"invalid value {values[0]!r} for {op} on key {key!r}") from None
        if not present:
            return False
        try:
            have = int(labels[key])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    raise NodeSelectorError(f"{op!r} is not a valid node selector operator")


def _field_requirement(req: dict, node: dict) -> bool:
    key = req.get("key", "")
    if key != "metadata.name":
        raise NodeSelectorError(f"{key!r} is not a valid node field selector key")
    op = req.get("operator", "")
    values = req.get("values") or []
    name = (node.get("metadata") or {}).get("name", "")
    if op == "In":
        if len(values) != 1:
            raise NodeSelectorError("matchFields In requires exactly one value")
        return name in values
    if op == "NotIn":
        if len(values) != 1:
            raise NodeSelectorError("matchFields NotIn requires exactly one value")
        return name not in values
    raise NodeSelectorError(f"{op!r} is not a valid node field selector operator")


def node_selector_matches(selector: dict | None, node: dict | None) -> bool:
    """v1.NodeSelector: terms are ORed; an empty term selects nothing; requirements within a term are ANDed."""
    if node is None:
        return False
    labels = (node.get("metadata") or {}).get("labels") or {}
    for term in (selector or {}).get("nodeSelectorTerms") or []:
        exprs = term.get("matchExpressions") or []
        fields = term.get("matchFields") or []
        if not exprs and not fields:
            continue
        if all(_label_requirement(r, labels) for r in exprs) and all(_field_requirement(r, node) for r in fields):
            return True
    return False


def _requirement_words(req: dict) -> str:
    """One requirement as a label selector writes it: k=v, k in (a, b), k notin (a), k, !k, k>n, k<n."""
    key, op = str(req.get("key", "")), req.get("operator", "")
    values = [str(v) for v in req.get("values") or []]
    if op == "In":
        return f"{key}={values[0]}" if len(values) == 1 else f"{key} in ({', '.join(values)})"
    if op == "NotIn":
        return f"{key}!={values[0]}" if len(values) == 1 else f"{key} notin ({', '.join(values)})"
    if op in ("Exists", "DoesNotExist"):
        return key if op == "Exists" else f"!{key}"
    if op in ("Gt", "Lt") and len(values) == 1:
        return f"{key}{'>' if op == 'Gt' else '<'}{values[0]}"
    return f"{key} {op} ({', '.join(values)})"


def node_selector_words(selector: dict | None) -> str:
    """A v1.NodeSelector in words: each term's requirements joined by "and", the terms by "or" (an empty term,
    which selects nothing, is left out); "" when no term selects anything."""
    terms = []
    for term in (selector or {}).get("nodeSelectorTerms") or []:
        if not isinstance(term, dict):
            continue
        reqs = [r for k in ("matchExpressions", "matchFields") for r in term.get(k) or [] if isinstance(r, dict)]
        if reqs:
            terms.append(" and ".join(_requirement_words(r) for r in reqs))
    return " or ".join(terms)


def node_matches(node: dict | None, node_name: str, all_nodes: bool, selector: dict | None) -> bool:
    """structured.NodeMatches: nodeName, else allNodes, else nodeSelector, else nothing."""
    if node_name:
        return node is not None and (node.get("metadata") or {}).get("name") == node_name
    if all_nodes:
        return True
    if selector is not None:
        return node_selector_matches(selector, node)
    return False


def tolerates(toleration: dict, taint: dict) -> bool:
    """Toleration matching, the same rule for node taints (core/v1 ToleratesTaint) and device taints
    (resourceclaim.ToleratesTaint): empty effect or key match any; Exists ignores the value."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    return op == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def pod_node_rejection(pod: dict, node: dict) -> str | None:
    """Why the scheduler's node filters (NodeName, NodeAffinity, TaintToleration, NodeUnschedulable)
    would reject this node for the pod, or None if they would not."""
    spec = pod.get("spec") or {}
    meta = node.get("metadata") or {}
    name = meta.get("name", "")
    if spec.get("nodeName") and spec["nodeName"] != name:
        return f"pod is bound to node {spec['nodeName']}"
    labels = meta.get("labels") or {}
    for k, v in (spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return f"node does not match the pod's nodeSelector {k}={v}"
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if required is not None:
        try:
            ok = node_selector_matches(required, node)
        except NodeSelectorError as e:
            return f"the pod's required node affinity is invalid: {e}"
        if not ok:
            return "node does not match the pod's required node affinity"
    tolerations = spec.get("tolerations") or []
    node_spec = node.get("spec") or {}
    if node_spec.get("unschedulable") and not any(
        tolerates(t, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}) for t in tolerations
    ):
        return "node is unschedulable (cordoned)"
    for taint in node_spec.get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not any(tolerates(t, taint) for t in tolerations):
            return f"node has the untolerated taint {taint.get('key')}={taint.get('value', '')}:{taint.get('effect')}"
    return None


# The taints the node lifecycle controller keeps in step with a node's state (a cordon, its Ready condition)
STATE_TAINTS = ("node.kubernetes.io/unschedulable", "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def node_state_lifted(node: dict) -> dict:
    """The node as if its state let pods on: not cordoned, without the lifecycle controller's taints. A pod that
    such a node would take is kept off the real one by the node's state only, not by its own constraints."""
    spec = dict(node.get("spec") or {})
    spec.pop("unschedulable", None)
    spec["taints"] = [t for t in spec.get("taints") or [] if not (isinstance(t, dict) and t.get("key") in STATE_TAINTS)]
    return {**node, "spec": spec}
