"""The driver piece names a DaemonSet as a driver's kubelet plugin only on evidence (the driver's name in its
template, the Helm release or app.kubernetes.io/instance label of the driver's DeviceClass, the slices' field
manager in its command); one that evidence ties to another driver is never this one's, not even as the only
candidate. A DaemonSet's pod made for a node and not bound yet is that node's pod; a DaemonSet that matches no node
says why for every node."""

from __future__ import annotations

from builders import dclass, node, rslice

from kubectl_dra.analyze.pod.daemonset import coverage_gap, evidence, node_of
from kubectl_dra.analyze.pod.driver import failed_create, judge_nodes, judge_on_node, judge_publishing
from kubectl_dra.analyze.pod.plugin_find import Seen, daemon_pods, find_plugins
from kubectl_dra.model.nodes import node_selector_words

NV = "dra-driver-nvidia-gpu"
HELM = {"meta.helm.sh/release-name": NV, "meta.helm.sh/release-namespace": NV}
REG = {"name": "registry", "hostPath": {"path": "/var/lib/kubelet/plugins_registry"}}


def nvidia_ds(helm=True, labels=None, affinity=None, status=None) -> dict:
    script = 'if [ "${MASK_NVIDIA_DRIVER_PARAMS}" = "true" ]; then\n  mount --bind a b\nfi\ngpu-kubelet-plugin -v 4'
    meta = {"name": f"{NV}-kubelet-plugin", "namespace": NV, "uid": "u-nv"}
    if helm:
        meta["annotations"] = dict(HELM)
    if labels:
        meta["labels"] = labels
    spec = {"volumes": [REG], "containers": [{"name": "gpus", "command": ["bash", "-c"], "args": [script]}]}
    if affinity:
        spec["affinity"] = affinity
    return {"kind": "DaemonSet", "metadata": meta, "spec": {"template": {"spec": spec}},
            "status": status or {"desiredNumberScheduled": 1, "numberReady": 1}}  # fmt: skip


def gpu_class(**meta) -> dict:
    c = dclass("gpu.nvidia.com", "device.driver == 'gpu.nvidia.com'")
    c["metadata"].update(meta)
    return c


def gpu_slice(manager=None) -> dict:
    s = rslice("node-01-gpu", [{"name": "gpu-0"}], "node-01", driver="gpu.nvidia.com")
    if manager:
        s["metadata"]["managedFields"] = [{"manager": manager, "operation": "Update"}]
    return s


def seen(ds, classes=(), slices=(), pods=(), **kw) -> Seen:
    return Seen((ds,), None, daemon_pods(pods), None, True, tuple(classes), tuple(slices), **kw)


def test_a_daemonset_of_the_helm_release_of_another_drivers_class_is_never_this_drivers():
    """The measured case: dranet's DaemonSet deleted, NVIDIA's left, the only one that mounts plugins_registry."""
    s = seen(nvidia_ds(), [gpu_class(annotations=dict(HELM)), dclass("dranet", 'device.driver == "dra.net"')])
    assert find_plugins(s, "gpu.nvidia.com")[0][1] == "helm"
    assert find_plugins(s, "dra.net") == []
    p = judge_on_node(s, "dra.net", node("node-01"), "node-01", None)
    assert (p.state, p.daemonset, p.problem) == ("not-found", None, True)
    assert f"{NV}/{NV}-kubelet-plugin, is the plugin of gpu.nvidia.com (Helm release {NV}, as DeviceClass " in p.message
    assert p.to_dict()["otherPlugins"] == [
        {"daemonset": f"{NV}/{NV}-kubelet-plugin",
         "drivers": [{"driver": "gpu.nvidia.com", "link": "helm", "evidence": f"Helm release {NV}, as DeviceClass "
                      "gpu.nvidia.com"}]}
    ]  # fmt: skip
    assert p.reason == f"no DaemonSet found that runs it ({NV}/{NV}-kubelet-plugin is gpu.nvidia.com's)"


def test_the_field_manager_of_another_drivers_slices_alone_ties_the_daemonset_to_it():
    s = seen(nvidia_ds(helm=False), slices=[gpu_slice("gpu-kubelet-plugin")])
    assert judge_nodes(s, "dra.net", {"node-01": node("node-01")})["node-01"].state == "not-found"
    # nothing ties it to any driver: the only candidate is still said to be the driver's, as likely
    bare = seen(nvidia_ds(helm=False), slices=[gpu_slice(None)])
    assert find_plugins(bare, "dra.net")[0][1] == "only"


