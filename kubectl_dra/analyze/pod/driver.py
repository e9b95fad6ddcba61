"""The driver piece: the kubelet's own words about a pod's devices, classified, and the kubelet plugin that serves
each driver the node must serve, found among the DaemonSets and judged on that node. Pure: reads the snapshot.

Facts (../shared/reference/driver-piece.md, and k8s.io/kubernetes pkg/kubelet/cm/dra of 1.34-1.37):
- The kubelet prepares every driver of a claim's `status.allocation.devices.results` before the pod's sandbox; a
  failure is the event FailedPrepareDynamicResources "Failed to prepare dynamic resources: prepare dynamic
  resources: <error>", retried by the pod worker. Its errors come from manager.go and plugin/dra_plugin_manager.go.
- No API object says which workload serves a driver, nor whether the kubelet registered it. A kubelet plugin must
  mount the kubelet's `plugins_registry` directory (its registration socket lives there), so the DaemonSets that
  mount a hostPath ending in `plugins_registry` are the candidates (minus CSI node plugins); the link to a driver
  is as strong as the evidence for it: the driver's name in the pod template, the Helm release of a DeviceClass
  that selects the driver, or the slices' field manager in a container's command.
- The DaemonSet controller runs a pod on a node that passes the template's nodeSelector, required node affinity
  and taints, with the tolerations it adds itself (controller/daemon/util AddOrUpdateDaemonPodTolerations).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kubectl_dra.analyze.pod.daemonset import (
    coverage,
    coverage_gap,
    dict_of,
    list_of,
    node_of,
    rollout,
    template_generation,
    template_of,
    update_note,
)
from kubectl_dra.analyze.pod.plugin_find import LINK_WORDS, Seen, absent, find_plugins, managers, owned, ref
from kubectl_dra.analyze.pod.plugin_pod import CONTAINER_LINK_WORDS, count, pod_state, serving_container, state_words
from kubectl_dra.model.meta import meta_of, name_of, ns_of
from kubectl_dra.model.normalize import event_words

# skipNodeOperations (1.37 alpha DRAOptionalNodeOperations): the node operations a result's devices skip
PREPARE, UNPREPARE, SKIP_ALL = "NodePrepareResources", "NodeUnprepareResources", "*"


def drivers_of_claims(claims, skip: str | None = None) -> list[str]:
    """The drivers the kubelet must call for these allocated claims (every result's driver), in first-seen order.
    With skip (PREPARE or UNPREPARE), without the drivers the kubelet skips that call for: in one claim, a driver
    whose every result lists the operation or "*" in skipNodeOperations (k8s.io/kubernetes 1.37
    pkg/kubelet/cm/dra claiminfo.go computeDriverStates; an unknown value skips nothing). A driver is called when
    any claim calls it."""
    out: list[str] = []
    for c in claims:
        by: dict[str, bool] = {}  # driver -> every result of it in this claim skips the operation
        for r in (((c.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []:
            d = r.get("driver") if isinstance(r, dict) else None
            if isinstance(d, str) and d:
                ops = r.get("skipNodeOperations")
                skips = skip is not None and isinstance(ops, list) and (SKIP_ALL in ops or skip in ops)
                by[d] = by.get(d, True) and skips
        out += [d for d, skipped in by.items() if not skipped and d not in out]
    return out


# ---------------------------------------------------------------------------------------------------
# Judging: the plugin of one driver, on one node (the kubelet spoke) or across the cluster (no slices at all)

UNSEEN = "a kubelet plugin may also run as a host service (Bottlerocket) or in a namespace kubectl-dra cannot list"


@dataclass(frozen=True)
class Plugin:
    """What was found about the kubelet plugin of one driver: `state` says what, `message` says it in words."""

    driver: str
    node: str | None
    state: (
        str  # not-looked, not-found, not-covered, no-pod, pod-not-ready, pod-ready, pods-not-ready, publishing-nothing
    )
    message: str
    daemonset: str | None = None
    link: str | None = None
    pod: dict | None = None
    problem: bool = False  # the state explains the failure (else it is context)
    reason: str = ""  # the state's cause in a few words (devices' per-node line): the gap, the pod's state, ...
    facts: dict = field(default_factory=dict)  # failedCreate, rollout, kubeletStarted: the objects behind the words

    def to_dict(self) -> dict:
        return {
            "driver": self.driver,
            "node": self.node,
            "state": self.state,
            "daemonset": self.daemonset,
            "link": self.link,
            "linkWords": LINK_WORDS.get(self.link or ""),
            "pod": self.pod,
            **self.facts,
        }


def _not_found(seen: Seen, driver: str, node: str | None) -> Plugin:
    if seen.daemonsets_gap:
        return Plugin(driver, node, "not-looked", f"the kubelet plugin of {driver} was not looked for: "
                      f"{seen.daemonsets_gap}", reason=seen.daemonsets_gap)  # fmt: skip
    some, theirs = absent(seen, driver)
    if theirs:  # the candidates are other drivers' plugins: say whose, and that this driver's is not among them
        msg = f"no DaemonSet found that runs the kubelet plugin of {driver}: {some}; the plugin of {driver} is likely "
        msg += f"not installed ({UNSEEN})"
        why = (
            "no DaemonSet found that runs it ("
            + "; ".join(f"{t['daemonset']} is {' and '.join(d['driver'] for d in t['drivers'])}'s" for t in theirs)
            + ")"
        )
        return Plugin(driver, node, "not-found", msg, problem=True, reason=why, facts={"otherPlugins": theirs})
    return Plugin(
        driver,
        node,
        "not-found",
        f"no DaemonSet found that runs the kubelet plugin of {driver} ({some}): it is likely not installed ({UNSEEN})",
        problem=True,
        reason=f"no DaemonSet found that runs it ({some})",
    )


def _slices_on(seen: Seen, driver: str, node_name: str) -> list:
    return [
        s
        for s in seen.slices
        if (s.get("spec") or {}).get("driver") == driver and (s.get("spec") or {}).get("nodeName") == node_name
    ]


def _slices_note(seen: Seen, driver: str, node_name: str) -> str:
    """'; yet ...' when the node has ResourceSlices of the driver although the plugin runs no pod there: their
    devices look free to the scheduler, which allocates them, and the kubelet then finds no plugin."""
    here = _slices_on(seen, driver, node_name)
    if not here:
        return ""
    made = min(meta_of(s).get("creationTimestamp") or "" for s in here)
    n = len(here)
    return (
        f"; yet {n} ResourceSlice{'s' if n != 1 else ''} of {driver} for {node_name} "
        f"{'exist' if n != 1 else 'exists'}{f' (since {made})' if made else ''}, not written by a plugin pod running "
        "there now: the scheduler may allocate its devices"
    )


def _latest(events) -> dict | None:
    return max(events, key=lambda x: (x.get("time") or "", x.get("firstTime") or ""), default=None)


def _latest_failed_create(seen: Seen, ds: dict) -> dict | None:
    uid = meta_of(ds).get("uid")
    return _latest(
        e
        for e in seen.failed_creates.get((ns_of(ds), name_of(ds)), ())
        if not uid or not e["object"].get("uid") or e["object"]["uid"] == uid
    )


def _event_fact(e: dict) -> dict:
    return {"message": e.get("message"), "count": e.get("count") or 1, "firstTimestamp": e.get("firstTime"),
            "lastTimestamp": e.get("time")}  # fmt: skip


def failed_create(seen: Seen, ds: dict) -> tuple[str, str]:
    """What the DaemonSet controller said when it could not create ds's pods: ("failed", its latest FailedCreate
    event in words), ("none", "") when it said nothing (events are kept about an hour), ("unknown", why not known)."""
    e = _latest_failed_create(seen, ds)
    if e is not None:
        n = e.get("count") or 1
        when = f"{n} times since {e.get('firstTime')}, last {e.get('time')}" if n > 1 else str(e.get("time"))
        said = event_words(e.get("message") or "")
        return "failed", f"the DaemonSet controller cannot create its pods: {said} (FailedCreate, {when})"
    if seen.failed_creates_listed or (seen.failed_creates_gap is None and ns_of(ds) in seen.event_namespaces):
        return "none", ""  # read, or a file that holds the namespace's events: none of them is a FailedCreate
    why = seen.failed_creates_gap or (
        f"the input has no FailedCreate event of it (add `kubectl get events -n {ns_of(ds)} -o yaml` to it)"
    )
    return "unknown", f"its FailedCreate events were not read: {why}"


def node_not_ready(node: dict | None) -> str | None:
    """Why the node's kubelet may not answer at all: its Ready condition, when it is not True."""
    for c in list_of(dict_of(dict_of(node).get("status")).get("conditions")):
        if isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") != "True":
            since = f" since {c['lastTransitionTime']}" if c.get("lastTransitionTime") else ""
            return f"node is NotReady{since} ({c.get('reason') or 'no reason given'})"
    return None


