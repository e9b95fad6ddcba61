"""Priority does not free devices: kube-scheduler 1.34-1.38 never preempts pods to free devices. The DynamicResources
plugin has no PreFilterExtensions (a victim's devices stay allocated in the preemption dry-run) and every DRA
Filter failure is UnschedulableAndUnresolvable, which DefaultPreemption skips ("Preemption is not helpful for
scheduling"). A pod blocked by devices that lower-priority pods hold waits for them to finish; saying so keeps a
user from raising its priority for nothing."""

from __future__ import annotations

from kubectl_dra.findings.model import Finding, make
from kubectl_dra.findings.stages import Stage
from kubectl_dra.model.meta import priority_of


def preemption_finding(an, pod: dict, analyses, findings) -> Finding | None:
    """DRA434 when the pod is blocked by devices in use (DRA404) and some of them are held by pods of lower
    priority than its own."""
    if not any(f.code == "DRA404" for f in findings) or "state" not in an.memo:
        return None
    mine = priority_of(pod)
    owners = an.memo["state"][0].owners
    held: dict = {}  # claim ref -> a device it holds that the pod could use
    for a in analyses:
        if a.allocated:
            continue
        for m in a.matrices.values():
            for v in m:
                if v.stage is Stage.IN_USE:
                    for ref in owners.get(v.entry.did, ()):
                        held.setdefault(ref, v.entry.id)
    lower, unseen = [], []
    for ref, device in held.items():
        ns, _, name = ref.partition("/")
        claim = an.idx.claims.get((ns, name)) or {}
        for r in (claim.get("status") or {}).get("reservedFor") or []:
            if r.get("resource") != "pods":
                continue
            holder = an.idx.pods.get((ns, r.get("name")))
            if holder is None:  # live, explain pod reads its own pod and the pending ones, not every running pod
                unseen.append((f"{ns}/{r.get('name')}", device))
            elif priority_of(holder) < mine:
                lower.append((f"{ns}/{r.get('name')}", priority_of(holder), device))
    if not lower:
        if not unseen or mine <= 0:
            return None
        shown = ", ".join(f"{p} holds {d}" for p, d in unseen[:3]) + (" ..." if len(unseen) > 3 else "")
        return make(
            "DRA434",
            f"devices it could use are held by other pods ({shown}); whatever their priority, kube-scheduler does "
            f"not preempt pods to free devices, so this pod's priority ({mine}) does not help",
            holders=[{"pod": p, "priority": None, "device": d} for p, d in unseen[:20]],
        )
    shown = ", ".join(f"{p} (priority {prio}) holds {d}" for p, prio, d in lower[:3])
    more = f" and {len(lower) - 3} more" if len(lower) > 3 else ""
    return make(
        "DRA434",
        f"devices it could use are held by pods of lower priority: {shown}{more}; kube-scheduler does not preempt "
        f"pods to free devices, so its priority ({mine}) does not help",
        holders=[{"pod": p, "priority": prio, "device": d} for p, prio, d in lower[:20]],
    )
