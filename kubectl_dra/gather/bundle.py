"""`kubectl dra dump`: every object kubectl-dra reads for its answers, as one `kind: List` that `--from-file` reads
back with the same answers (the first item, `kind: Bundle`, carries what is not an object: the server version,
the resource.k8s.io versions served, the namespace, when it was read, and what could not be read).

Nothing else: no Secrets or ConfigMaps (kubectl-dra never reads them), no managedFields (but the field managers'
names of ResourceSlices: which binary wrote them, for the driver piece), no last-applied annotations, and no
environment values (container `env` keeps each variable's name only, and the value of a variable whose name says it
holds a DRA driver's name, e.g. DRIVER_NAME, which ties a kubelet plugin to its driver; `envFrom` is dropped)."""

from __future__ import annotations

from datetime import datetime, timezone

from kubectl_dra.errors import DraError
from kubectl_dra.model.snapshot import Gap

BUNDLE_API = "kubectl-dra/v1alpha1"
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _scrub_pod_spec(spec: dict) -> dict:
    """A copy of a pod spec whose containers keep their variables' names only (copies of what changes: the rest is
    shared with the object read)."""
    spec = dict(spec)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        if not isinstance(spec.get(key), list):
            continue
        spec[key] = [_scrub_container(c) if isinstance(c, dict) else c for c in spec[key]]
    return spec


def _scrub_container(c: dict) -> dict:
    c = dict(c)
    if isinstance(c.get("env"), list):
        c["env"] = [_env(e) for e in c["env"] if isinstance(e, dict)]
    c.pop("envFrom", None)
    return c


def _env(e: dict) -> dict:
    name = e.get("name")
    if isinstance(name, str) and "DRIVER" in name.upper() and isinstance(e.get("value"), str):
        return {"name": name, "value": e["value"]}
    return {"name": name}


def scrub(obj: dict) -> dict:
    """A copy without managedFields (a ResourceSlice keeps its managers' names), the last-applied annotation and
    environment values (but a driver's name). Only what changes is copied: the rest is shared with obj, which is
    left as it was (the bundle is written out, never changed)."""
    o = dict(obj)
    meta = o.get("metadata")
    if isinstance(meta, dict):
        meta = o["metadata"] = dict(meta)
        managers = [m.get("manager") for m in meta.pop("managedFields", None) or [] if isinstance(m, dict)]
        if o.get("kind") == "ResourceSlice" and any(isinstance(m, str) for m in managers):
            meta["managedFields"] = [{"manager": m} for m in managers if isinstance(m, str)]
        ann = meta.get("annotations")
        if isinstance(ann, dict) and _LAST_APPLIED in ann:
            meta["annotations"] = {k: v for k, v in ann.items() if k != _LAST_APPLIED}
    spec = o.get("spec")
    if isinstance(spec, dict):
        if o.get("kind") == "Pod":
            spec = o["spec"] = _scrub_pod_spec(spec)
        tpl = spec.get("template")
        if isinstance(tpl, dict) and isinstance(tpl.get("spec"), dict):
            o["spec"] = {**spec, "template": {**tpl, "spec": _scrub_pod_spec(tpl["spec"])}}
    return o


def bundle(raw: list[dict], snap, scope: dict) -> dict:
    """The bundle document: a List of the Bundle header and the scrubbed objects."""
    discovery = next((x["discovery"] for x in raw if "discovery" in x and "kind" not in x), {})
    objs = [scrub(x) for x in raw if "kind" in x]
    header = {
        "apiVersion": BUNDLE_API,
        "kind": "Bundle",
        "metadata": {"name": "kubectl-dra-bundle"},
        "serverVersion": snap.server_version,
        "resourceApiVersion": snap.resource_api_version,
        "discovery": discovery,
        "namespace": snap.namespace,
        "scope": scope,
        "observedAt": snap.observed_at or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "gaps": [g.to_dict() for g in snap.gaps],
        "listed": sorted(snap.listed),
        "boundPods": snap.bound_pods,  # every node's bound pods are in the bundle (NodeResourcesFit)
    }
    return {"apiVersion": "v1", "kind": "List", "items": [header, *objs]}


def read_header(doc: dict) -> dict:
    """What a Bundle header restores in the snapshot (server version, namespace, time, gaps)."""
    try:
        gaps = tuple(
            Gap(str(g["verb"]), str(g["resource"]), g.get("namespace"), str(g["reason"]), str(g["message"]))
            for g in doc.get("gaps") or []
        )
    except (KeyError, TypeError):
        raise DraError("the bundle's gaps are malformed") from None
    out = {
        "server_version": doc.get("serverVersion"),
        "resource_api_version": doc.get("resourceApiVersion"),
        "namespace": doc.get("namespace"),
        "observed_at": doc.get("observedAt"),
        "gaps": gaps,
        "listed": frozenset(str(x) for x in doc.get("listed") or [] if isinstance(x, str)),
        "bound_pods": doc.get("boundPods") is True,
    }
    for k in ("server_version", "resource_api_version", "namespace", "observed_at"):
        if out[k] is not None and not isinstance(out[k], str):
            raise DraError(f"the bundle's {k} is not a string")
    return out


# The HTML report (render/html.py) carries the bundle as an HTML comment: gzip, then base64 (no "-" or ">", so the
# comment cannot end early), between these marks; files.py reads a file that holds one as that bundle.
HTML_START = "<!-- kubectl-dra-bundle:gzip+base64:"
HTML_END = " -->"


def html_comment(doc: dict) -> str:
    """The bundle document as the HTML report embeds it."""
    import base64
    import gzip

    from kubectl_dra import jsonio

    data = gzip.compress(jsonio.dumps_utf8(doc), compresslevel=6, mtime=0)
    return HTML_START + base64.b64encode(data).decode("ascii") + HTML_END


def from_html(data: bytes, name: str) -> dict:
    """The bundle an HTML report embeds (html_comment), or a DraError naming the file."""
    import base64
    import binascii
    import gzip
    import zlib

    from kubectl_dra import jsonio

    start = data.find(HTML_START.encode())
    end = data.find(HTML_END.encode(), start + len(HTML_START)) if start >= 0 else -1
    if start < 0 or end < 0:
        raise DraError(f"{name}: an HTML file without kubectl-dra's embedded input (make it with kubectl dra report)")
    try:
        raw = gzip.decompress(base64.b64decode(data[start + len(HTML_START) : end], validate=True))
    except (binascii.Error, OSError, EOFError, zlib.error):
        raise DraError(f"{name}: the report's embedded input is damaged") from None
    doc = jsonio.loads_utf8(raw)
    if doc is None:
        try:
            doc = jsonio.loads(raw.decode("utf-8"))
        except ValueError:
            doc = None
    if not isinstance(doc, dict):
        raise DraError(f"{name}: the report's embedded input is not a bundle")
    return doc