def _restart_note(seen: Seen, driver: str, node_name: str) -> str:
    """'; ...' when the node has no ResourceSlice of the driver and its kubelet started recently (its Starting
    event, kept about an hour): a kubelet start deletes every slice of its node (pkg/kubelet/cm/dra
    wipeResourceSlices) and a plugin's come back only once it registers with the new kubelet."""
    if _slices_on(seen, driver, node_name):
        return ""
    mine = [dict_of(sl.get("spec")) for sl in seen.slices if dict_of(sl.get("spec")).get("driver") == driver]
    if mine and not any(sp.get("nodeName") for sp in mine):
        return ""  # the driver publishes no node-local slice anywhere: the kubelet wipes only those of its node
    starts = seen.kubelet_starts.get(node_name) or []
    if not starts:
        return (
            f"; whether its kubelet restarted is unknown: {seen.kubelet_starts_gap}" if seen.kubelet_starts_gap else ""
        )
    e = _latest(starts) or {}
    n = e.get("count") or 1
    times = f", {n} starts since {e.get('firstTime')}" if n > 1 else ""
    return (
        f"; the kubelet on {node_name} started at {e.get('time')} (event Starting{times}) and no ResourceSlice of "
        f"{driver} for the node exists: a kubelet start deletes the node's slices until the driver's plugin "
        "registers again, so the plugin has likely not registered with it since"
    )


