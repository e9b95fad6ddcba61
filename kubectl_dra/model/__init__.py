"""The snapshot layer: the immutable value gather produces and analysis reads. No I/O, no analysis."""
