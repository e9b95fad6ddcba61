"""The workload kinds kubectl-dra follows, in one table: what kubectl calls each (names, short names, the
group-qualified resource), where its API lives, where its pod template is, and whether a dump lists it. Gather
derives its list paths from it, the CLI its TYPE/NAME parsing, the snapshot where the objects go, lint where a
manifest's pod spec is."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    kind: str
    group: str  # "" for the core group
    version: str
    plural: str
    short: str  # kubectl's short name ("" when it has none)
    pod_spec: tuple[str, ...]  # the path to its pod spec in an object of the kind
    listed: bool = True  # gathered (live and into a dump): the workloads that own pods

    @property
    def api_base(self) -> str:
        """The API path the kind's resources are under: /api/v1, /apis/apps/v1."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    @property
    def qualified(self) -> str:
        """The resource as kubectl names it in errors: pods, deployments.apps."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def aliases(self) -> tuple[str, ...]:
        """Every TYPE kubectl accepts for it: kind, plural and short name, bare and group-qualified."""
        names = (self.kind.lower(), self.plural, self.short)
        qualified = (f"{self.kind.lower()}.{self.group}", f"{self.plural}.{self.group}") if self.group else ()
        return tuple(n for n in (*names, *qualified) if n)


_TEMPLATE = ("spec", "template", "spec")
POD = Kind("Pod", "", "v1", "pods", "po", ("spec",), listed=False)
# The controllers whose pods kubectl-dra follows (the owners of a pod, `explain deploy/NAME`, lint's pod specs)
WORKLOADS: tuple[Kind, ...] = (
    Kind("Deployment", "apps", "v1", "deployments", "deploy", _TEMPLATE),
    Kind("ReplicaSet", "apps", "v1", "replicasets", "rs", _TEMPLATE),
    Kind("StatefulSet", "apps", "v1", "statefulsets", "sts", _TEMPLATE),
    Kind("DaemonSet", "apps", "v1", "daemonsets", "ds", _TEMPLATE),
    Kind("Job", "batch", "v1", "jobs", "", _TEMPLATE),
)
# Read by lint only: a CronJob's pods come from the Jobs it makes
CRONJOB = Kind("CronJob", "batch", "v1", "cronjobs", "cj", ("spec", "jobTemplate", "spec", "template", "spec"), False)
WORKLOAD_KINDS = frozenset(k.kind for k in WORKLOADS)
BY_KIND = {k.kind: k for k in (POD, *WORKLOADS, CRONJOB)}