def judge_on_node(seen: Seen, driver: str, node: dict | None, node_name: str, word, pre=None) -> Plugin:
    """The plugin of driver on the pod's node, after the kubelet said `word` (a kubelet.KubeletWord) about it, or
    nothing yet (None); with the node's recent kubelet start where the node has no slice of the driver. pre: what
    does not depend on the node (prepare()'s), given by judge_nodes once for every node. In a pod of several
    containers, the container that likely serves the driver is judged (plugin_pod.py)."""
    p = _judge_on_node(seen, driver, node, node_name, word, prepare(seen, driver) if pre is None else pre)
    # a restart explains a plugin that runs (or may, out of sight) yet is not registered; not one kept off the node
    restart = p.problem and p.state in ("pod-ready", "not-found", "not-looked")
    note = _restart_note(seen, driver, node_name) if restart else ""
    facts = _facts(seen, p)
    if note and (started := _latest(seen.kubelet_starts.get(node_name) or [])) is not None:
        facts["kubeletStarted"] = _event_fact(started)
    return replace(p, message=p.message + note, facts=facts)


def pods_by_node(pods) -> dict[str, list]:
    """A DaemonSet's pods by the node each is for (daemonset.node_of: its spec.nodeName, or the node the DaemonSet
    controller pinned a pod not bound yet to): at most one a node, unless one is being replaced; a bound pod first."""
    out: dict = {}
    for p in pods:
        node = node_of(p)
        if node:
            out.setdefault(node, []).append(p)
    for got in out.values():
        got.sort(key=lambda p: not dict_of(p.get("spec")).get("nodeName"))
    return out


