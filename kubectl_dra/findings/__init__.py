"""Coded findings: the registry (single source of truth) and the Report model."""
