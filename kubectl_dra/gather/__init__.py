"""Gathering: the only layer that does I/O. It produces an immutable Snapshot."""
