"""Every finding code kubectl-dra can emit: the single source for messages, hints and docs/codes/*.md.

Codes are stable and never reused. Ranges follow the pipeline:
  DRA0xx outcome and assumptions, DRA1xx gathering, DRA2xx claims and classes, DRA3xx CEL,
  DRA4xx devices (allocation dry-run), DRA5xx nodes, DRA6xx kubelet and driver.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Rule:
    code: str
    name: str  # kebab-case, names the problem, not the fix
    severity: str  # "error", "warning", "info"
    blocking: bool  # does it keep the pod from getting its devices?
    missing: str | None  # which of the pieces it points at: claim, class, device, node, driver
    summary: str
    hint: str
    explanation: str
    retired: str = ""  # why the code is no longer emitted (codes are never reused)


_RULES = [
    Rule(
        code="DRA001",
        name="claim-allocated",
        severity="info",
        blocking=False,
        missing=None,
        summary="The claim is allocated; each request shows the device it got.",
        hint="Nothing to do for this claim.",
        explanation="The scheduler allocated devices to the claim (`status.allocation`). kubectl-dra lists which device "
        "each request got and, for the devices that were not chosen, why.",
    ),
    Rule(
        code="DRA002",
        name="claim-allocatable",
        severity="info",
        blocking=False,
        missing=None,
        summary="The claim is not allocated yet, but a dry-run of the allocator finds devices for it now.",
        hint="Wait for the scheduler's next attempt; if the pod stays Pending, check the pod's other scheduling constraints.",
        explanation="kubectl-dra ran the allocator of the cluster's Kubernetes version against the current ResourceSlices "
        "and allocated claims and found a node and devices. Allocations the scheduler has in flight are not "
        "visible in the API, so a device may be taken between the dry-run and the scheduler's attempt.",
    ),
    Rule(
        code="DRA003",
        name="semantics-assumed",
        severity="info",
        blocking=False,
        missing=None,
        summary="The Kubernetes version and feature gates the analysis assumed.",
        hint="Pass --kubernetes-version and --feature-gates to match the cluster's kube-scheduler.",
        explanation="Whether a device is allocatable depends on the scheduler's version and feature gates (for example "
        "device taints, partitionable devices and consumable capacity are off by default before 1.36). Live, "
        "kubectl-dra reads the API server's version; the scheduler's own gates cannot be read through the API.",
    ),
    Rule(
        code="DRA004",
        name="subrequest-fallback",
        severity="info",
        blocking=False,
        missing=None,
        summary="A firstAvailable request is (or would be) satisfied by a later subrequest, not the first one.",
        hint="If the first subrequest is the one you want, look at why its devices were rejected.",
        explanation="With `firstAvailable`, the allocator tries the subrequests in order and keeps the first one that leads "
        "to a complete allocation of every claim of the pod.",
    ),
    Rule(
        code="DRA005",
        name="scheduler-disagrees",
        severity="error",
        blocking=False,
        missing=None,
        summary="kube-scheduler's latest word on the pod and kubectl-dra's analysis disagree about its devices.",
        hint="Compare the scheduler's message with the analysis and the likely causes in the finding's evidence (-o json): "
        "match --kubernetes-version/--feature-gates to the scheduler, or run again after its next attempt.",
        explanation="kubectl-dra compares its dry-run with what the scheduler last said (the newest FailedScheduling, "
        "BindingConditionsPending or Scheduled event, else the PodScheduled condition). When the scheduler "
        "reports a DRA reason (`cannot allocate all claims`, a DynamicResources plugin error) for every node "
        "but the dry-run finds devices, or the scheduler placed the pod while the dry-run finds none, one of "
        "them sees something the other does not: a feature or field the analysis does not model, a version or "
        "feature-gate skew, objects that changed after the scheduler's last attempt, or allocations the "
        'scheduler has in flight. The answer is then undetermined (exit 2), never "nothing blocks".',
    ),
    Rule(
        code="DRA006",
        name="scheduling-gated",
        severity="error",
        blocking=True,
        missing=None,
        summary="The pod has scheduling gates: the scheduler does not try to schedule it until they are removed.",
        hint="Find the controller that owns the gate (its name usually says which) and why it has not removed it.",
        explanation="`spec.schedulingGates` keeps a pod out of the scheduling queue (condition PodScheduled=False, reason "
        "SchedulingGated). kubectl-dra still dry-runs the pod's claims and shows what the allocator would do "
        "once the gates are gone.",
    ),
    Rule(
        code="DRA007",
        name="other-scheduler",
        severity="warning",
        blocking=False,
        missing=None,
        summary="The pod names a scheduler other than default-scheduler; the analysis models kube-scheduler.",
        hint="Check the named scheduler's own logs and events; kubectl-dra's verdict holds only if it runs the "
        "upstream DynamicResources plugin with the assumed version and feature gates.",
        explanation="`spec.schedulerName` picks which scheduler places the pod. kubectl-dra ports the allocator and the "
        "DynamicResources plugin of kube-scheduler; a second scheduler may use other rules or none.",
    ),
    Rule(
        code="DRA016",
        name="field-not-modelled",
        severity="error",
        blocking=False,
        missing=None,
        summary="An object the verdict depends on sets a field that kubectl-dra does not model yet.",
        hint="Treat the verdict as unknown; compare with the scheduler's events. The evidence names the object and field.",
        explanation="kubectl-dra classifies every field of the resource.k8s.io/v1 kinds of each supported minor (checked "
        "against the Go types): modelled, ignored (no input to allocation, such as driver parameters), or not "
        "modelled yet (for example node-allocatable resources). A claim, DeviceClass or "
        "ResourceSlice that sets one of the last makes the verdict undetermined (exit 2) instead of an answer "
        "that may be wrong. Only slices whose devices pass a request's class selectors count.",
    ),
    Rule(
        code="DRA017",
        name="feature-gate-skew",
        severity="error",
        blocking=False,
        missing=None,
        summary="The objects show a feature that the assumed feature gates have off: the cluster's gates differ.",
        hint="Pass --feature-gates with the gate named in the message (=true) to match the cluster's kube-scheduler.",
        explanation="Some objects exist only when a gate is on (for example a claim owned by a PodGroup needs "
        "DRAWorkloadResourceClaims in kube-controller-manager). The scheduler's own gates cannot be read through "
        "the API, so kubectl-dra cannot tell whether it has the gate on too: the verdict is undetermined (exit 2) "
        "until --feature-gates says which.",
    ),
    Rule(
        code="DRA018",
        name="nodes-not-in-snapshot",
        severity="error",
        blocking=False,
        missing=None,
        summary="The input has no Node objects, and the dry-run found no node for the claims: with the real nodes it may.",
        hint="Include the nodes in the dump (kubectl get nodes -o yaml >> dump.yaml), or run against the cluster.",
        explanation="Offline dumps often leave out the nodes. kubectl-dra then infers one node per `nodeName` of the "
        "ResourceSlices (and of the pods), with no labels. Devices on slices that select nodes by label "
        "(`nodeSelector`) or reach `allNodes` have no inferred node to go with, and the pod's own node "
        "constraints cannot be checked. When the per-device checks leave candidates but the dry-run on the "
        "inferred nodes finds no place, the verdict is undetermined (exit 2) rather than a block that the real "
        "nodes might not show.",
    ),
    Rule(
        code="DRA019",
        name="workload-pods-missing",
        severity="error",
        blocking=False,
        missing=None,
        summary="The workload wants pods, none exist, and nothing the API shows says why.",
        hint="Check the workload's controller (kube-controller-manager) and admission (webhooks, policies): "
        "kubectl describe the workload and its events.",
        explanation="`explain deploy/NAME` (sts, rs, ds, job) explains a workload through its pods. Without any, kubectl-dra "
        "looks for the reasons it can see: the controller's `FailedCreate` events, ResourceQuotas on the "
        "devices or extended resources the pod template asks for, a missing ResourceClaimTemplate, and dry-runs "
        "the pod template as a new pod. When none of these blocks, why the pods are missing is not visible to it "
        "(a controller that is not running, a webhook, a pod that was created and deleted), so the verdict is "
        "undetermined (exit 2), never 'nothing blocks'.",
    ),
    Rule(
        code="DRA020",
        name="scheduler-patch-predates-fix",
        severity="warning",
        blocking=False,
        missing=None,
        summary="The server runs a patch release older than an allocator fix that matters for this claim.",
        hint="Upgrade the control plane to the patch named in the message, or check the scheduler's own events: until "
        "then its answer may differ from this one.",
        explanation="kubectl-dra ports the newest patch of each minor. Some verdict-changing allocator bugs were fixed in patch "
        "releases (kubectl_dra/patches.py lists them with their pull requests: counters leaking from rejected "
        "candidates, counter caches keyed by pool name, shared devices' counters ignored, a nil pool for "
        "allocationMode All, an int overflow of the claim's device count, a DeviceTaintRule without a selector "
        "tainting every device). When the API server reports a patch that predates such a fix, and the claim is "
        "in the situation the bug needs, the verdict is undetermined (exit 2): kube-scheduler, which runs that "
        "patch, may answer otherwise. The scheduler's version is assumed to be the API server's.",
    ),
    Rule(
        code="DRA021",
        name="scheduler-blocks-outside-dra",
        severity="warning",
        blocking=False,
        missing=None,
        summary="kube-scheduler's latest attempt failed on grounds outside DRA (CPU, memory, affinity, taints, volumes...).",
        hint="Fix what the scheduler names (`kubectl describe pod` shows its events): DRA is not what keeps the pod "
        "Pending, and waiting for the scheduler's next attempt will not change that by itself.",
        explanation="kubectl-dra models the DynamicResources plugin, not the scheduler's other plugins. When the newest "
        "FailedScheduling event (or the PodScheduled condition) names no DRA reason, for example `0/3 nodes are "
        "available: 3 Insufficient cpu.`, the scheduler has rejected the pod before or beside DRA. kubectl-dra "
        "then says so beside its own answer. Where that answer already blocks the pod (for example NodeResourcesFit, "
        "DRA504) the scheduler's words are the same story; where the dry-run has a node on which the claims fit "
        "and every filter it models passes, the two disagree and the verdict is undetermined (DRA022); otherwise "
        "(no pending claim to place) the verdict is OK only for DRA and the summary names the scheduler's message. "
        "A message that names DRA for some nodes and other reasons for the rest is compared with the dry-run "
        "instead (DRA005, DRA022).",
    ),
    Rule(
        code="DRA022",
        name="scheduler-filter-not-modelled",
        severity="error",
        blocking=False,
        missing=None,
        summary="The scheduler rejects the nodes where the claims fit for a reason kubectl-dra does not model.",
        hint="Read the scheduler's reason in the message (pod anti-affinity, topology spread, host ports, volume "
        "limits, ...) and fix that; kubectl-dra's verdict stays open until the scheduler tries again.",
        explanation="The scheduler's latest `0/N nodes are available` names other filters than DRA for some nodes or for all, "
        "while kubectl-dra finds the claims allocatable on a node that passes every filter it models "
        "(node name, selector, affinity, taints, cordons, NodeResourcesFit). One of the filters it does not model "
        "(InterPodAffinity, PodTopologySpread, NodePorts, volume filters) may be what rejects that node, so the "
        'verdict is undetermined (exit 2), never "nothing blocks".',
    ),
    Rule(
        code="DRA023",
        name="pool-status-disagrees",
        severity="warning",
        blocking=False,
        missing=None,
        summary="A ResourcePoolStatusRequest's device counts for a pool differ from kubectl-dra's count of the same "
        "pool, counted the way the controller counts.",
        hint="Create a new ResourcePoolStatusRequest for the pool and compare again: a difference that stays is a "
        "difference in how the two read the cluster (tell kubectl-dra's maintainers, with a kubectl dra dump).",
        explanation="kube-controller-manager (gate DRAResourcePoolStatus, resource.k8s.io/v1alpha3) fills in a "
        "ResourcePoolStatusRequest once, when it is created, and never again: its counts are as of its condition's "
        "time. `kubectl dra devices` counts the same pool from the snapshot as the controller does: total, every "
        "device of the pool's slices at its newest generation; allocated, the distinct devices that ResourceClaims' "
        "allocation results name (AdminAccess left out; a shared device once); unavailable, the devices with a "
        "NoSchedule or NoExecute taint, their own or a DeviceTaintRule's; available, total minus allocated minus "
        "unavailable (a tainted allocated device is subtracted twice, as upstream does). Health reports, used-up "
        "counters and invalid pools are not upstream's unavailable. A difference is named count by count with both "
        "numbers. Usually the cluster changed since the request was answered (a claim allocated or freed, a slice "
        "republished, a taint added); a request still pending, one that failed, or a pool upstream left without "
        "counts (an incomplete pool's validationError) is not compared.",
    ),
    Rule(
        code="DRA701",
        name="selector-does-not-compile",
        severity="error",
        blocking=False,
        missing=None,
        summary="A CEL selector does not compile (syntax or type error).",
        hint="Fix the expression; the message has cel-go's wording and the position.",
        explanation="The API server checks selectors when objects are created, but a manifest that is not applied yet, or one written for another version's CEL environment, is only checked at apply time. kubectl-dra compiles every selector of DeviceClasses, ResourceClaims and ResourceClaimTemplates with the Kubernetes CEL environment of the target version and maps cel-go's position to the file's line and column.",
    ),
    Rule(
        code="DRA702",
        name="cel-cost-exceeded",
        severity="error",
        blocking=False,
        missing=None,
        summary="A CEL selector's estimated cost is over the Kubernetes limit.",
        hint="Simplify the expression (fewer nested comprehensions, shorter lists).",
        explanation="Kubernetes rejects a selector whose estimated cost exceeds the per-expression limit; the linter reports it before apply.",
    ),
    Rule(
        code="DRA703",
        name="unknown-device-attribute",
        severity="warning",
        blocking=False,
        missing=None,
        summary="A selector reads an attribute or capacity that no device in the reference inventory publishes.",
        hint="Check the spelling (the message suggests the closest name) and the domain; a driver that stopped publishing it makes the selector fail at run time.",
        explanation="A typo such as memmory, a missing driver domain, or an attribute a driver stopped publishing makes every device fail the selector (or raise 'no such key'). The reference inventory is the cluster's ResourceSlices (with a kubeconfig) or a dump (--from-file); without one the check is skipped and the output says so.",
    ),
    Rule(
        code="DRA704",
        name="api-version-not-served",
        severity="error",
        blocking=False,
        missing=None,
        summary="The target Kubernetes version cannot serve the manifest's resource.k8s.io version for its kind.",
        hint="Write the object in a version the target serves (resource.k8s.io/v1: requests[].exactly, ...).",
        explanation="Each resource.k8s.io version serves its kinds from one minor to the minor that removes it (k8s.io/api's "
        "prerelease lifecycle): v1beta1 is removed in 1.38, v1beta2 in 1.39; DeviceTaintRule is in v1 from 1.37 only. "
        "A manifest the target cannot serve stops applying on upgrade. The target is --kubernetes-version, else the "
        "reference server's version, else the newest released minor.",
    ),
    Rule(
        code="DRA705",
        name="misplaced-field",
        severity="error",
        blocking=False,
        missing=None,
        summary="A field sits where the API does not read it (tolerations under the claim's spec, a v1 request in the v1beta1 "
        "shape, resourceClaims under a container).",
        hint="Move the field to where the API reads it; the message names the place.",
        explanation="Device tolerations are per request; resource.k8s.io/v1 reads a request's deviceClassName, selectors, count, "
        "allocationMode, adminAccess, tolerations and capacity under requests[].exactly (v1beta1 had them on the "
        "request, and has no exactly); a pod's resourceClaims belong to the pod spec and a container names them under "
        "resources.claims. Elsewhere the field is unknown: with strict validation kubectl refuses it, without it the "
        "field is dropped and the object is not what the file says.",
    ),
    Rule(
        code="DRA706",
        name="taint-rule-broad-selector",
        severity="warning",
        blocking=False,
        missing=None,
        summary="A DeviceTaintRule with no or an empty deviceSelector.",
        hint="Give the rule a deviceSelector (driver, pool, device) that names the devices to taint.",
        explanation="An empty selector taints every device in the cluster; with NoExecute the eviction controller deletes every pod that uses a DRA device. A rule without a selector matches nothing from 1.37.1 but every device on 1.34-1.36 and 1.37.0 (kubernetes/kubernetes#141648). The blast radius is counted against the reference inventory.",
    ),
    Rule(
        code="DRA707",
        name="duplicate-extended-resource-name",
        severity="warning",
        blocking=False,
        missing=None,
        summary="Two DeviceClasses map the same extendedResourceName.",
        hint="Keep one class per extended resource name.",
        explanation="The scheduler maps an extended resource name to one class only (the newest; ties by name): pods asking for it get that class's devices, whatever the other class selects.",
    ),
    Rule(
        code="DRA708",
        name="unresolved-reference",
        severity="error",
        blocking=False,
        missing=None,
        summary="A request names a DeviceClass, or a pod a ResourceClaimTemplate, that neither the given files nor the reference define.",
        hint="Create the object, or fix the name.",
        explanation="A missing class blocks the claim (DRA211) and a missing template keeps the pod's claim from being created (DRA202) at run time; the linter finds them before apply.",
    ),
    Rule(
        code="DRA709",
        name="attribute-type-mismatch",
        severity="warning",
        blocking=False,
        missing=None,
        summary="A selector compares an attribute with a literal of another type (a version with a string, a number with a bool).",
        hint='Compare versions with semver("1.2.3") (or isGreaterThan, compareTo), numbers with numbers.',
        explanation="CEL has no implicit conversions: a version attribute compared with a string is a `no such overload` error at "
        "run time (every device fails the selector), and == between different types is false. The attribute's type "
        "comes from the reference inventory (what the devices publish: string, int, bool or version).",
    ),
    Rule(
        code="DRA710",
        name="extended-resource-name-collides",
        severity="warning",
        blocking=False,
        missing=None,
        summary="A DeviceClass's extendedResourceName is also a device plugin's resource on some nodes.",
        hint="Pick a name no device plugin advertises, or remove the device plugin from the nodes that publish DRA devices.",
        explanation="On a node whose status.allocatable has the resource (a device plugin), the scheduler serves a pod's request "
        "for it from the node's allocatable (NodeResourcesFit), not through the DeviceClass; where both manage the "
        "same hardware, one GPU can be given to a device-plugin pod and to a DRA claim (explain pod reports it as "
        "DRA226). The nodes come from the reference inventory.",
    ),
    Rule(
        code="DRA711",
        name="dra-and-device-plugin",
        severity="warning",
        blocking=False,
        missing=None,
        summary="A pod asks for devices through DRA and through a device plugin's resource of the same vendor.",
        hint="Ask for the devices one way: a claim (or the class's extendedResourceName) or the device plugin's "
        "resource; run one of the two on a node.",
        explanation="The kubelet's device manager hands out a device plugin's resource (nvidia.com/gpu) and the DRA driver "
        "(gpu.nvidia.com) prepares claimed devices; neither sees what the other gave out, so where both manage the "
        "same hardware one GPU can go to two containers. The vendor match is the resource's domain against the "
        "driver's name; with a reference inventory only nodes that advertise the resource and publish the driver's "
        "devices count, and they are named.",
    ),
    Rule(
        code="DRA712",
        name="api-version-off-by-default",
        severity="warning",
        blocking=False,
        missing=None,
        summary="The manifest's resource.k8s.io version is served only when --runtime-config turns it on.",
        hint="Write the object as resource.k8s.io/v1.",
        explanation="From 1.34 kube-apiserver serves resource.k8s.io/v1 by default and lists v1beta1 and v1beta2 among the beta "
        "versions disabled by default (v1alpha3 among the alpha ones): a cluster without "
        "--runtime-config=resource.k8s.io/<version>=true refuses the manifest. The message says when the version was "
        "deprecated and when it is removed.",
    ),
    Rule(
        code="DRA101",
        name="permission-denied",
        severity="warning",
        blocking=False,
        missing=None,
        summary="kubectl-dra could not read some objects: the answer covers only what it could read.",
        hint="Grant get/list/watch on the named resource (see docs/rbac.md) or run with a more privileged context.",
        explanation="The API server refused a read. kubectl-dra never writes to a cluster and needs only get, list and watch "
        "on pods, events, nodes, resourceclaims, resourceclaimtemplates, deviceclasses and resourceslices. "
        "Conclusions that depend on the unread objects are reported as unknown rather than guessed.",
    ),
    Rule(
        code="DRA102",
        name="resource-api-unavailable",
        severity="error",
        blocking=True,
        missing=None,
        summary="The API server does not serve resource.k8s.io, so no DRA object can be read.",
        hint="Use a cluster with Dynamic Resource Allocation (Kubernetes 1.34+ serves resource.k8s.io/v1).",
        explanation="Discovery did not list resource.k8s.io/v1, v1beta2 or v1beta1.",
    ),
    Rule(
        code="DRA103",
        name="analysis-incomplete",
        severity="error",
        blocking=False,
        missing=None,
        summary="A permission or API the analysis needs is missing, so kubectl-dra cannot say whether the claim can get devices.",
        hint="Grant the permission the message names (see docs/rbac.md); the exit code is 2 until then.",
        explanation="Without ResourceSlices (or DeviceClasses) no device can be checked; without DeviceTaintRules, where "
        "the scheduler applies them (1.35+ with DRADeviceTaintRules, 1.34 with DRADeviceTaints), any device may be "
        "tainted by a rule that could not be read. kubectl-dra prints what it could conclude and exits 2 rather than "
        "guessing a verdict.",
    ),
    Rule(
        code="DRA104",
        name="input-incomplete",
        severity="warning",
        blocking=False,
        missing=None,
        summary="The input lacks a kind, or a field the API server always writes, that this answer depends on, so "
        "kubectl-dra leaves the answer open.",
        hint="Take every kind the answer reads: kubectl get pods,nodes,events,daemonsets,resourceclaims,"
        "resourceclaimtemplates,deviceclasses,resourceslices -A -o yaml, or better a kubectl dra dump.",
        explanation="A `kubectl get` that leaves out one kind gives no sign of it: an empty list keeps no kind. So a "
        "`--from-file` input (not a `kubectl dra dump` bundle, which records what it read) that holds no "
        "ResourceSlice, DeviceClass, ResourceClaim, ResourceClaimTemplate or Event at all is taken as one that did not "
        "ask for that kind, and each answer that depends on it is left open (exit 2) instead of naming a culprit "
        "that may not exist: no device without the slices or classes, a pod's claim without the claims, the "
        "kubelet's word on a bound pod without the events. Answers that do not depend on it are given as usual. "
        "Likewise a Pod without a status (the API server always writes one): whether its claims were created is "
        "in the status. DeviceTaintRules are read as complete: a cluster commonly has none.",
    ),
    Rule(
        code="DRA105",
        name="input-edited",
        severity="warning",
        blocking=False,
        missing=None,
        summary="An object in the input lacks a field the API server always sets: the dump was cut or edited.",
        hint="Take the objects again as the API server returns them: kubectl get ... -o yaml, or a kubectl dra dump.",
        explanation="The API server sets some fields on every object it stores (an ownerReference's uid, a Pod's or a "
        "Node's status). An input without one was cut or edited by hand. kubectl-dra does not name a culprit "
        "on such a ground: it judges without the field (an owner by its name) or leaves the answer open.",
    ),
    Rule(
        code="DRA106",
        name="pool-status-bounds-usage",
        severity="info",
        blocking=False,
        missing=None,
        summary="kubectl-dra could not read every ResourceClaim, so its count of a pool's allocated devices may be "
        "short: a ResourcePoolStatusRequest's count, which the controller makes from every claim, bounds what is in use.",
        hint="Grant list on resourceclaims in every namespace (docs/rbac.md) for kubectl-dra's own count; until then "
        "read the request's numbers as the pool's usage as of its time.",
        explanation="A user who may list ResourceClaims only in some namespaces sees only the devices their claims "
        "hold: the others look free. kube-controller-manager counts every claim when it answers a "
        "ResourcePoolStatusRequest, so where its allocated count is higher the difference is likely held by claims "
        "kubectl-dra could not read. This is not a disagreement (DRA023 is not raised for allocated and available "
        "then): the message gives kubectl-dra's count in the claims it read and upstream's counts with their time. "
        "The inventory stays incomplete (exit 2).",
    ),
    Rule(
        code="DRA201",
        name="claim-not-created",
        severity="error",
        blocking=True,
        missing="claim",
        summary="The pod's ResourceClaim has not been generated from its template yet.",
        hint="The resourceclaim controller in kube-controller-manager creates it; check that it runs and look for FailedResourceClaimCreation events.",
        explanation="For `resourceClaimTemplateName`, the resourceclaim controller creates one claim per pod and records "
        "its name in `pod.status.resourceClaimStatuses`. Until then the scheduler parks the pod silently "
        "(`ResourceClaim not created yet`, with no event).",
    ),
    Rule(
        code="DRA202",
        name="claim-template-missing",
        severity="error",
        blocking=True,
        missing="claim",
        summary="The ResourceClaimTemplate the pod names does not exist.",
        hint="Create the ResourceClaimTemplate in the pod's namespace, or fix resourceClaimTemplateName.",
        explanation="The controller reports `FailedResourceClaimCreation` on the pod: "
        '`PodResourceClaim <name>: resource claim template "<t>": resourceclaimtemplate.resource.k8s.io "<t>" not found`.',
    ),
    Rule(
        code="DRA203",
        name="claim-missing",
        severity="error",
        blocking=True,
        missing="claim",
        summary="The ResourceClaim the pod names does not exist.",
        hint="Create the ResourceClaim in the pod's namespace, or fix resourceClaimName.",
        explanation='The scheduler reports `could not find ResourceClaim "<ns>/<name>"` and does not schedule the pod.',
    ),
    Rule(
        code="DRA204",
        name="claim-being-deleted",
        severity="error",
        blocking=True,
        missing="claim",
        summary="The pod's ResourceClaim is being deleted.",
        hint="Wait for the deletion to finish and let the controller recreate it, or recreate the claim.",
        explanation='A claim with a deletionTimestamp cannot be used: `resourceclaim "<name>" is being deleted`.',
    ),
    Rule(
        code="DRA205",
        name="claim-not-owned-by-pod",
        severity="error",
        blocking=True,
        missing="claim",
        summary="The generated ResourceClaim the pod refers to is owned by another object.",
        hint="Delete the stale claim so the controller generates one for this pod.",
        explanation="Claims generated from a template must be controlled by the pod: "
        "`ResourceClaim <ns>/<name> was not created for pod <ns>/<pod> (pod is not owner)`.",
    ),
    Rule(
        code="DRA206",
        name="pod-claim-invalid",
        severity="error",
        blocking=True,
        missing="claim",
        summary="A pod.spec.resourceClaims entry sets neither resourceClaimName nor resourceClaimTemplateName.",
        hint="Set exactly one of the two fields.",
        explanation="The scheduler reports `none of the supported fields are set`.",
    ),
    Rule(
        code="DRA207",
        name="claim-shared-by-podgroup",
        severity="info",
        blocking=False,
        missing=None,
        summary="The claim belongs to the pod's PodGroup and is shared by the gang's pods.",
        hint="Never delete it for one pod: every pod of the PodGroup uses it. Look at the PodGroup's "
        "status.resourceClaimStatuses and its events for its state.",
        explanation="With DRAWorkloadResourceClaims (alpha in 1.36, beta and off by default in 1.37) a PodGroup "
        "(`scheduling.k8s.io`) lists claims for all its pods: the resourceclaim controller creates them owned by "
        "the PodGroup and the scheduler reserves them for the group (`reservedFor` resource `podgroups`). A pod "
        "names its group in `spec.schedulingGroup.podGroupName`. With the gate off the scheduler does not accept "
        "a PodGroup owner (`Pod is not owner`).",
    ),
    Rule(
        code="DRA208",
        name="pods-not-created",
        severity="error",
        blocking=True,
        missing=None,
        summary="The workload's controller could not create its pods.",
        hint="Fix what the event names (a quota, a missing ServiceAccount, an admission policy), then let the "
        "controller retry.",
        explanation="The ReplicaSet, Job, StatefulSet or DaemonSet controller reports each failed pod creation as a "
        "`FailedCreate` event on the workload (a Deployment's on its ReplicaSet), for example "
        '`Error creating: pods "web-x" is forbidden: exceeded quota: gpus, requested: requests.nvidia.com/gpu=1, '
        "used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4`. No pod means no claim and nothing "
        "for the scheduler to place.",
    ),
    Rule(
        code="DRA209",
        name="device-quota-exhausted",
        severity="error",
        blocking=True,
        missing=None,
        summary="A ResourceQuota on the devices (or extended resource) the pod template asks for is used up.",
        hint="Raise the quota, or free devices in the namespace (delete claims or pods that hold them).",
        explanation="ResourceQuota counts DRA devices per class as `<class>.deviceclass.resource.k8s.io/devices` (each "
        "ResourceClaim's requested count; the claim is refused when it would exceed the limit) and extended "
        "resources as `requests.<name>` (the pod is refused). When the used amount has reached the hard limit, "
        "the next claim or pod of the workload is refused at creation.",
    ),
    Rule(
        code="DRA211",
        name="device-class-missing",
        severity="error",
        blocking=True,
        missing="class",
        summary="A request or subrequest names a DeviceClass that does not exist.",
        hint="Create the DeviceClass (cluster-scoped, usually by the cluster operator or the driver's chart), or fix deviceClassName.",
        explanation="The scheduler's PreFilter reports `request <req>: device class <class> does not exist` and retries when a "
        "DeviceClass is added. No device can be considered without its class.",
    ),
    Rule(
        code="DRA214",
        name="allocated-class-missing",
        severity="warning",
        blocking=False,
        missing=None,
        summary="A claim is allocated, but a DeviceClass its requests name no longer exists.",
        hint="Nothing blocks this claim; recreate the DeviceClass (or fix deviceClassName) before the next claim of it is allocated.",
        explanation="The scheduler reads a request's DeviceClass only to allocate the claim, and the kubelet prepares the "
        "devices from the allocation result, so an allocated claim keeps its devices when the class is deleted "
        "later. A new claim naming the class (the next pod of the same template) cannot be allocated until the "
        "class exists again: `request <req>: device class <class> does not exist`.",
    ),
    Rule(
        code="DRA215",
        name="running-claim-unseen",
        severity="warning",
        blocking=False,
        missing=None,
        summary="A Running pod's ResourceClaim is not in the input: the pod has its devices, but what they are is not shown.",
        hint="Add the pod's claims to the input (kubectl get resourceclaims -n NAMESPACE -o yaml), or take a kubectl dra dump.",
        explanation="The kubelet starts a pod's containers only after the DRA drivers prepared every claim's devices, so a "
        "Running pod holds its devices whatever the input shows. A claim in use cannot be deleted while it is "
        "reserved (its finalizer), so a claim missing from the input is almost always one the dump left out. The "
        "pod's verdict is that it runs; the claim's devices and the pods they block are unknown to the answer.",
    ),
    Rule(
        code="DRA212",
        name="feature-disabled",
        severity="error",
        blocking=True,
        missing="device",
        summary="The claim uses a DRA feature that is disabled in the assumed Kubernetes version/feature gates.",
        hint="Enable the named feature gate on kube-scheduler (and the API server), or stop using the field.",
        explanation="The allocator refuses claims that use firstAvailable, adminAccess or capacity requests while their gate is off.",
    ),
    Rule(
        code="DRA213",
        name="request-invalid",
        severity="error",
        blocking=True,
        missing="device",
        summary="A request cannot be evaluated as written (empty selector, unsupported mode, too many devices).",
        hint="Fix the request as the message says.",
        explanation="These are errors the allocator returns before searching; in the scheduler they abort the attempt.",
    ),
    Rule(
        code="DRA221",
        name="extended-resource-not-dra",
        severity="info",
        blocking=False,
        missing=None,
        summary="The pod requests an extended resource that a DeviceClass maps, but DRAExtendedResource is off: it is a "
        "device-plugin resource.",
        hint="With the gate off, only a device plugin (node allocatable) provides it; enable DRAExtendedResource "
        "(beta and on from 1.36, GA in 1.37) to have DRA serve it.",
        explanation="kube-scheduler's DynamicResources plugin turns container requests for a DeviceClass's "
        "`extendedResourceName` (or `deviceclass.resource.kubernetes.io/<class>`) into a claim only with the gate "
        "DRAExtendedResource. Without it NodeResourcesFit checks the node's allocatable as for any extended "
        "resource, and the API server drops `spec.extendedResourceName`.",
    ),
    Rule(
        code="DRA222",
        name="extended-resource-status-invalid",
        severity="error",
        blocking=False,
        missing=None,
        summary="pod.status.extendedResourceClaimStatus is malformed.",
        hint="The scheduler writes this status; a malformed one comes from an edited dump or another writer.",
        explanation="The status must be `{resourceClaimName: <string>, requestMappings: [{containerName, resourceName, "
        "requestName}]}`. kubectl-dra then looks for the claim by its annotation and owner instead.",
    ),
    Rule(
        code="DRA223",
        name="extended-resource-claim-stale",
        severity="warning",
        blocking=False,
        missing=None,
        summary="An unallocated extended-resource claim from an earlier scheduling attempt exists.",
        hint="Nothing to do: the scheduler deletes it and builds a new one; if it stays, check the scheduler's PostFilter errors.",
        explanation="The scheduler never reuses such a claim: Filter answers `cannot schedule extended resource claim` on "
        "every node, PostFilter deletes it (`deletion of ResourceClaim completed`), and the next attempt builds "
        "the claim again. kubectl-dra dry-runs the claim the next attempt would build.",
    ),
    Rule(
        code="DRA224",
        name="extended-resource-device-plugin",
        severity="info",
        blocking=False,
        missing=None,
        summary="Every node serves the pod's extended resources through a device plugin: DRA is not involved.",
        hint="If the pod stays Pending, look at NodeResourcesFit (`Insufficient <resource>`) on those nodes.",
        explanation="The DynamicResources plugin uses DRA for a mapped extended resource only on nodes whose allocatable "
        "lacks it or has 0 of it (1.34: lacks the key). Elsewhere the device plugin serves it.",
    ),
    Rule(
        code="DRA225",
        name="extended-resource-double-admission",
        severity="warning",
        blocking=False,
        missing=None,
        summary="A node advertises an extended resource through a device plugin and also publishes DRA devices for it.",
        hint="Run either the device plugin or the DRA driver for these devices on a node, not both (or disable the "
        "driver's extended-resource mapping there).",
        explanation="The kubelet admits pods against the device plugin's count, and the DRA driver hands out its own devices: "
        "the same physical devices can go to two pods. Several drivers document the switch-over; kubectl-dra "
        "flags nodes whose allocatable has the resource and whose ResourceSlices come from a driver of the same "
        "vendor domain.",
    ),
    Rule(
        code="DRA226",
        name="extended-resource-device-plugin-path",
        severity="error",
        blocking=False,
        missing=None,
        summary="DRA cannot place the pod's extended resources, but some nodes serve them through a device plugin: "
        "whether the pod fits there is NodeResourcesFit's decision, which kubectl-dra does not model.",
        hint="Check the allocatable and requested amounts of the resource on the named nodes (kubectl describe node).",
        explanation="On nodes whose allocatable has the resource, the DynamicResources plugin leaves it to NodeResourcesFit. "
        "The DRA verdict covered only the other nodes, so the answer was undetermined (exit 2).",
        retired="kubectl-dra now models the device-plugin path as the scheduler takes it: on such a node the pod's own "
        "claims are allocated and NodeResourcesFit counts the resource against the node's allocatable (DRA227 when "
        "the pod fits there, DRA504/DRA506 when it does not or may not).",
    ),
    Rule(
        code="DRA227",
        name="extended-resource-via-device-plugin",
        severity="info",
        blocking=False,
        missing=None,
        summary="The pod fits on a node whose device plugin serves its extended resources: the scheduler allocates no "
        "DRA device for them there.",
        hint="Nothing to do; if the resource should come from DRA on that node, remove it from the node's device plugin.",
        explanation="filterExtendedResources: on a node whose allocatable has the extended resource (1.35+: more than "
        "zero of it; 1.34: the key at all), the DynamicResources Filter drops the scheduler's extended-resource claim "
        "and allocates only the pod's own claims; NodeResourcesFit counts the resource against the node's "
        "allocatable minus what the pods bound there request. kubectl-dra runs the same two checks on such nodes.",
    ),
    Rule(
        code="DRA228",
        name="extended-resource-prebind-defect",
        severity="error",
        blocking=True,
        missing="node",
        summary="The pod fits only on nodes whose device plugin serves its extended resources, and it has claims of "
        "its own: kube-scheduler fails PreBind there on every attempt (a known upstream defect).",
        hint="Request the device through the pod's own claim instead of the extended resource, or keep the pod off "
        "the nodes whose device plugin serves it (node affinity); do not delete other pods, it does not help.",
        explanation="In k8s.io/kubernetes 1.35 through 1.38.0-beta.0 (read in v1.35.4, v1.36.3, v1.37.2 and "
        "v1.38.0-beta.0; no upstream fix or issue found as of 2026-12-03), on a node whose device plugin serves "
        "the pod's extended resource the DynamicResources Filter allocates the scheduler's extended-resource claim "
        "with no request (its spec is empty until a node needs DRA) next to the pod's own claims; PreBind then "
        "tries to record the claim's request mappings, finds none and fails: `nil or empty request mappings, no "
        "update of pod ... ExtendedResourceClaimStatus`. The pod's own claims stay allocated, and every later "
        "attempt fails the same way. A pod without claims of its own is not affected (the Filter returns early).",
    ),
    Rule(
        code="DRA229",
        name="extended-resource-prebind-defect-possible",
        severity="warning",
        blocking=False,
        missing=None,
        summary="The pod fits on nodes where kube-scheduler's PreBind fails (DRA228's defect) and on others: which "
        "one the scheduler picks decides.",
        hint="Keep the pod off the nodes whose device plugin serves its extended resource (node affinity), or "
        "request the device through the pod's own claim.",
        explanation="See DRA228. The scheduler scores the feasible nodes and picks one; kubectl-dra does not model "
        "scoring, so whether the pod lands on a node where PreBind fails is undetermined (exit 2).",
    ),
    Rule(
        code="DRA301",
        name="cel-runtime-error",
        severity="error",
        blocking=True,
        missing="device",
        summary="A CEL selector fails at run time on a device; Kubernetes aborts the pod's scheduling attempt.",
        hint='Guard optional attributes with has(device.attributes["domain"].name) or use .?name.orValue(default).',
        explanation='In the allocator a selector error is fatal for the whole attempt, not "device skipped": the scheduler '
        'reports `running "DynamicResources" filter plugin: class|claim <name>: selector #<i>: CEL runtime error: <err>` '
        "and retries with backoff. Whether it fires depends on whether the search reaches that device.",
    ),
    Rule(
        code="DRA302",
        name="cel-compile-error",
        severity="error",
        blocking=True,
        missing="device",
        summary="A CEL selector does not compile in the Kubernetes CEL environment.",
        hint="Fix the expression; the message gives the position and cel-go's wording.",
        explanation="New expressions are validated by the API server, so this usually means a downgrade or a feature "
        "disabled since the object was written.",
    ),
    Rule(
        code="DRA303",
        name="cel-not-evaluable",
        severity="error",
        blocking=False,
        missing=None,
        summary="A CEL selector hits a limit of kubectl-dra's CEL engine, so its Kubernetes result is unknown.",
        hint="Check the expression by hand, or simplify it; the message names the limit.",
        explanation="kubectl-dra evaluates selectors with cel-cpp plus Kubernetes' libraries. A few constructs "
        "(more than 10,000 loop iterations, transformMap, the format library) are outside what it can "
        "evaluate exactly; rather than guess, it leaves the verdict open (exit 2).",
    ),
    Rule(
        code="DRA304",
        name="error-may-end-attempt",
        severity="warning",
        blocking=False,
        missing="device",
        summary="On some node the allocator meets an error that would end the scheduling attempt, but whether the "
        "scheduler filters that node first is undetermined.",
        hint="Fix the cause the message names (usually a CEL selector that errs on some devices); until then the "
        "pod is placed or not depending on the order in which the scheduler filters the nodes.",
        explanation="An Error status from any node's Filter ends kube-scheduler's attempt. The scheduler meets it "
        "for certain only where it filters that node for certain: NodeResourcesFit runs first and may reject the "
        "node (when the pods bound there are not in the input); it stops filtering once it has found "
        "numFeasibleNodesToFind feasible nodes (every node below 100, else at least 100 and about 50% - nodes/125 "
        "at the default percentageOfNodesToScore), starting where its last attempt stopped; and it tries a pod's "
        "nominated node first. When any of these may keep the scheduler from the node, the verdict is "
        "undetermined (exit 2); the rest of the dry-run is reported as if it does not meet the error.",
    ),
    Rule(
        code="DRA401",
        name="no-devices-published",
        severity="error",
        blocking=True,
        missing="device",
        summary="No ResourceSlice publishes any device the request could use.",
        hint="Install or fix the DRA driver so it publishes ResourceSlices for its devices.",
        explanation="Devices exist for DRA only as entries in ResourceSlices, written by the driver's kubelet plugin or "
        "controller. With no slices the scheduler can only say `cannot allocate all claims`. The same code covers "
        "devices the allocator of the assumed version never looks at: a slice it ignores (for example a 1.34-style "
        "slice with devices and sharedCounters read by 1.35+, or one using counter compatibility groups while "
        "their gate is off), an incomplete pool, or an invalid one (for example a counter set that does not "
        "exist; the scheduler then reports `invalid resource pools were encountered`). The reason names which.",
    ),
    Rule(
        code="DRA402",
        name="no-device-matches-class",
        severity="error",
        blocking=True,
        missing="device",
        summary="Devices are published, but none passes the DeviceClass's selectors.",
        hint="Check the class's selectors (usually device.driver) against the driver name in the ResourceSlices.",
        explanation="Class selectors are evaluated before the request's; a device must pass all of them.",
    ),
    Rule(
        code="DRA403",
        name="no-device-matches-request",
        severity="error",
        blocking=True,
        missing="device",
        summary="Devices pass the class, but none passes the request's own selectors.",
        hint="Relax the request's CEL selector or add devices that satisfy it; the evidence shows the values each selector read.",
        explanation="Each request selector is evaluated per device; a device must pass all of them.",
    ),
    Rule(
        code="DRA404",
        name="devices-in-use",
        severity="error",
        blocking=True,
        missing="device",
        summary="Matching devices exist, but they are already allocated to other claims.",
        hint="Free a device (delete the pods holding it) or add devices; `kubectl dra devices --list` names the claims and pods that hold them.",
        explanation="A device allocated to one claim (without adminAccess or shared consumable capacity) cannot be allocated to another. "
        "Where a pod's answer is given after the pods ahead of it in the queue (`explain pod` of a pod the queue "
        "leaves without devices, the copies of `--replicas` and `--count`), the devices those pods take in the "
        "estimated order are listed as going to their claims: none of those is allocated yet.",
    ),
    Rule(
        code="DRA405",
        name="devices-tainted",
        severity="error",
        blocking=True,
        missing="device",
        summary="Matching devices carry taints the request does not tolerate.",
        hint="Add a matching toleration to the request, or remove the taint.",
        explanation="With DRADeviceTaints, NoSchedule and NoExecute taints (1.34: every taint) keep a device from being allocated "
        "unless the request tolerates them.",
    ),
    Rule(
        code="DRA406",
        name="counters-exhausted",
        severity="error",
        blocking=True,
        missing="device",
        summary="Matching devices consume shared counters that are already used up.",
        hint="Free partitions that consume the same counter set, or request a smaller partition.",
        explanation="Partitionable devices consume counters from their pool's counter sets; a device is not allocatable if any "
        "counter would go below zero.",
    ),
    Rule(
        code="DRA407",
        name="capacity-exhausted",
        severity="error",
        blocking=True,
        missing="device",
        summary="Matching devices do not have enough consumable capacity left (or the request violates their policy).",
        hint="Request less capacity, or free shares of the device.",
        explanation="With DRAConsumableCapacity, a shareable device can be allocated until its capacity is used up; requests are "
        "rounded per the device's requestPolicy.",
    ),
    Rule(
        code="DRA408",
        name="not-enough-devices",
        severity="error",
        blocking=True,
        missing="device",
        summary="Fewer devices are available than the request asks for.",
        hint="Lower the count or add devices.",
        explanation="An ExactCount request needs `count` distinct devices on one node (or reachable from it). The requests of "
        "the claims a pod needs together cannot share a device either: when each fits alone but together they "
        "need more devices than a node has candidates, the finding names them all. When matching devices are "
        "rejected by a taint, by being in use, by counters or by capacity, those get findings of their own "
        "(DRA405, DRA404, DRA406, DRA407) beside this one. Where each request fits alone, the claim-level reason is "
        "the allocator's own: its search records the request it ran out of candidates at and why (the devices "
        "that request can use are taken by earlier requests of the claim or pod: this code; a constraint: DRA409; "
        "shared counters: DRA406; capacity: DRA407).",
    ),
    Rule(
        code="DRA409",
        name="constraint-unsatisfiable",
        severity="error",
        blocking=True,
        missing="device",
        summary="Enough devices match each request, but no combination satisfies the claim's constraints.",
        hint="Check matchAttribute/distinctAttribute against the devices' values the message shows.",
        explanation="matchAttribute requires every affected device to have the same value; distinctAttribute requires different values.",
    ),
    Rule(
        code="DRA410",
        name="pool-incomplete",
        severity="warning",
        blocking=False,
        missing=None,
        summary="A resource pool is incomplete (not all of its ResourceSlices are published), so its devices are skipped.",
        hint="Wait for the driver to finish publishing, or fix resourceSliceCount.",
        explanation="From 1.35 the allocator skips incomplete pools; a request with allocationMode All fails on them.",
    ),
    Rule(
        code="DRA411",
        name="pool-invalid",
        severity="warning",
        blocking=False,
        missing=None,
        summary="A resource pool is invalid (duplicate device names, unknown counter sets) and cannot be used.",
        hint="Fix the driver's ResourceSlices.",
        explanation="1.34 aborts the scheduling attempt when it reaches an invalid pool; 1.35+ skips it and reports "
        "`invalid resource pools were encountered` when nothing else fits.",
    ),
    Rule(
        code="DRA412",
        name="binding-conditions-unsupported",
        severity="error",
        blocking=True,
        missing="device",
        summary="Every device the request could use has binding conditions, which the assumed feature gates do not support.",
        hint="Enable DRADeviceBindingConditions and DRAResourceClaimDeviceStatus (both on by default from 1.36), or pass "
        "--feature-gates to match the scheduler.",
        explanation="Devices with bindingConditions are skipped unless both gates are on; when no other device is left the "
        "request cannot be allocated.",
    ),
    Rule(
        code="DRA413",
        name="allocation-failed",
        severity="error",
        blocking=True,
        missing="device",
        summary="Each request has candidate devices, but the allocator finds no complete allocation on any usable node.",
        hint="Read the per-node reasons (-o json: the finding's evidence): usually devices spread over nodes, counts or constraints.",
        explanation="All requests of all of the pod's claims must be satisfied on one node at once.",
    ),
    Rule(
        code="DRA414",
        name="search-budget-exceeded",
        severity="error",
        blocking=False,
        missing=None,
        summary="The allocation dry-run gave up: the search space is too large for kubectl-dra's step budget.",
        hint="Narrow the claim (selectors, counts), or check the scheduler's events: its own filter timeout (10 s) may fire too.",
        explanation="The allocator searches depth-first with backtracking. kube-scheduler stops after its filter timeout "
        "(`timed out trying to allocate devices`); kubectl-dra stops after a fixed number of steps and says it "
        "cannot tell, rather than guessing. The exit code is 2.",
    ),
    Rule(
        code="DRA415",
        name="upstream-allocator-crash",
        severity="error",
        blocking=False,
        missing=None,
        summary="kube-scheduler of the assumed version would crash (panic) while allocating this claim: a known upstream bug.",
        hint="Turn the alpha gate named in the message off, or upgrade kube-scheduler to a minor with the fix.",
        explanation="kubectl-dra follows the upstream allocator of each minor, bugs included, because they decide what the "
        "scheduler does. Where that code would panic (kube-scheduler 1.34 with DRAConsumableCapacity indexes "
        "the wrong device and can run past the end of a slice), there is no allocation to report: the verdict "
        "stays undetermined and the exit code is 2.",
    ),
    Rule(
        code="DRA416",
        name="attribute-value-unsupported",
        severity="error",
        blocking=True,
        missing="device",
        summary="A claim constraint meets a device attribute whose value the scheduler cannot use: the allocation aborts.",
        hint="Fix the driver's attribute (a valid semantic version, a non-empty list), or drop the constraint on it.",
        explanation="From 1.38 kube-scheduler parses attribute values once, when a ResourceSlice arrives; a value it cannot keep "
        "(a version that is not semver, an empty list, a list while DRAListTypeAttributes is off) stays unsupported. "
        "A matchAttribute or distinctAttribute constraint that reaches such a device stops the allocation with "
        "`device <id>: unsupported attribute value for <attribute>` (1.37 skipped the device). The scheduling attempt "
        "ends with that error, whatever other devices would do.",
    ),
    Rule(
        code="DRA417",
        name="allocated-capacity-negative",
        severity="error",
        blocking=True,
        missing="device",
        summary="An allocated claim records a negative consumed capacity: kube-scheduler schedules no pod with claims.",
        hint="Find the claim in the message and deallocate or fix it (delete the claim, or the pod that owns it).",
        explanation="From 1.38 the scheduler checks every allocated claim's consumedCapacity when it gathers the allocation "
        "state: a negative amount would make the shared capacity look free, so PreFilter fails (`gather allocation "
        'state: claim <claim>, device <device>: consumed capacity "<name>" must not be negative`) for every pod '
        "that has claims, until that claim is gone.",
    ),
    Rule(
        code="DRA418",
        name="compatibility-groups-conflict",
        severity="error",
        blocking=True,
        missing="device",
        summary="Matching devices draw from a counter set whose allocated devices share no compatibility group with "
        "them.",
        hint="Free the devices allocated from that counter set, or request a device whose compatibility groups go "
        "with theirs.",
        explanation="With DRADeviceCompatibilityGroups (alpha in 1.37 and 1.38) a device's consumesCounters entries may "
        "name compatibilityGroups: devices drawing from one counter set are allocated together only when the "
        "groups of all of them have one in common, and a device without groups goes only with others without "
        "groups. The allocator checks this before the counters, against the devices already allocated from the "
        "set and those it is allocating. With the gate off, a slice that names groups is ignored and its pool is "
        "incomplete (DRA401).",
    ),
    Rule(
        code="DRA421",
        name="binding-conditions-pending",
        severity="error",
        blocking=True,
        missing="device",
        summary="The claim is allocated, but a device waits for its binding conditions: the scheduler holds the pod in PreBind.",
        hint="The driver's controller sets the conditions in the claim's status.devices; check that controller and "
        "the device (for example a fabric attach). The scheduler gives up after the binding timeout.",
        explanation="A device with `bindingConditions` (KEP-5007) is allocated first and bound later: kube-scheduler emits "
        "`BindingConditionsPending`, keeps the pod nominated (no `spec.nodeName`) and polls the claim's "
        "`status.devices[]` until every binding condition is True. The evidence lists each condition with its "
        "current status and how long the scheduler has waited against the binding timeout (600 s by default, "
        "`DynamicResourcesArgs.bindingTimeout`).",
    ),
    Rule(
        code="DRA422",
        name="binding-failed",
        severity="error",
        blocking=True,
        missing="device",
        summary="A device's binding failure condition is True: the scheduler deallocates the claim and tries again.",
        hint="Look at the reason and message the driver reported; fix the device or remove it from the pool, "
        "otherwise the scheduler may pick it again.",
        explanation="When any of a device's `bindingFailureConditions` is True in the claim's `status.devices[]`, PreBind "
        "fails with `device binding failed: claim=..., reason=..., message=...`, the claim is deallocated and "
        "the pod goes back to the scheduling queue.",
    ),
    Rule(
        code="DRA423",
        name="binding-timeout",
        severity="error",
        blocking=True,
        missing="device",
        summary="A device's binding conditions were not met within the binding timeout: the scheduler deallocates and retries.",
        hint="Check the driver's controller that should set the conditions; raise bindingTimeout only if binding is "
        "known to take that long.",
        explanation="kube-scheduler waits at most the binding timeout (600 s by default) from `allocation.allocationTimestamp` "
        "for the binding conditions, then fails PreBind, deallocates the claim and retries.",
    ),
    Rule(
        code="DRA430",
        name="devices-go-to-pods-ahead",
        severity="error",
        blocking=True,
        missing="device",
        summary="Alone the pod would get devices, but the pods ahead of it in the scheduling queue take them first.",
        hint="Wait for a pod ahead to finish, free devices (scale down or delete pods holding them), add devices, or "
        "give this pod a higher priority (a PriorityClass) so that it is scheduled first.",
        explanation="kube-scheduler places one pod at a time, in its queue's order (PrioritySort: higher `spec.priority` "
        "first, then the time the pod entered the queue), and a claim it allocates for one pod is taken for every "
        "pod after it, before the binding is written (the plugin's in-flight allocations). kubectl-dra dry-runs the "
        "pending pods that use DRA in that order, each against what the pods ahead of it would take, with the same "
        "allocator as for one pod. The finding names the device the pod would get alone and the pod ahead it "
        "would go to; where a pod ahead picks among nodes freely (its scores tie, or are not modelled), that the "
        "pods ahead take every device it could use is certain but which takes which is not, and the finding names "
        "the estimated order's pairing as that. The order is estimated from the API: priority, then creation time; pods whose gates are "
        "still on come after the others, as if their gates were removed in that order. `--alone` judges each pod "
        "as if it were the only one waiting.",
    ),
    Rule(
        code="DRA431",
        name="queue-order-undetermined",
        severity="warning",
        blocking=False,
        missing=None,
        summary="Whether the pod gets devices depends on which pods the scheduler takes first, or where it places them.",
        hint="`kubectl dra status -o json` gives the pods waiting in the queue's order (`queue.order`), and `kubectl dra "
        "explain pod` on one of them says where it goes; `--alone` answers for this pod as if it were the only one "
        "waiting.",
        explanation="The pods ahead of this one in the queue can use the same devices, and what they take is not decided by "
        "what the API shows: pods of the same priority created in the same second (or already tried, so re-queued "
        "at a time the API does not show) are taken in an order kubectl-dra cannot see; a pod ahead that may go "
        "to several nodes goes where the scheduler's scores (and a random pick among equal ones) send it; a pod "
        "ahead whose own verdict is undetermined may or may not take devices; two pending pods sharing a claim "
        "are placed jointly. An attempt that errs (a CEL runtime error on a device the search reaches, a constraint) "
        "is not monotonic: the allocator skips a device in use before it evaluates selectors on it, so once other "
        "pods take that device the search may no longer err, and the scheduler retries a pod whose attempt erred "
        "(the backoff queue, 1 to 10 seconds) at a time the API does not show. Such a pod, blocked by the error "
        "alone, is then undetermined, and so are the pods that may come after its retry and could use the same "
        "devices. A gated pod whose own answer behind its gates is undetermined (the room on its nodes unknown, "
        "DRA506, from an input that cannot tell a node without pods from pods left out) has an undetermined place "
        "too: its gates decide its verdict, not whether it takes devices once they are removed. kubectl-dra "
        "proves an answer where it can (pods that have one choice each; identical pods on node-local devices, "
        "whose count that fits does not depend on where each goes, their cpu and memory included where no other "
        "pod may be ahead on their nodes and no nomination or deletion holds or frees room there; more nodes that "
        "fit the pod than pods ahead of it), and where the pods ahead that compete with it (for its devices, or "
        "for the cpu, memory and pod slots of its nodes, pending pods without DRA included) are few, it dry-runs "
        "every order of theirs that the API does not fix and every node each may go to (at most 16 pods and 128 "
        "alternatives per pod): the answer is certain when all of them give the pod the same outcome, without "
        "naming a node or devices where those differ. It stays undetermined (exit 2) where the alternatives differ "
        "or are too many, and where a pod's only obstacle in one of them is cpu, memory or pod slots on a node "
        "where a pod of a lower priority runs (DefaultPreemption may free the room: the queue follows a pod that "
        "preempts at its own turn, DRA507, not one that would in another order). The same holds where the room "
        "may be freed by another pending pod, with DRA or without, that outranks a pod running on that node: "
        "once its victims are gone, the room goes to whichever pod the scheduler tries next, and its nomination "
        "holds it only against pods of its own priority or lower, so a pod that never preempts, or one of a "
        "higher priority, may get it. After kube-scheduler restarts "
        "or fails over to another instance, the new one puts the pods already waiting into its queue in its "
        "informer's list order (by namespace and name), not by creation time, all stamped as they are listed: pods "
        "of one priority are then taken in that order, and the order kubectl-dra estimates from creation times can "
        "differ from it until those pods have been tried.",
    ),
    Rule(
        code="DRA432",
        name="queue-position",
        severity="info",
        blocking=False,
        missing=None,
        summary="Pods ahead of this one in the scheduling queue can use the same devices; after them, it still gets its own.",
        hint="Nothing to do; `-o json` lists the pods ahead and what each takes.",
        explanation="kubectl-dra dry-runs the pending pods that use DRA in the scheduler's order (see DRA430). This pod's "
        "claims are still allocatable after the pods ahead of it take theirs. For a pod whose scheduling gates are "
        "still on, it is what would happen once they are removed.",
    ),
    Rule(
        code="DRA433",
        name="replicas-do-not-all-fit",
        severity="error",
        blocking=True,
        missing="device",
        summary="Not all of the pods `--replicas N` (or the claims `match --count N`) asks about would get their devices.",
        hint="The reason under it is the first pod's that does not fit; free or add devices of that kind, or ask for fewer.",
        explanation="`explain deploy/NAME --replicas N` (sts, rs, job) adds N copies of the workload's pod template, their claims "
        "generated from its templates, to the scheduler's queue after the pods already waiting, and dry-runs them in "
        "that order on top of what is allocated and what the pods ahead take (the same allocator as for one pod). The "
        "finding says how many fit and where; the verdict under it is the first copy that does not fit, explained "
        "against the allocations of everything placed before it, so its reasons are the allocator's (devices "
        "allocated, counters used up, a constraint). Copies are identical pods: on node-local devices the count is "
        "certain whichever node each goes to. `match claim NAME --count N` does the same with N copies of the claim, "
        "each for a pod of its own with no node constraints.",
    ),
    Rule(
        code="DRA434",
        name="preemption-does-not-free-devices",
        severity="info",
        blocking=False,
        missing=None,
        summary="Pods of lower priority hold devices this pod could use; the scheduler will not preempt them for it.",
        hint="Wait for those pods to finish, or delete or scale them down yourself; a higher priority does not help.",
        explanation="kube-scheduler 1.34-1.38 never preempts pods to free devices: the DynamicResources plugin has no "
        "PreFilterExtensions, so a victim's devices stay allocated in the preemption dry-run, and every DRA Filter "
        "failure is UnschedulableAndUnresolvable, which DefaultPreemption skips (the event's `Preemption is not "
        "helpful for scheduling`). Workload-aware preemption (GenericWorkload) reads devices the same way. A pod "
        "blocked by devices that lower-priority pods hold waits until they release them.",
    ),
    Rule(
        code="DRA435",
        name="gang-does-not-fit",
        severity="error",
        blocking=True,
        missing="device",
        summary="The pod's PodGroup is placed all or nothing, and not enough of its members get devices at once.",
        hint="Free or add devices for the members named, lower the group's minCount, or make the members' claims "
        "reach more nodes; the message says how many fit and which members find none.",
        explanation="With gang scheduling (GenericWorkload, off by default; 1.36+), a PodGroup with `schedulingPolicy.gang` is "
        "scheduled in one cycle: the scheduler tries every unscheduled member in turn against one snapshot, so "
        "the devices one member takes are gone for the next, and places them only if at least `minCount` (with "
        "the members already bound) fit; otherwise it reverts the cycle and places none. kubectl-dra runs the "
        "same cycle at the turn of the group's first member in the queue's order, members by priority, creation "
        "and name. It is certain when no other pod that can use the same devices is ahead of the group and the "
        "members are of one kind on node-local devices; otherwise the members are undetermined (DRA431). From 1.37 "
        "the scheduler first checks that every member has the PodGroup's priority and that the members share one "
        "preemption policy; a group that fails the check is rejected at every attempt and none of it is placed, "
        "certain. Composite groups, topology constraints, group claims, gated members and 1.35's Permit-based gangs "
        "are not modelled.",
    ),
    Rule(
        code="DRA436",
        name="replicas-count-open",
        severity="warning",
        blocking=False,
        missing=None,
        summary="How many of the pods `--replicas N` (or the claims `match --count N`) asks about get their devices "
        "depends on what the scheduler decides at run time.",
        hint="The reason under it is the first copy's whose answer is open; `kubectl dra explain pod` on the pods it "
        "names says what they may take. A smaller N may be certain.",
        explanation="The copies are placed by the queue like the pods already waiting (see DRA433). For one of them the "
        "queue cannot prove the answer (DRA431): pods ahead of it that may take the same devices, or the cpu, memory "
        "or pod count of the node it needs, go to nodes the scheduler picks by scores the API does not show. The "
        "finding says how many copies get their devices for certain and which copy is the first whose answer is "
        "open; the exit code is 2 (undetermined), never a guess.",
    ),
    Rule(
        code="DRA501",
        name="no-reachable-node",
        severity="error",
        blocking=True,
        missing="node",
        summary="Devices that match exist, but none is reachable from a node the pod may use.",
        hint="Check the pod's nodeName, nodeSelector, affinity and tolerations against the nodes the devices are on.",
        explanation="A device is reachable from a node through its slice's nodeName, nodeSelector or allNodes (or per-device "
        "node selection); the pod's own node constraints must allow that node.",
    ),
    Rule(
        code="DRA502",
        name="claim-allocated-elsewhere",
        severity="error",
        blocking=True,
        missing="node",
        summary="The claim is already allocated to devices on a node the pod cannot use.",
        hint="Delete the pod(s) that hold the claim so it is deallocated, or let the pod use that node.",
        explanation="The scheduler reports `resourceclaim not available on the node` for every other node.",
    ),
    Rule(
        code="DRA503",
        name="no-usable-node",
        severity="error",
        blocking=True,
        missing="node",
        summary="No node passes the pod's own node constraints, independent of devices.",
        hint="Check nodeName, nodeSelector, required node affinity, taints and cordoned nodes.",
        explanation="kubectl-dra checks nodeName, nodeSelector, required node affinity, node taints and cordons.",
    ),
    Rule(
        code="DRA504",
        name="node-resources-insufficient",
        severity="error",
        blocking=True,
        missing="node",
        summary="The claims fit only on nodes that lack the cpu, memory, pods or other resources the pod requests.",
        hint="Free the named resource on those nodes (the pods bound there hold it), lower the pod's requests, or add "
        "devices on nodes with room.",
        explanation="kube-scheduler runs NodeResourcesFit beside DynamicResources on every node: the pod's requests (the sum of "
        "its containers and sidecars, or its largest init container if more, pod-level requests, plus overhead) "
        "must fit in the node's `status.allocatable` minus the requests of the pods already bound to it (not "
        "Succeeded or Failed; pods being deleted still count), and the node must have room for one more pod. "
        "An extended resource that a DeviceClass maps and the node has none of is left to DRA. kubectl-dra checks "
        "this on the nodes where the dry-run finds the claims allocatable; the scheduler reports such a node as "
        "`Insufficient cpu` (or memory, `Too many pods`, ...). With DRANodeAllocatableResources on (alpha, 1.37+), a "
        "device whose `nodeAllocatableResources` maps node cpu, memory, ephemeral-storage or hugepages adds that much "
        "to the pod's requests on the node where the dry-run picks it (the DynamicResources Filter's own check), and "
        "the pods already there count their `status.nodeAllocatableResourceClaimStatuses`.",
    ),
    Rule(
        code="DRA505",
        name="node-resources-drop-nodes",
        severity="info",
        blocking=False,
        missing=None,
        summary="Some nodes where the claims fit lack room for the pod's requests; the pod fits on the others.",
        hint="Nothing to do unless the pod must run on one of the dropped nodes.",
        explanation="NodeResourcesFit (see DRA504) rejects these nodes although their devices would do: the scheduler places "
        "the pod on one of the nodes that pass every filter.",
    ),
    Rule(
        code="DRA506",
        name="node-resources-unknown",
        severity="error",
        blocking=False,
        missing=None,
        summary="The claims fit on some nodes, but whether the pod's cpu, memory and pods fit there is unknown: the pods "
        "bound to those nodes are not in the input, or the dry-run stopped before it found a node with room.",
        hint="Run against the cluster, or take the input with kubectl dra dump, which records that every bound pod "
        "was read (a kubectl get dump cannot tell a node without pods from pods left out); with RBAC, grant list "
        "on pods in every namespace.",
        explanation="NodeResourcesFit (see DRA504) subtracts the requests of the pods already bound to a node from its "
        "allocatable. A file that has no pod on a node cannot tell an empty node from pods left out, and a live "
        "read that may not list pods cannot see them: the verdict is then undetermined (exit 2), unless the "
        "pod alone asks for more than a node has (then the node is rejected for certain). The dry-run also tries "
        "at most 200 nodes: when NodeResourcesFit rejects every node it found the claims fit on and it stopped "
        "there, a node it did not try may have room, and the verdict is undetermined too. So is it where what a device's "
        "`nodeAllocatableResources` adds cannot be told (DRANodeAllocatableResources: pod-level resources beside such a "
        "claim, a mapped claim another pod holds, a `capacityKey` without a consumed capacity, a pending pod whose claims "
        "are all allocated to such devices): the message says which.",
    ),
    Rule(
        code="DRA507",
        name="preempts-for-node-resources",
        severity="info",
        blocking=False,
        missing=None,
        summary="No node has room for the pod's cpu, memory or pods, but the scheduler preempts pods of lower priority "
        "on a node where the claims fit and places the pod there once they are gone.",
        hint="Nothing to do if the pods named may be evicted; otherwise raise their priority, lower this pod's, or give "
        "it a PriorityClass with preemptionPolicy: Never.",
        explanation="Where NodeResourcesFit (DRA504) rejects every node on which the claims fit, kube-scheduler's "
        "DefaultPreemption looks for victims: on each such node it removes every bound pod of lower priority, "
        "checks that the pod then fits (with the pods nominated there of its priority or higher), and reprieves "
        "the most important pods (higher priority, then earlier start) for as long as it still fits. It nominates "
        "the node with the lowest highest-priority victim, then the lowest sum of priorities, the fewest victims "
        "and the latest start, evicts the victims and places the pod there when they are gone. Where several "
        "nodes tie on all of these, it takes the first of a Go map, which nothing in the API fixes: the message "
        "then names them all (evidence `tiedNodes`), and the queue leaves the pod open (DRA431). Devices never make "
        "room this way (DRA434): the victims' devices stay allocated in the preemption's dry-run, so only nodes "
        "where the claims already fit are candidates. PodDisruptionBudgets are not read: they can change which "
        "pods are evicted and, among several candidate nodes, which node; the pod is placed either way. The "
        "victims' devices are freed once their claims are deallocated, so the devices the pod gets may be theirs. "
        "Pods behind it in the queue that may use that node or those devices get an open answer (DRA431).",
    ),
    Rule(
        code="DRA508",
        name="preemption-open",
        severity="warning",
        blocking=False,
        missing=None,
        summary="No node has room for the pod's requests, and whether preempting pods of lower priority makes room "
        "cannot be told from the input.",
        hint="Run against the cluster or a kubectl dra dump, which holds every bound pod; the message names what is "
        "missing.",
        explanation="See DRA507 for how kube-scheduler preempts. The outcome is open (exit 2) when the pods bound to a "
        "candidate node are not all in the input, when a victim belongs to a PodGroup that would be evicted with "
        "its whole group (GenericWorkload, not modelled), or when the pod already preempted and waits for its "
        "victims on a node where its claims no longer fit.",
    ),
    Rule(
        code="DRA601",
        name="driver-not-registered",
        severity="error",
        blocking=True,
        missing="driver",
        summary="The kubelet on the pod's node reports the DRA driver is not registered.",
        hint="Install the driver's kubelet plugin (DaemonSet) on that node and check its registration.",
        explanation="The kubelet prepares devices through the driver's kubelet plugin before starting the pod's containers: "
        "`Failed to prepare dynamic resources: prepare dynamic resources: DRA driver <name> is not registered`.",
    ),
    Rule(
        code="DRA602",
        name="driver-prepare-failed",
        severity="error",
        blocking=True,
        missing="driver",
        summary="The kubelet could not prepare the pod's devices.",
        hint="Look at the driver's kubelet plugin logs on that node; the event message carries its error.",
        explanation="NodePrepareResources failed or timed out; the pod stays Pending/ContainerCreating and the kubelet retries.",
    ),
    Rule(
        code="DRA603",
        name="pod-not-reserved",
        severity="error",
        blocking=True,
        missing="driver",
        summary="The pod runs on a node but is not in the claim's reservedFor list.",
        hint="The scheduler reserves claims before binding; check for a racing deallocation or a hand-bound pod.",
        explanation="The kubelet refuses: `pod <pod> (<uid>) is not allowed to use ResourceClaim <claim> (<uid>)`.",
    ),
    Rule(
        code="DRA604",
        name="waiting-for-kubelet",
        severity="info",
        blocking=False,
        missing=None,
        summary="The pod is bound and its claims are allocated; the kubelet has not reported on preparing the devices.",
        hint="If the pod stays Pending, check the kubelet and the driver's plugin on the node.",
        explanation="The API shows no kubelet event yet; kubectl-dra cannot see the driver's registration directly. From "
        "1.37 (alpha DRAOptionalNodeOperations) a ResourceSlice may set `skipNodeOperations`, which the scheduler "
        "copies into the claim's results: where every device of a driver in a claim skips `NodePrepareResources` "
        "(or `*`), and the node's kubelet declares the feature (`status.declaredFeatures`), the kubelet calls no "
        "plugin of that driver, so none is needed on the node; the message names those drivers. Before 1.37 the "
        "field does not exist and every driver is called.",
    ),
    Rule(
        code="DRA605",
        name="device-unhealthy",
        severity="warning",
        blocking=False,
        missing=None,
        summary="The kubelet reports a device of the pod's claims as Unhealthy or Unknown.",
        hint="Check the device with the driver's own tools; a NoExecute taint on it (by the driver or a DeviceTaintRule) "
        "makes the pod move to healthy devices.",
        explanation="With ResourceHealthStatus (beta, on from 1.36) the kubelet asks the DRA driver for device health and "
        "writes it per container into `status.containerStatuses[].allocatedResourcesStatus` "
        "(`claim:<claim>/<request>`, resource `<driver>/<pool>/<device>`). The pod keeps running; kubectl-dra "
        "reports every device that is not Healthy.",
    ),
    Rule(
        code="DRA606",
        name="evicted-by-device-taint",
        severity="error",
        blocking=True,
        missing="device",
        summary="The device taint eviction controller is deleting the pod: one of its devices has a NoExecute taint it does not tolerate.",
        hint="Fix or replace the device and remove the taint (or the DeviceTaintRule), or add a toleration to the "
        "request if the pod may keep the device.",
        explanation="kube-controller-manager's device-taint-eviction-controller sets the pod condition DisruptionTarget "
        "(reason DeletionByDeviceTaintManager) and deletes pods whose allocated devices have an untolerated "
        "NoExecute taint. kubectl-dra names the taint and whether it comes from the ResourceSlice or a "
        "DeviceTaintRule.",
    ),
    Rule(
        code="DRA607",
        name="driver-plugin",
        severity="warning",
        blocking=False,
        missing="driver",
        summary="What kubectl-dra found about the kubelet plugin of a driver the pod needs: the DaemonSet that runs it and "
        "its pod on the node, or that none was found.",
        hint="Fix what the message names: the node label or taint the DaemonSet does not match, what refuses its pods "
        "(the FailedCreate event: PodSecurity, a ResourceQuota), the plugin pod's crash (kubectl logs, kubectl "
        "describe pod), or install the driver's kubelet plugin; during the DaemonSet's rollout, wait for the new pod.",
        explanation="No API object says which workload serves a DRA driver or whether the kubelet registered it. A kubelet plugin "
        "must mount the kubelet's `plugins_registry` directory, so kubectl-dra takes the DaemonSets that do (CSI "
        "node plugins excepted) and ties one to the driver by the strongest evidence: the driver's name in its pod "
        "template, the Helm release (or `app.kubernetes.io/instance` label) of a DeviceClass that selects the driver, "
        "or the ResourceSlices' field manager (the plugin binary) in its command; failing all, the only such "
        "DaemonSet, unless that evidence ties it to another driver: then it is that driver's, and the message says no "
        "plugin of this one was found and whose the DaemonSet is (`plugin.otherPlugins`). The link is part of the "
        "message details (`plugin.link`), as are the objects behind the words (`plugin.failedCreate`, "
        "`plugin.rollout`, `plugin.kubeletStarted`). On the node it says why the DaemonSet runs no pod there (a "
        "nodeSelector label, required node affinity and the labels it wants, or a taint it does not tolerate, with "
        "the tolerations the DaemonSet controller adds), or the pod's state (not ready, restarts, its last exit; a "
        "pod the DaemonSet controller made for the node, pinned to it by its node affinity, that the scheduler has "
        "not bound: its `PodScheduled` reason and message). A DaemonSet that admits the node and has no pod "
        "there is explained by the DaemonSet controller's latest `FailedCreate` event (its message, count and last "
        "time: a PodSecurity level or a ResourceQuota that refuses the pod). While the DaemonSet rolls out "
        "(`updatedNumberScheduled` below `currentNumberScheduled`: some of its pods are of an older template; a pod "
        "that cannot be created counts in neither) or the node's pod is of an older template "
        "(`pod-template-generation` below the DaemonSet's `deprecated.daemonset.template.generation`), the plugin on "
        "the node may be down for the update, as many nodes at once as `maxUnavailable` allows (NVIDIA's chart ships "
        "`100%`: every node at once). Where a plugin runs on the node (or may, out of sight) and is not registered, the "
        "node has no ResourceSlice of the driver and its kubelet started "
        "recently (the kubelet's `Starting` event about the Node, stored in namespace `default`), the start wiped "
        "the node's slices and the plugin has likely not registered with the new kubelet. In a pod of several "
        "containers (NVIDIA's runs `gpus` and `compute-domains`), the container whose spec alone names the driver, or "
        "alone runs the binary that wrote its slices, is judged on its own readiness and restarts (pod Ready is every "
        "container's; a container's restarts are its own), and the message says it likely serves the driver: a "
        "crash-looping neighbour does not make it not ready. `kubectl dra devices` shows the same verdict per node. "
        "A plugin pod that is Ready since before the "
        "kubelet's last `not registered` means the kubelet did not register it: a kubelet `--root-dir` other than "
        "the plugin's registrar directory, an unsupported gRPC service, or a rejected registration; only the "
        "plugin's log says which. When no ResourceSlice of a driver exists, it says whether its DaemonSet matches "
        "no node (and why, for every node: NVIDIA's chart requires Node Feature Discovery's labels), has pods not ready, or runs and publishes nothing. A plugin that runs as a host service, or in a "
        "namespace kubectl-dra cannot list, is not seen: the message says so rather than guessing.",
    ),
    Rule(
        code="DRA608",
        name="cdi-injection-failed",
        severity="error",
        blocking=True,
        missing="driver",
        summary="The container runtime could not inject the CDI devices the driver prepared.",
        hint="Check that the runtime has CDI enabled (containerd 1.7: enable_cdi = true; cri-dockerd does not inject DRA "
        "CDI devices) and that the driver's CDI spec directory (/var/run/cdi) is the runtime's.",
        explanation="After NodePrepareResources succeeds the kubelet passes CDI device IDs to the runtime; the runtime resolves "
        "them against the CDI specs the driver wrote. `CDI device injection failed: unresolvable CDI devices ...` "
        "(event reason Failed, container waiting CreateContainerError) means the runtime found no spec for them.",
    ),
    Rule(
        code="DRA609",
        name="kubelet-claim-error",
        severity="error",
        blocking=True,
        missing="claim",
        summary="The kubelet could not prepare the pod's devices for a reason of the claim or of its own state, not of the "
        "driver.",
        hint="Read the message: a claim that cannot be read or lost its allocation, a pod not in the claim's reservedFor, "
        "a claim of the same name left in the kubelet's checkpoint by a force-deleted pod, or devices that skip node "
        "operations on a kubelet without the DRAOptionalNodeOperations feature gate (enable it there).",
        explanation="The kubelet reads each claim and checks the pod may use it before it calls any driver: `fetch "
        "ResourceClaim`, `pod ... is not allowed to use ResourceClaim`, `ResourceClaim ...: not allocated`, `old "
        "ResourceClaim with same name ... still exists (previous pod force-deleted?!)` come from the kubelet, not "
        "from the driver. `DRAOptionalNodeOperations feature gate is disabled on kubelet` (1.37): the claim's "
        "devices skip node operations (their ResourceSlice's `skipNodeOperations`) and this kubelet runs without "
        "the gate.",
    ),
    Rule(
        code="DRA611",
        name="kubelet-known-defect",
        severity="warning",
        blocking=False,
        missing="driver",
        summary="The pod's node runs a kubelet with a known DRA defect that matches what the pod shows.",
        hint="Upgrade the kubelet to the fixed patch release; restarting the kubelet clears the state meanwhile.",
        explanation="Kubelet 1.34.0 and 1.34.1 deadlock on the connection to a DRA driver that was idle for 30 minutes "
        "(kubernetes/kubernetes#133920, fixed in 1.34.2): the pod is bound, its claims are allocated and reserved, "
        "and the kubelet says nothing, or its calls time out.",
    ),
    Rule(
        code="DRA613",
        name="pod-terminating",
        severity="info",
        blocking=False,
        missing=None,
        summary="The pod is being deleted (Terminating): its devices stay allocated until the kubelet unprepares them "
        "and the pod is gone.",
        hint="If it stays Terminating, look at what keeps it: its finalizers (kubectl get pod -o yaml), a node whose "
        "kubelet is gone or NotReady, or the driver's kubelet plugin missing on the node (DRA612). Force-deleting "
        "it leaves the devices prepared on the node.",
        explanation="A pod with a deletionTimestamp is shown as Terminating by kubectl whatever its phase. The kubelet "
        "stops its containers, unprepares its claims' devices through the drivers' kubelet plugins and removes the "
        "pod; the resourceclaim controller then takes the pod out of the claims' reservedFor and deallocates them. "
        "Until then the devices are allocated, and the pods that want them wait for this pod, not for a delete.",
    ),
    Rule(
        code="DRA612",
        name="unprepare-waits-for-driver",
        severity="warning",
        blocking=False,
        missing="driver",
        summary="A pod being deleted waits for the kubelet to unprepare its devices through a driver plugin that is not "
        "running on its node.",
        hint="Bring the driver's kubelet plugin back on the node (see DRA607); force-deleting the pod leaves the "
        "devices prepared on the node.",
        explanation="Before a pod with allocated claims goes, the kubelet calls NodeUnprepareResources on each driver's plugin "
        "and retries while the plugin is missing; it emits no event, and the pod stays Terminating by design "
        "(kubernetes/kubernetes#129402: the kubelet cannot tell a driver gone for good from one restarting).",
    ),
]

REGISTRY: dict[str, Rule] = {r.code: r for r in _RULES}
BY_NAME: dict[str, Rule] = {r.name: r for r in _RULES}
assert len(REGISTRY) == len(_RULES) and len(BY_NAME) == len(_RULES), "duplicate code or name"
