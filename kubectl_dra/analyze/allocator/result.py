"""The allocation result of a claim (upstream: allocator.go result building, createNodeSelector). A part of
the search run (_Run), as a mixin."""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_dra.analyze.allocator.common import AllocationError
from kubectl_dra.analyze.allocator.pools import slice_spec
from kubectl_dra.analyze.allocator.requests import Request, claim_requests


@dataclass
class AllocationResult:
    results: list  # [{request, driver, pool, device, adminAccess?, consumedCapacity?, tolerations?}]
    node_selector: dict | None
    config: list


class ResultBuilding:
    """Result entries, node selector and config of a claim; mixed into search._Run."""

    # -- result ------------------------------------------------------------------------------------
    def _result(self, ci: int) -> AllocationResult:
        claim = self.claims[ci]
        out = []
        for res in self.results[ci]:
            r = self._request_for(ci, res["request"])
            entry = {k: v for k, v in res.items() if not k.startswith("_")}
            if self.sem.behaviour.result_copies_tolerations and r is not None and r.tolerations:
                entry["tolerations"] = r.tolerations
            d = res["_device"]
            if self.sem.binding_conditions and d.get("bindingConditions"):
                entry["bindingConditions"] = d.get("bindingConditions")
                entry["bindingFailureConditions"] = d.get("bindingFailureConditions")
            if res.get("_shared"):
                entry["shareID"] = "<generated>"
            out.append(entry)
        try:
            node_selector = self._node_selector(self.results[ci])
        except AllocationError as e:
            name = (claim.get("metadata") or {}).get("name", "")
            raise AllocationError(f"create NodeSelector for claim {name}: {e.message}", kind=e.kind) from None
        return AllocationResult(results=out, node_selector=node_selector, config=self._config(ci, claim))

    def _request_for(self, ci: int, name: str) -> Request | None:
        for r in self.requests.values():
            if r.claim_index == ci and r.name == name:
                return r
        return None

    def _node_selector(self, results: list[dict]) -> dict | None:
        fields: list[dict] = []
        exprs: list[dict] = []
        node_name = (self.node.get("metadata") or {}).get("name", "")
        for res in results:
            s, d = res["_slice"], res["_device"]
            spec = slice_spec(s)
            if spec.get("perDeviceNodeSelection"):
                nn, ns = d.get("nodeName"), d.get("nodeSelector")
            else:
                nn, ns = spec.get("nodeName"), spec.get("nodeSelector")
            if nn or d.get("bindsToNode"):
                return {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                    ]
                }
            if ns is not None:
                terms = ns.get("nodeSelectorTerms") or []
                if len(terms) > 1:
                    raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
                if terms:
                    for src, dst in (
                        (terms[0].get("matchFields") or [], fields),
                        (terms[0].get("matchExpressions") or [], exprs),
                    ):
                        for req in src:
                            if not any(
                                e.get("key") == req.get("key")
                                and e.get("operator") == req.get("operator")
                                and set(e.get("values") or []) == set(req.get("values") or [])
                                for e in dst
                            ):
                                dst.append(req)
        if fields or exprs:
            term = {}
            if exprs:
                term["matchExpressions"] = exprs
            if fields:
                term["matchFields"] = fields
            return {"nodeSelectorTerms": [term]}
        return None

    def _config(self, ci: int, claim: dict) -> list:
        out: list[dict] = []
        reqs = claim_requests(claim)
        by_class: dict[str, tuple[int, int]] = {}
        for ri, _ in enumerate(reqs):
            r = self.requests.get((ci, ri, -1)) or self.requests.get((ci, ri, self.selected_sub.get((ci, ri), 0)))
            if r is None or r.class_obj is None:
                continue
            cname = r.class_name
            if cname in by_class:
                a, b = by_class[cname]
                for i in range(a, b):
                    out[i]["requests"].append(r.name)
                continue
            start = len(out)
            for cfg in (r.class_obj.get("spec") or {}).get("config") or []:
                out.append(dict(cfg, source="FromClass", requests=[r.name]))
            by_class[cname] = (start, len(out))
        for cfg in ((claim.get("spec") or {}).get("devices") or {}).get("config") or []:
            wanted = cfg.get("requests") or []
            if not wanted:
                out.append(dict(cfg, source="FromClaim"))
                continue
            for ri, req in enumerate(reqs):
                if req.get("name") in wanted:
                    out.append(dict(cfg, source="FromClaim"))
                    continue
                if (ci, ri) in self.selected_sub:
                    sub = (req.get("firstAvailable") or [])[self.selected_sub[(ci, ri)]]
                    if f"{req.get('name')}/{sub.get('name')}" in wanted:
                        out.append(dict(cfg, source="FromClaim"))
        return out
