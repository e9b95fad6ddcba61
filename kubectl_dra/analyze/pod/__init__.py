"""Findings about one pod: which claims it uses (claims.py), the per-device matrices and the allocator dry-run over the
nodes it may use (dryrun.py) and the findings drawn from them (verdicts.py; request_findings.py per request), and the
pod-level paths beside the allocator: extended resources, binding conditions, the scheduler's word, pod groups,
NodeResourcesFit, the kubelet and the driver's plugin, device health, patches that predate a fix, the fields the
analysis models, the four pieces at a glance. Reads devices/ and allocator/; never reports/."""
