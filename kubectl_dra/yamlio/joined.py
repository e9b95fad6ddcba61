"""Two YAML outputs joined without `---` between them (`cat pods.yaml nodes.yaml`, `kubectl get ... >> dump.yaml`):
one document whose top-level keys (apiVersion, items, kind, metadata) repeat. Kubernetes' reader keeps the last of
each repeated key (go-yaml v2, as kubectl reads it), so every object of the earlier output would be lost without a
word and the answers built on the rest would be confidently wrong. Every reader of input files refuses a document
whose root mapping repeats a key, naming the line and the fix (a key repeated deeper inside keeps go-yaml's
last-wins: kubectl reads it so)."""

from __future__ import annotations


def repeated_root_key(node):
    """The key node that repeats an earlier key of a composed document's root mapping (None: none repeats, or the
    root is no mapping)."""
    if not node.tag.endswith(":map"):
        return None
    seen: set = set()
    for key, _ in node.value:
        value = getattr(key, "value", None)
        if not isinstance(value, str):
            continue
        if value in seen:
            return key
        seen.add(value)
    return None


def joined_problem(key: str) -> str:
    return (
        f"top-level key {key!r} appears twice in one YAML document (outputs joined without '---'?); "
        "put '---' between the outputs, or pass each file on its own"
    )