def judge_nodes(seen: Seen, driver: str, nodes: dict) -> dict[str, Plugin]:
    """The plugin of driver on each node (name -> its Node, or None when the input has none), judged as
    judge_on_node judges it before the kubelet speaks: the DaemonSets are searched once and the plugin pods
    grouped by node once (devices asks this for every node with devices)."""
    pre = prepare(seen, driver)
    if not pre[0]:
        p = _not_found(seen, driver, None)
        return {n: replace(p, node=n) for n in nodes}
    return {n: judge_on_node(seen, driver, node, n, None, pre) for n, node in nodes.items()}


def prepare(seen: Seen, driver: str) -> tuple:
    """What judging the plugin of driver on a node needs that no node changes: the DaemonSets that run it
    (find_plugins), the first one's pods by node, and its container that likely serves the driver (or None)."""
    found = find_plugins(seen, driver)
    if not found:
        return found, {}, None
    ds = found[0][0]
    return (
        found,
        pods_by_node(owned(seen, ds)),
        serving_container(template_of(ds), driver, managers(seen).get(driver, set())),
    )


def _facts(seen: Seen, p: Plugin) -> dict:
    """The objects behind the plugin's words, for -o json: the DaemonSet controller's latest FailedCreate where it
    has no pod, and its rollout while it rolls out."""
    ds = next((d for d in seen.daemonsets if p.daemonset and ref(d) == p.daemonset), None)
    if ds is None:
        return dict(p.facts)
    out: dict = dict(p.facts)
    e = _latest_failed_create(seen, ds) if p.state in ("no-pod", "pods-not-ready") else None
    if e is not None:
        out["failedCreate"] = _event_fact(e)
    if rollout(ds) or (p.pod or {}).get("templateGeneration") not in (None, template_generation(ds)):
        st = dict_of(ds.get("status"))
        out["rollout"] = {
            "desiredNumberScheduled": st.get("desiredNumberScheduled"),
            "updatedNumberScheduled": st.get("updatedNumberScheduled"),
            "templateGeneration": template_generation(ds),
            "updateStrategy": dict_of(ds.get("spec")).get("updateStrategy"),
        }
    return out


