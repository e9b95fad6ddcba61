"""YAML in: the way Kubernetes reads it (kube.py), through yaml-rs for large texts where that reads the same
(fast.py)."""

from __future__ import annotations

from kubectl_dra.yamlio.fast import FAST_MIN_CHARS, fast_parser, fast_path_refusal

__all__ = ["FAST_MIN_CHARS", "fast_parser", "fast_path_refusal", "load_all"]


def load_all(text: str, fast_min: int = FAST_MIN_CHARS, refuse_joined: bool = True) -> list:
    """The documents of `text` as Kubernetes reads them (None documents left out); yaml.YAMLError and RecursionError
    for what libyaml refuses, and (refuse_joined) for a document whose root mapping repeats a key: two outputs joined
    without `---` (yamlio/joined.py)."""
    if len(text) >= fast_min and fast_path_refusal(text) is None:
        try:
            rs = fast_parser()
            policy = rs.DuplicateKeyPolicy.Error if refuse_joined else rs.DuplicateKeyPolicy.LastWins
            doc = rs.loads(text, parse_datetime=False, duplicate_key_policy=policy)
        except Exception:  # an error of yaml-rs (a repeated key among them): the reference decides and words it
            doc = None
        if doc is not None:
            return [doc]
    import yaml

    from kubectl_dra.yamlio.kube import loader

    return [d for d in yaml.load_all(text, Loader=loader(refuse_joined)) if d is not None]
