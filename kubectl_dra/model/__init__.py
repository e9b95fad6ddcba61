"""The snapshot layer: the immutable value gather produces and analysis reads, and the object semantics of
Kubernetes' own helpers that every layer applies to it (label selectors, node selectors and taints, metadata).
No I/O, no analysis."""