# long: one verdict per state of the plugin on the node, each with its words
def _judge_on_node(seen: Seen, driver: str, node: dict | None, node_name: str, word, pre: tuple) -> Plugin:
    found, by_node, pick = pre
    if not found:
        p = _not_found(seen, driver, node_name)
        here = _slices_on(seen, driver, node_name)
        if p.state == "not-found" and here:
            # slices of the node that no visible plugin wrote: their publisher is out of sight (rule 5 of the research)
            made = min(meta_of(s).get("creationTimestamp") or "" for s in here) or "an unknown time"
            by = sorted(managers(seen).get(driver, set()))
            who = f" by {', '.join(by)}" if by else ""
            msg = (
                f"no DaemonSet found that runs the kubelet plugin of {driver}, yet {len(here)} ResourceSlice"
                f"{'s' if len(here) != 1 else ''} of it for {node_name} {'exist' if len(here) != 1 else 'exists'} (written{who} since "
                f"{made}): their "
                f"publisher is out of sight ({UNSEEN}), or a plugin the kubelet never registered (a never-registered "
                "plugin's slices are not wiped)"
            )
            return replace(p, message=msg)
        return p
    ds, how = found[0]
    also = f" (also {', '.join(ref(d) for d, _ in found[1:])})" if len(found) > 1 else ""
    head = f"DaemonSet {ref(ds)}{also}{rollout(ds)}"
    if node is not None:
        gap = coverage_gap(ds, node)
        if gap is not None:
            return Plugin(driver, node_name, "not-covered", f"{head} runs no pod on {node_name}: {gap}"
                          f"{_slices_note(seen, driver, node_name)}", ref(ds), how, problem=True, reason=gap)  # fmt: skip
    mine = by_node.get(node_name, [])
    if not mine:
        unseen = seen.pods_gap or (
            None
            if seen.pods_listed or by_node or ns_of(ds) in seen.pod_namespaces
            else f"the input has no pod of it (add `kubectl get pods -n {ns_of(ds)} -o yaml` to it)"
        )
        if unseen:
            return Plugin(driver, node_name, "not-looked", f"{head} serves {driver}; its pod on {node_name} was not "
                          f"looked for: {unseen}", ref(ds), how, reason=unseen)  # fmt: skip
        why = _no_pod_why(seen, ds, node)
        return Plugin(driver, node_name, "no-pod", f"{head} has no pod on {node_name}; {why}{update_note(ds, None)}"
                      f"{_slices_note(seen, driver, node_name)}", ref(ds), how, problem=True, reason=why)  # fmt: skip
    st = pod_state(mine[0], pick[0] if pick else None)
    note = update_note(ds, mine[0])
    c = st["container"]
    pod = f"its plugin pod on {node_name}, {st['pod']} of {head}"
    own = f"its container {c}, which likely serves {driver} ({CONTAINER_LINK_WORDS[pick[1]]})," if c else ""
    if st.get("bound") is False and not st["deleting"]:  # made for the node, not placed there yet
        sched = st["unscheduled"] or {}
        why = (f"the scheduler cannot place it ({sched.get('reason') or 'no reason given'}"
               f"{': ' + sched['message'] if sched.get('message') else ''})" if sched else "the scheduler has not "
               "placed it yet")  # fmt: skip
        return Plugin(driver, node_name, "pod-not-ready", f"its plugin pod for {node_name}, {st['pod']} of {head}, is "
                      f"not bound to the node yet (Pending): {why}{note}", ref(ds), how, st, problem=True,
                      reason=state_words(st, when=False))  # fmt: skip
    if not st["ready"] or st["deleting"]:
        state = "terminating" if st["deleting"] else state_words(st)
        short = "terminating" if st["deleting"] else (f"container {c}: " if c else "") + state_words(st, when=False)
        said = f"{pod}: {own} is not ready: {state}" if c and not st["deleting"] else f"{pod}, is not ready: {state}"
        return Plugin(driver, node_name, "pod-not-ready", said + note, ref(ds), how, st, problem=True,
                      reason=short)  # fmt: skip
    ready = ""
    if not st["podReady"]:  # its container is ready, another is not: Ready is the pod's, readiness each container's
        others = ", ".join(n for n in st["notReady"] if n != c) or "a readiness gate"
        ready = f"container {c} ready; the pod is not Ready: {others} not ready"
        msg = f"{pod}, is not Ready ({others} not ready), but {own} is ready"
    else:
        msg = f"{pod}, is Ready"
    started = st["startedAt"] or ""
    if word is not None and word.cls == "not-registered":
        if started and started > word.last:
            msg += (
                f" and started at {started}, after the kubelet's last report ({word.last}): the kubelet retries and "
                "should find the driver registered"
            )
            return Plugin(driver, node_name, "pod-ready", msg + note, ref(ds), how, st, reason=ready)
        here = _slices_on(seen, driver, node_name)
        publishes = (
            f"; it publishes {len(here)} ResourceSlice{'s' if len(here) != 1 else ''} for the node" if here else ""
        )
        msg += (
            f" since {started or 'an unknown time'}, before the kubelet's last report ({word.last}){publishes}: the "
            "plugin runs but the kubelet has not registered it (a kubelet --root-dir other than the plugin's "
            "registrar directory, an unsupported gRPC service, or a rejected registration); read the plugin's log"
        )
        return Plugin(driver, node_name, "pod-ready", msg + note, ref(ds), how, st, problem=True, reason=ready)
    msg += (f" since {started}" if started else "") + note
    return Plugin(driver, node_name, "pod-ready", msg, ref(ds), how, st, reason=ready)


