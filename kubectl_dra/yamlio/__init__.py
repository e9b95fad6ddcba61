"""YAML in: the way Kubernetes reads it (kube.py), through yaml-rs for large texts where that reads the same
(fast.py)."""

from __future__ import annotations

from kubectl_dra.yamlio.fast import FAST_MIN_CHARS, fast_parser, fast_path_refusal

__all__ = ["FAST_MIN_CHARS", "fast_parser", "fast_path_refusal", "load_all"]


def load_all(text: str, fast_min: int = FAST_MIN_CHARS) -> list:
    """The documents of `text` as Kubernetes reads them (None documents left out); yaml.YAMLError and RecursionError
    for what libyaml refuses."""
    if len(text) >= fast_min and fast_path_refusal(text) is None:
        try:
            rs = fast_parser()
            doc = rs.loads(text, parse_datetime=False, duplicate_key_policy=rs.DuplicateKeyPolicy.LastWins)
        except Exception:
            doc = None
        if doc is not None:
            return [doc]
    import yaml

    from kubectl_dra.yamlio.kube import loader

    return [d for d in yaml.load_all(text, Loader=loader()) if d is not None]
