"""kubectl-dra: explain why a pod's Dynamic Resource Allocation claims are (not) allocated."""

__version__ = "0.1.0"
