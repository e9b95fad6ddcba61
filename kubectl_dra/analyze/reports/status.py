"""`kubectl dra status`: one row per pod that uses DRA, from one snapshot and one shared analysis base.

Each row is the verdict of `explain pod` for that pod (the same code, on a fork of one Analysis, so the indexes, the
CEL cache and the device inventory are built once: the cost grows with pods + devices, not their product)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from kubectl_dra.analyze.pod.dryrun import Analysis
from kubectl_dra.analyze.pod.extended import uses_dra
from kubectl_dra.analyze.pod.lifecycle import shown_phase
from kubectl_dra.analyze.reports.explain import explain_pod
from kubectl_dra.errors import DraError
from kubectl_dra.features import Semantics
from kubectl_dra.findings.model import SCHEMA_VERSION
from kubectl_dra.model.meta import meta_of, name_of, ns_of, owner_of
from kubectl_dra.model.snapshot import Snapshot
from kubectl_dra.model.times import human_age, parse_time, reference_time

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
    # When no pod of the namespace uses DRA (and the caller asked, scan's elsewhere): the other namespaces of the
    # snapshot that have some (the selector applied), with how many, most first; and whether the snapshot holds any
    # pod at all in the namespace (from files, none means the input says nothing about it)
    elsewhere: tuple[tuple[str, int], ...] = ()
    namespace_has_pods: bool = True
    # scan(keep=True): the whole judgement of the queue (Judged), for a report that also explains pods in full and
    # draws the devices the pending pods would take (overview.py): the queue judged once, not once per part
    judged: object = field(default=None, compare=False, repr=False)

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

    def plain(self) -> "ScanReport":
        """This report as plain data, which a process pickles (a fleet scan's, cli/fleet.py): the queue without its
        places, entries and preemptions (they hold the pods' analyses and the semantics) and without the judged
        analysis. Its rows, summary, exit code and document are the same."""
        from kubectl_dra.analyze.queue.judge import Queue

        q = self.queue
        queue = None if q is None else Queue(q.basis, q.order, shortfalls=q.shortfalls)
        return replace(self, queue=queue, judged=None)

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
            "elsewhere": dict(self.elsewhere),
            "queue": self.queue.to_dict() if self.queue is not None else None,
            "items": [r.to_dict() for r in self.rows],
            "semantics": self.semantics,
        }


def _picked(snap: Snapshot, sem: Semantics, namespace: str | None, selector_matches) -> tuple[list, int, bool]:
    """(the pods of the namespace that selector_matches and that use DRA, how many others it picks, whether the
    namespace has any pod)."""
    classes = list(snap.classes)
    pods, others, has_pods = [], 0, namespace is None
    for p in snap.pods:
        if namespace is not None and ns_of(p) != namespace:
            continue
        has_pods = True
        if selector_matches is not None and not selector_matches(meta_of(p).get("labels")):
            continue
        if uses_dra(p, classes, sem):
            pods.append(p)
        else:
            others += 1
    return pods, others, has_pods


def scan(
    snap: Snapshot,
    sem: Semantics,
    namespace: str | None,
    selector_matches=None,
    unseen: tuple[str, ...] = (),
    alone: bool = False,
    elsewhere: bool = False,
    keep: bool = False,
    analysis: Analysis | None = None,
) -> ScanReport:
    """Every pod in the namespace (None: all) that selector_matches (labels -> bool) and uses DRA. Unless alone,
    the pending ones are judged together with every pending pod of the snapshot, in the scheduler's order
    (analyze/queue/). elsewhere: when the namespace has none, count the pods of the other namespaces that would be
    listed there (ScanReport.elsewhere). keep: the report keeps the queue's whole judgement (ScanReport.judged).
    analysis: the Analysis of snap to start from (the exporter shares it with the device inventory), else a new one."""
    classes = list(snap.classes)
    now = reference_time(snap)
    pods, others, has_pods = _picked(snap, sem, namespace, selector_matches)
    counts = (
        _elsewhere(snap, classes, sem, selector_matches) if elsewhere and namespace is not None and not pods else {}
    )
    base = analysis if analysis is not None else Analysis(snap, sem)
    rows = []
    alone_reports: dict = {}
    errors: dict = {}
    for p in sorted(pods, key=lambda p: (ns_of(p), name_of(p))):
        fork = base.fork()
        try:
            # (a row reads the verdict, the findings' codes and the place: no body)
            report = explain_pod(snap, sem, ns_of(p), name_of(p), fork, True, body=False)
            alone_reports[(ns_of(p), name_of(p))] = (p, report, fork)
        except DraError as e:  # one pod that cannot be explained does not stop the scan
            errors[(ns_of(p), name_of(p))] = e
    queue = judged = None
    if not alone:
        from kubectl_dra.analyze.queue import judge_queue

        queue, placed = judge_queue(snap, sem, base, alone_reports, explain_pod)
        judged = Judged(queue, base) if keep else None
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
        tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        has_pods,
        judged,
    )


@dataclass(frozen=True)
class Judged:
    """The queue as scan judged it, every entry kept, and the analysis base it was judged on (its forks share the
    indexes and the CEL cache): explain_pods and device_map read it instead of judging the queue again."""

    queue: object  # queue.Queue, entries and all
    base: Analysis


def _elsewhere(snap: Snapshot, classes: list, sem: Semantics, selector_matches) -> dict[str, int]:
    """The namespaces of the snapshot with pods that selector_matches and use DRA, and how many (ScanReport.elsewhere:
    asked when the scanned namespace has none, so every one found is in another namespace)."""
    counts: dict[str, int] = {}
    for p in snap.pods:
        if selector_matches is not None and not selector_matches(meta_of(p).get("labels")):
            continue
        if uses_dra(p, classes, sem):
            counts[ns_of(p)] = counts.get(ns_of(p), 0) + 1
    return counts


def _row(p: dict, snap: Snapshot, now: datetime, state, missing, reason, codes, queue=None) -> Row:
    created = parse_time(meta_of(p).get("creationTimestamp"))
    return Row(
        ns_of(p),
        name_of(p),
        owner_of(p, snap.workloads),
        shown_phase(p),
        (p.get("spec") or {}).get("nodeName"),
        state,
        missing,
        " ".join(str(reason).split()),
        codes,
        human_age((now - created).total_seconds()) if created else "<unknown>",
        queue,
    )
