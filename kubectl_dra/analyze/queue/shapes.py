"""What the pods of one shape could take: per shape (the pending claims' specs and the usable nodes), the keys of
the devices and counters its claims could use, and whether all of them are node-local. The queue's simulation
splits pods into components by it (simulate.py); `devices --request` counts copies with it (reports/request_fit.py)."""

from __future__ import annotations

from kubectl_dra.findings.stages import Stage


class Shapes:
    """Per shape (the pending claims' specs and the usable nodes): the keys of the devices and counters its
    claims could take, and whether all of them are node-local."""

    def __init__(self, universe):
        self.universe = universe
        self.keys: dict = {}
        self.local: dict = {}
        self._pool_nodes: dict | None = None

    def pool_nodes(self) -> dict:
        if self._pool_nodes is None:
            self._pool_nodes = {}
            for e in self.universe.entries:
                self._pool_nodes.setdefault(e.pool_key, set()).add(e.node_name)
        return self._pool_nodes

    def add(self, plan) -> None:
        if plan.shape in self.keys:
            return
        keys, local = set(), True
        for a in plan.analyses:
            if a.allocated:
                continue
            for m in a.matrices.values():
                for v in m:
                    if v.outcome not in ("candidate", "selected") and v.stage is not Stage.CEL_ERROR:
                        continue
                    e = v.entry
                    keys.add(e.did)
                    if e.node_name is None:
                        local = False
                    if e.device.get("consumesCounters"):
                        keys.add(("counters",) + tuple(e.pool_key))
                        if len(self.pool_nodes().get(e.pool_key, ())) != 1:
                            local = False
        self.keys[plan.shape] = keys
        self.local[plan.shape] = local
