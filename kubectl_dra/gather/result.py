"""What a gather is asked (LiveRequest: a command's needs, as data) and the one thing it returns (Gathered), live or
from files, watched or not: every command reads the same fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubectl_dra.model.snapshot import Snapshot

if TYPE_CHECKING:
    from kubectl_dra.gather.watch import LiveSession


@dataclass(frozen=True)
class LiveRequest:
    """What a command asks of the cluster. namespace: -n (None: the context's); all_namespaces: -A. One named pod
    or claim, a workload ((kind, API base, resource, name): its pods by its selector), or the pods a label selector
    picks (in the namespace, or every namespace).

    partial (status, devices, dump, lint): when pods may not be listed in all namespaces, list them namespace by
    namespace and keep the refusals as Gaps. everything (dump): also the workloads that own pods and the
    namespace's ResourceQuotas, and Gathered.raw: every object as the API returned it. events=False: no pod events
    (devices never reads them; from files they are dropped). pending_pods: also the pods no node is assigned to
    yet, in every namespace (the scheduler's queue, analyze/queue/); a refusal is a Gap of its own (PENDING_PODS);
    not with watch. bound_pods: also the pods bound to a node that have not finished, in every namespace (what
    NodeResourcesFit subtracts, analyze/pod/fit.py); a refusal is a Gap of its own (BOUND_PODS). drivers: the
    DaemonSets of every namespace (analyze/pod/driver.py: their pods on the nodes are among the bound pods).
    watch: the gather is followed (Gathered.session)."""

    namespace: str | None = None
    all_namespaces: bool = False
    pod_name: str | None = None
    claim_name: str | None = None
    selector: str | None = None
    workload: tuple | None = None
    partial: bool = False
    everything: bool = False
    events: bool = True
    pending_pods: bool = False
    drivers: bool = False
    bound_pods: bool = False
    watch: bool = False


@dataclass(frozen=True)
class Gathered:
    """A gather's answer. snapshot: the objects and what is known about them; namespace: the namespace the answer
    is about (-n, else the context's or the bundle's, else default; the named object's with -A); session: with
    watch, the LiveSession that follows the cluster (its snapshot() is the current state); raw: with everything
    (a live dump), every object as the API returned it, then {"discovery": ...} (gather/bundle.py)."""

    snapshot: Snapshot
    namespace: str
    session: LiveSession | None = None
    raw: tuple[dict, ...] = ()
