"""A kubelet plugin's pod, as the driver piece judges it: its state as `kubectl get pod` shows it, and, in a pod
with several containers (NVIDIA's DaemonSet runs `gpus` for gpu.nvidia.com and `compute-domains` for
compute-domain.nvidia.com), the container that serves one driver. Pure; every field of the wrong shape reads as
absent (the input is untrusted).

What is true of a pod with several containers: the pod's Ready condition is the conjunction of its containers'
readiness (and its readiness gates), so one crash-looping container makes the pod not Ready while the others'
`ready` and `restartCount` in containerStatuses are their own. Each plugin process registers its own socket with
the kubelet, so a ready container's plugin may serve its driver while its neighbour crashes. Which container serves
which driver no API object says: the link is heuristic (the driver's name, or the binary that wrote the driver's
slices, in that container alone), and the words say "likely"."""

from __future__ import annotations

from kubectl_dra.model.meta import meta_of, name_of, ns_of

# The label of the DaemonSet template generation a pod was made from (extensions DaemonSetTemplateGenerationKey)
POD_GENERATION = "pod-template-generation"


def _d(x) -> dict:
    return x if isinstance(x, dict) else {}


def _lst(x) -> list:
    return x if isinstance(x, list) else []


def count(x) -> int:
    """A count from a status field, 0 when it is not one."""
    return x if isinstance(x, int) and not isinstance(x, bool) else 0


def container_strings(c: dict) -> list[str]:
    """What a container's spec says it runs: its command, args and literal env values."""
    out = [s for s in _lst(c.get("command")) + _lst(c.get("args")) if isinstance(s, str)]
    return out + [v for e in _lst(c.get("env")) if isinstance(v := _d(e).get("value"), str)]


def words_of(strings) -> set[str]:
    """The words of command lines, paths cut to their last part (`/usr/bin/gpu-kubelet-plugin` is the binary)."""
    return {w.rsplit("/", 1)[-1] for s in strings for w in s.split()}


CONTAINER_LINK_WORDS = {
    "named": "only its spec names the driver",
    "manager": "only its command runs the binary that wrote the driver's ResourceSlices",
}


def serving_container(template: dict, driver: str, managers: set[str]) -> tuple[str, str] | None:
    """(name, how) of the one container of a pod template with several that likely serves the driver: the only one
    whose command, args or env name the driver ("named"), else the only one whose command runs a binary that wrote
    the driver's slices ("manager"). None with one container (the pod is the plugin), or when no single container
    is singled out (the pod-level state is all there is)."""
    cs = [c for c in _lst(template.get("containers")) if isinstance(c, dict) and isinstance(c.get("name"), str)]
    if len(cs) < 2:
        return None
    named = [c for c in cs if any(driver in s for s in container_strings(c))]
    if len(named) == 1:
        return named[0]["name"], "named"
    if named or not managers:
        return None
    ran = [c for c in cs if managers & words_of(container_strings(c))]
    return (ran[0]["name"], "manager") if len(ran) == 1 else None


def pod_state(pod: dict, container: str | None = None) -> dict:
    """The plugin pod as `kubectl get pod` shows it: phase, ready, restarts, why it waits, its last termination;
    with `container` (and a status of it), that container's own readiness, restarts, waiting reason and last
    termination ("podReady" stays the pod's). "notReady": the pod's containers that are not ready; "templateGeneration":
    the DaemonSet template it was made from (daemonset.update_note)."""
    st = _d(pod.get("status"))
    mains = [c for c in _lst(st.get("containerStatuses")) if isinstance(c, dict)]
    every = [c for c in _lst(st.get("initContainerStatuses")) if isinstance(c, dict)] + mains
    pod_ready = any(_d(c).get("type") == "Ready" and _d(c).get("status") == "True" for c in _lst(st.get("conditions")))
    own = next((c for c in mains if c.get("name") == container), None) if container else None
    cs = [own] if own is not None else every
    waiting = next((_d(_d(c.get("state")).get("waiting")) for c in cs if _d(c.get("state")).get("waiting")), {})
    last = next(
        (_d(_d(c.get("lastState")).get("terminated")) for c in cs if _d(c.get("lastState")).get("terminated")), None
    )
    started = [s for c in cs if isinstance(s := _d(_d(c.get("state")).get("running")).get("startedAt"), str)]
    sched = next((_d(c) for c in _lst(st.get("conditions")) if _d(c).get("type") == "PodScheduled"), {})
    return {
        "pod": f"{ns_of(pod)}/{name_of(pod)}",
        "phase": st.get("phase") or "Pending",
        "ready": pod_ready if own is None else own.get("ready") is True,
        "podReady": pod_ready,
        "container": own.get("name") if own is not None else None,
        "containers": len(mains),
        "notReady": [str(c.get("name")) for c in mains if c.get("ready") is not True],
        "restarts": sum(count(c.get("restartCount")) for c in cs),
        "waiting": waiting.get("reason"),
        "lastTerminated": (
            {"reason": last.get("reason"), "exitCode": last.get("exitCode"), "finishedAt": last.get("finishedAt")}
            if last
            else None
        ),
        "startedAt": max((s for s in started if s), default=None),
        "deleting": bool(meta_of(pod).get("deletionTimestamp")),
        # only of a pod not bound yet: the scheduler's reason while it cannot place it (PodScheduled False)
        **(
            {}
            if _d(pod.get("spec")).get("nodeName")
            else {
                "bound": False,
                "unscheduled": (
                    {"reason": sched.get("reason"), "message": sched.get("message")}
                    if sched.get("status") == "False"
                    else None
                ),
            }
        ),
        "templateGeneration": g if isinstance(g := _d(meta_of(pod).get("labels")).get(POD_GENERATION), str) else None,
    }


def state_words(st: dict, when: bool = True) -> str:
    """ "CrashLoopBackOff, 12 restarts, last exit 1 (Error) at T" (when=False: without the time); for a pod of
    several containers judged as a whole, which are not ready; for a pod the scheduler cannot place, its reason (with
    its message when=True)."""
    words = [st["waiting"] or st["phase"]]
    unscheduled = st.get("unscheduled")
    if unscheduled:
        said = f": {unscheduled.get('message')}" if when and unscheduled.get("message") else ""
        words.append(f"not scheduled: {unscheduled.get('reason') or 'no reason given'}{said}")
    if st["restarts"]:
        words.append(f"{st['restarts']} restart{'s' if st['restarts'] != 1 else ''}")
    last = st["lastTerminated"]
    if last:
        at = f" at {last.get('finishedAt')}" if when else ""
        words.append(f"last exit {last.get('exitCode')} ({last.get('reason') or 'terminated'}){at}")
    if st["container"] is None and st["containers"] > 1 and st["notReady"]:
        words.append(f"containers not ready: {', '.join(st['notReady'])}")
    return ", ".join(str(w) for w in words)
