"""`kubectl dra status`: one row per pod that uses DRA, from one snapshot and one shared analysis base.

Each row is the verdict of `explain pod` for that pod (the same code, on a fork of one Analysis, so the indexes, the
CEL cache and the device inventory are built once: the cost grows with pods + devices, not their product)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone

from kubectl_dra.analyze.pod.dryrun import Analysis
from kubectl_dra.analyze.pod.extended import pod_extended_resources
from kubectl_dra.analyze.reports.explain import explain_pod
from kubectl_dra.errors import DraError
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import SCHEMA_VERSION
from kubectl_dra.model.meta import meta_of, name_of, ns_of
from kubectl_dra.model.snapshot import Snapshot

# Row order: what needs a person first.
STATES = ("Blocked", "Unknown", "OK")


@dataclass(frozen=True)
class Row:
    namespace: str
    pod: str
    owner: str | None  # Kind/name of the workload that owns the pod (a Deployment through its ReplicaSet)
    phase: str
    node: str | None
    state: str  # one of STATES
    missing: str | None  # the first missing piece (claim, class, device, node, driver) when blocked
    reason: str  # the verdict's one line
    codes: tuple[str, ...]  # the codes of the blocking (or, when open, undetermined) findings
    age: str  # since the pod was created, as kubectl get prints it
    queue: dict | None = None  # its place in the queue (queue.Place.to_dict), for a pending pod that takes part

    def to_dict(self) -> dict:
        return {
            "namespace": self.namespace,
            "pod": self.pod,
            "owner": self.owner,
            "phase": self.phase,
            "node": self.node,
            "state": self.state,
            "missing": self.missing,
            "reason": self.reason,
            "codes": list(self.codes),
            "age": self.age,
            "queue": self.queue,
        }


@dataclass(frozen=True)
class ScanReport:
    """The scan's result. unseen: what the scan could not look at (a namespace whose pods it may not list, an API it
    may not read), each one line; with any, the scan cannot say "nothing is blocked"."""

    rows: tuple[Row, ...]
    scope: dict  # {"namespace": NS or None for all, "selector": SELECTOR or None}
    semantics: dict
    unseen: tuple[str, ...] = ()
    other_pods: int = 0  # pods in scope that use no DRA
    queue: object = None  # queue.Queue: the pending pods judged together (None: --alone)

    @property
    def blocked(self) -> bool:
        return any(r.state == "Blocked" for r in self.rows) or bool(self.queue and self.queue.shortfalls)

    @property
    def determined(self) -> bool:
        return not self.unseen and not any(r.state == "Unknown" for r in self.rows)

    @property
    def summary(self) -> str:
        """One neutral line after the table: `5 pods use DRA: 1 blocked, 1 undetermined, 3 ok` (what could not be
        seen is said apart, in `unseen`)."""
        n = {s: sum(1 for r in self.rows if r.state == s) for s in STATES}
        pods = f"{len(self.rows)} pod{'' if len(self.rows) == 1 else 's'}"
        verb = "uses" if len(self.rows) == 1 else "use"
        return f"{pods} {verb} DRA: {n['Blocked']} blocked, {n['Unknown']} undetermined, {n['OK']} ok"

    def to_dict(self) -> dict:
        n = {s: sum(1 for r in self.rows if r.state == s) for s in STATES}
        return {
            "apiVersion": SCHEMA_VERSION,
            "kind": "Status",
            "scope": self.scope,
            "summary": {
                "pods": len(self.rows),
                "blocked": n["Blocked"],
                "unknown": n["Unknown"],
                "ok": n["OK"],
                "podsWithoutDRA": self.other_pods,
                "determined": self.determined,
            },
            "unseen": list(self.unseen),
            "queue": self.queue.to_dict() if self.queue is not None else None,
            "items": [r.to_dict() for r in self.rows],
            "semantics": self.semantics,
        }


def uses_dra(pod: dict, classes: list[dict], sem: Semantics) -> bool:
    """The pod has ResourceClaims (named or from templates) or asks for a DRA-backed extended resource (a class maps
    it and DRAExtendedResource is on: with the gate off it is a device plugin's resource)."""
    if (pod.get("spec") or {}).get("resourceClaims"):
        return True
    if not classes:
        return False
    ext = pod_extended_resources(pod, classes, sem)
    return ext.gate and bool(ext.requests)


def owner_of(pod: dict, workloads: tuple = ()) -> str | None:
    """Kind/name of the pod's controller; a ReplicaSet's Deployment when the ReplicaSet is known or its name is the
    Deployment's plus the pod-template-hash (as the Deployment controller names it)."""
    ref = next((r for r in meta_of(pod).get("ownerReferences") or [] if r.get("controller")), None)
    if ref is None:
        return None
    kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    if kind == "ReplicaSet":
        for w in workloads:
            if w.get("kind") == "ReplicaSet" and name_of(w) == name and ns_of(w) == ns_of(pod):
                up = next((r for r in meta_of(w).get("ownerReferences") or [] if r.get("controller")), None)
                if up is not None:
                    return f"{up.get('kind')}/{up.get('name')}"
                return f"{kind}/{name}"
        h = (meta_of(pod).get("labels") or {}).get("pod-template-hash")
        if h and name.endswith("-" + h) and len(name) > len(h) + 1:
            return f"Deployment/{name[: -len(h) - 1]}"
    return f"{kind}/{name}"


def _parse_time(text) -> datetime | None:
    """RFC 3339 as the API writes it (seconds or microseconds, Z)."""
    if not isinstance(text, str) or not text.endswith("Z"):
        return None
    try:
        return datetime.fromisoformat(text[:-1]).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def human_age(seconds: float) -> str:
    """kubectl's HumanDuration (k8s.io/apimachinery/pkg/util/duration), as in its AGE column."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"  # up to 2 s of clock skew counts as now
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = s // 3600
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 24 * 8:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    if h < 24 * 365 * 8:
        d = h // 24
        return f"{d // 365}y{d % 365}d" if d % 365 else f"{d // 365}y"
    return f"{h // 24 // 365}y"


def reference_time(snap: Snapshot) -> datetime:
    """Now, for a live snapshot; for a dump, its newest timestamp (ages are as of the dump, not of today)."""
    if snap.observed_at:
        t = _parse_time(snap.observed_at)
        if t is not None:
            return t
    stamps = [meta_of(o).get("creationTimestamp") for g in (snap.pods, snap.claims, snap.workloads) for o in g]
    stamps += [ev.get("time") for ev in snap.events]  # normalised events (model/normalize.py)
    times = [t for t in map(_parse_time, stamps) if t is not None]
    return max(times) if times else datetime.now(timezone.utc)


def scan(
    snap: Snapshot,
    sem: Semantics,
    namespace: str | None,
    selector_matches=None,
    unseen: tuple[str, ...] = (),
    alone: bool = False,
) -> ScanReport:
    """Every pod in the namespace (None: all) that selector_matches (labels -> bool) and uses DRA. Unless alone,
    the pending ones are judged together with every pending pod of the snapshot, in the scheduler's order
    (queue.py)."""
    classes = list(snap.classes)
    now = reference_time(snap)
    pods, others = [], 0
    for p in snap.pods:
        if namespace is not None and ns_of(p) != namespace:
            continue
        if selector_matches is not None and not selector_matches(meta_of(p).get("labels")):
            continue
        if uses_dra(p, classes, sem):
            pods.append(p)
        else:
            others += 1
    base = Analysis(snap, sem)
    rows = []
    alone_reports: dict = {}
    errors: dict = {}
    for p in sorted(pods, key=lambda p: (ns_of(p), name_of(p))):
        fork = base.fork()
        try:
            alone_reports[(ns_of(p), name_of(p))] = (p, explain_pod(snap, sem, ns_of(p), name_of(p), fork, True), fork)
        except DraError as e:  # one pod that cannot be explained does not stop the scan
            errors[(ns_of(p), name_of(p))] = e
    queue = None
    if not alone:
        from kubectl_dra.analyze.queue import judge_queue

        queue, placed = judge_queue(snap, sem, base, alone_reports)
        # the rows' pods only, and without the dry-run's entries (each holds its pod's analysis)
        queue = replace(queue.within({f"{ns}/{name}" for ns, name in alone_reports}), entries=())
        for k, report in placed.items():
            if k in alone_reports:
                alone_reports[k] = (alone_reports[k][0], report, None)
    for p in sorted(pods, key=lambda p: (ns_of(p), name_of(p))):
        key = (ns_of(p), name_of(p))
        if key in errors:
            rows.append(_row(p, snap, now, "Unknown", None, errors[key].message, ()))
            continue
        r = alone_reports[key][1]
        v = r.verdict
        state = "Unknown" if not v.determined else "Blocked" if v.blocked else "OK"
        if state == "Blocked":
            codes = tuple(dict.fromkeys(f.code for f in r.findings if f.blocking))
        elif state == "Unknown":
            from kubectl_dra.findings.model import UNDETERMINED

            codes = tuple(dict.fromkeys(f.code for f in r.findings if f.code in UNDETERMINED))
        else:
            codes = ()
        rows.append(_row(p, snap, now, state, v.missing if v.blocked else None, v.summary, codes, r.body.get("queue")))
    rows.sort(key=lambda r: (STATES.index(r.state), r.namespace, r.pod))
    return ScanReport(
        tuple(rows),
        {"namespace": namespace, "selector": None},
        sem.to_dict(),
        tuple(unseen),
        others,
        queue,
    )


def _row(p: dict, snap: Snapshot, now: datetime, state, missing, reason, codes, queue=None) -> Row:
    created = _parse_time(meta_of(p).get("creationTimestamp"))
    return Row(
        ns_of(p),
        name_of(p),
        owner_of(p, snap.workloads),
        str((p.get("status") or {}).get("phase") or "Unknown"),
        (p.get("spec") or {}).get("nodeName"),
        state,
        missing,
        " ".join(str(reason).split()),
        codes,
        human_age((now - created).total_seconds()) if created else "<unknown>",
        queue,
    )