def _no_pod_why(seen: Seen, ds: dict, node: dict | None) -> str:
    """Why a DaemonSet whose spec admits the node has no pod there: its FailedCreate event, or that none is known."""
    if node is None:
        return "the input has no Node object to compare its spec with"
    said, words = failed_create(seen, ds)
    if said == "failed":
        return f"its spec admits the node, and {words}"
    if said == "unknown":
        return f"its spec admits the node; {words}"
    return (
        "its spec admits the node, and the DaemonSet controller reported no FailedCreate (kubectl describe ds "
        f"-n {ns_of(ds)} {name_of(ds)})"
    )


def judge_publishing(seen: Seen, driver: str) -> Plugin:
    """No ResourceSlice of the driver exists anywhere: is a plugin deployed, does it run, does it publish?"""
    p = _judge_publishing(seen, driver)
    return replace(p, facts=_facts(seen, p))


def _judge_publishing(seen: Seen, driver: str) -> Plugin:
    found = find_plugins(seen, driver)
    if not found:
        return _not_found(seen, driver, None)
    ds, how = found[0]
    head = f"DaemonSet {ref(ds)}"
    st = dict_of(ds.get("status"))
    desired, ready = count(st.get("desiredNumberScheduled")), count(st.get("numberReady"))
    if desired == 0:
        if not seen.nodes:
            sel = dict_of(template_of(ds).get("nodeSelector"))
            why = f" (its nodeSelector {', '.join(f'{k}={v}' for k, v in sel.items())})" if sel else ""
            return Plugin(driver, None, "not-covered", f"{head} runs the kubelet plugin of {driver} but matches no "
                          f"node{why}: desiredNumberScheduled is 0", ref(ds), how, problem=True)  # fmt: skip
        why = _why_no_node(ds, seen.nodes)
        return Plugin(driver, None, "not-covered", f"{head} runs the kubelet plugin of {driver} but matches no node "
                      f"(desiredNumberScheduled is 0): {why}", ref(ds), how, problem=True, reason=why)  # fmt: skip
    if ready < desired:
        bad = [pod_state(p) for p in owned(seen, ds)]
        bad = [s for s in bad if not s["ready"]]
        eg = f"; e.g. {bad[0]['pod']}: {state_words(bad[0])}" if bad else ""
        said, words = failed_create(seen, ds)
        if said == "failed" or (said == "unknown" and not bad):
            eg += f"; {words}"
        return Plugin(driver, None, "pods-not-ready", f"{head} runs the kubelet plugin of {driver}: {ready} of "
                      f"{desired} pods ready{eg}", ref(ds), how, bad[0] if bad else None, problem=True)  # fmt: skip
    return Plugin(
        driver,
        None,
        "publishing-nothing",
        f"{head} runs the kubelet plugin of {driver} with {ready} of {desired} pods ready, yet no ResourceSlice of "
        f"{driver} exists: the plugin runs and publishes nothing (a driver-specific prerequisite: read its log)",
        ref(ds),
        how,
        problem=True,
    )


def _why_no_node(ds: dict, nodes) -> str:
    """Why the DaemonSet runs a pod on none of the nodes, for every node: the nodes grouped by what keeps them
    out (its nodeSelector, required node affinity and the labels it wants, an untolerated taint)."""
    groups: dict = {}
    for n in nodes:
        groups.setdefault(coverage(ds, n), []).append(name_of(n))
    out = []
    for gap, names in groups.items():
        who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"
        if len(names) > 5:
            who = f"{', '.join(names[:4])} and {len(names) - 4} more nodes"
        out.append(gap.of(who, len(names) > 1) if gap else f"its spec admits {who} (its status may not be updated yet)")
    return "; ".join(out)