def test_the_instance_label_shared_with_the_drivers_class_is_evidence():
    labels = {"app.kubernetes.io/instance": "gpu", "app.kubernetes.io/name": NV}
    ds = nvidia_ds(helm=False, labels=labels)
    assert evidence(ds, "gpu.nvidia.com", [gpu_class(labels=dict(labels))], set()) == (
        "labels",
        "app.kubernetes.io/instance=gpu, as DeviceClass gpu.nvidia.com",
    )
    other = gpu_class(labels={**labels, "app.kubernetes.io/name": "another-chart"})
    assert evidence(ds, "gpu.nvidia.com", [other], set()) is None


def pinned_pod(ds, node_name, scheduled=None) -> dict:
    """As the DaemonSet controller creates it: no nodeName yet, a required node affinity on metadata.name."""
    terms = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]
    return {
        "kind": "Pod",
        "metadata": {"name": "p-x", "namespace": NV, "ownerReferences": [{"kind": "DaemonSet", "uid": "u-nv",
                                                                          "name": ds["metadata"]["name"]}]},
        "spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": terms}}}},
        "status": {"phase": "Pending", "conditions": [scheduled] if scheduled else []},
    }  # fmt: skip


def test_a_pod_made_for_the_node_and_not_bound_is_that_nodes_pending_pod():
    ds = nvidia_ds()
    said = "0/3 nodes are available: 1 Too many pods, 2 node(s) didn't match Pod's node affinity/selector."
    pod = pinned_pod(ds, "node-01", {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                     "message": said})  # fmt: skip
    assert node_of(pod) == "node-01" and node_of({"spec": {"nodeName": "n"}}) == "n" and node_of({}) is None
    s = seen(ds, [gpu_class(annotations=dict(HELM))], pods=[pod])
    p = judge_on_node(s, "gpu.nvidia.com", node("node-01"), "node-01", None)
    assert p.state == "pod-not-ready" and p.problem
    assert f"is not bound to the node yet (Pending): the scheduler cannot place it (Unschedulable: {said})" in p.message
    assert p.reason == "Pending, not scheduled: Unschedulable"
    assert p.pod["bound"] is False and p.pod["unscheduled"] == {"reason": "Unschedulable", "message": said}
    fresh = judge_on_node(seen(ds, [gpu_class(annotations=dict(HELM))], pods=[pinned_pod(ds, "node-01")]),
                          "gpu.nvidia.com", node("node-01"), "node-01", None)  # fmt: skip
    assert fresh.message.endswith("(Pending): the scheduler has not placed it yet")


def test_no_advice_to_add_the_events_the_input_holds():
    ds = nvidia_ds()
    files = seen(ds, event_namespaces=frozenset({NV}))
    assert failed_create(files, ds) == ("none", "")
    said, words = failed_create(seen(ds, event_namespaces=frozenset({"default"})), ds)
    assert said == "unknown" and f"kubectl get events -n {NV}" in words


NFD = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "feature.node.kubernetes.io/pci-10de.present", "operator": "In",
                           "values": ["true"]}]},
    {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}]}}}  # fmt: skip


def test_matching_no_node_says_why_for_every_node():
    ds = nvidia_ds(affinity=NFD, status={"desiredNumberScheduled": 0, "numberReady": 0})
    nodes = (node("cpu-1"), node("cpu-2"), node("gpu-1", taints=[{"key": "dedicated", "value": "ml",
                                                                  "effect": "NoSchedule"}], **{"nvidia.com/gpu.present": "true"}))  # fmt: skip
    p = judge_publishing(seen(ds, [gpu_class(annotations=dict(HELM))], nodes=nodes), "gpu.nvidia.com")
    assert p.state == "not-covered" and p.message.endswith(
        "matches no node (desiredNumberScheduled is 0): cpu-1 and cpu-2 do not match its required node affinity (it "
        "wants feature.node.kubernetes.io/pci-10de.present=true or nvidia.com/gpu.present=true; Node Feature "
        "Discovery sets the feature.node.kubernetes.io/ labels); gpu-1 has the untolerated taint dedicated=ml:NoSchedule"
    )
    assert coverage_gap(ds, nodes[0]).startswith("node does not match its required node affinity (it wants ")


def test_node_selector_words():
    assert node_selector_words(None) == ""
    sel = {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]},
                              {"key": "b", "operator": "DoesNotExist"}]},
        {},
        {"matchExpressions": [{"key": "c", "operator": "Gt", "values": ["3"]}, {"key": "d", "operator": "Exists"}],
         "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]},
    ]}  # fmt: skip
    assert node_selector_words(sel) == "a in (1, 2) and !b or c>3 and d and metadata.name!=n1"
