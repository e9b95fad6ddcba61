"""-w: the universe's pools and the device matrices' rows, kept from one answer to the next per (driver, pool), so
that an update costs what changed.

A watch answers again after each change, and most changes touch one pool (a slice updated, a claim allocated): the
other pools' entries (universe.py Block) and their rows in each device matrix (checks.py) come out the same. The
watch replaces an object when it changes, and keeps the same object while it does not, so:

* a pool's block is kept while its slices are the same objects, in the same order (what a pool is depends on its
  own slices only: generations, validity, counters, the ignored slices);
* a block's rows in one matrix are kept while the block is the same and so is everything else a row reads: the
  request (name, class, spec, the class object), the version and gates, the pod's usable nodes (their names, why the
  others are not usable, and the labels and declared features of each, which node selectors and node operations
  read; not heartbeats), and what is allocated in the pool (which devices, to whom, the capacity in use, the
  claim's own: the in-use, capacity and counter checks).

Both go at the next answer that does not use them (the IdMemo generations of runtime.next_evaluation). One-shot
commands keep nothing (runtime.is_long_running)."""

from __future__ import annotations

from kubectl_dra.jsonio import value_key
from kubectl_dra.runtime import generational, is_long_running

_TABLES = 16  # distinct versions and gates, and matrices (request shape x node set) remembered; then the oldest goes


class _Kept:
    """key -> (what it was computed from, value), in two generations: an entry not used since the answer before
    the last goes."""

    __slots__ = ("__weakref__", "_before", "_now")

    def __init__(self):
        self._now: dict = {}
        self._before: dict = {}
        generational(self)

    def get(self, key, same):
        hit = self._now.get(key)
        if hit is None and self._before:
            hit = self._before.pop(key, None)
            if hit is not None:
                self._now[key] = hit
        if hit is not None and same(hit[0]):
            return hit[1]
        return None

    def put(self, key, source, value) -> None:
        self._now[key] = (source, value)

    def turn(self) -> None:
        self._before, self._now = self._now, {}


class _Blocks(_Kept):
    """Pool key -> its Block, computed from these slices."""

    __slots__ = ()

    def get(self, key, group: list):  # type: ignore[override]
        return super().get(key, lambda was: len(was) == len(group) and all(a is b for a, b in zip(was, group)))

    def put(self, key, group: list, block) -> None:  # type: ignore[override]
        super().put(key, tuple(group), block)


_BLOCKS: dict[tuple, _Blocks] = {}
_ROWS: dict[tuple, tuple] = {}  # matrix signature -> (what it read of the usable nodes, _Kept of rows per block)


def _bounded(table: dict) -> None:
    while len(table) > _TABLES:
        table.pop(next(iter(table)))


def _sem_key(sem) -> tuple:
    return (sem.version, tuple(sorted(sem.gates.items())))


def kept_blocks(sem) -> _Blocks | None:
    """The blocks kept for this version and gates, or None (a one-shot command)."""
    if not is_long_running():
        return None
    key = _sem_key(sem)
    kept = _BLOCKS.pop(key, None) or _Blocks()
    _BLOCKS[key] = kept  # the most recently used last
    _bounded(_BLOCKS)
    return kept


def kept_rows(req, ctx) -> _Kept | None:
    """The rows kept for this request and matrix context (per block), or None (a one-shot command)."""
    if not is_long_running():
        return None
    reach = ctx.reach
    sig = (
        req.name,
        req.class_name,
        value_key(req.class_obj),
        value_key(req.spec),
        _sem_key(ctx.sem),
        None if reach is None else (reach.all, tuple(sorted(reach.rejected.items()))),
    )
    nodes = () if reach is None else tuple(_node_read(n) for n in reach.usable)
    got = _ROWS.pop(sig, None)
    if got is None or got[0] != nodes:
        got = (nodes, _Kept())
    _ROWS[sig] = got
    _bounded(_ROWS)
    return got[1]


def _node_read(node: dict) -> tuple:
    """What a row reads of a usable node: its labels (node selectors) and declared features (node operations);
    not its conditions or heartbeats, which change all the time."""
    return ((node.get("metadata") or {}).get("labels"), (node.get("status") or {}).get("declaredFeatures"))


def allocated_by_pool(allocated, own: frozenset) -> dict:
    """(driver, pool) -> what is allocated of its devices, as the rows read it (in use, by whom, the capacity in
    use, the claim's own)."""
    out: dict = {}
    for did in set(allocated.devices) | set(allocated.aggregated_capacity) | set(own):
        out.setdefault(tuple(did[:2]), []).append(
            (
                tuple(did),
                did in allocated.devices,
                tuple((o, o in allocated.estimated) for o in allocated.owners.get(did) or ()),
                repr(allocated.aggregated_capacity.get(did)),
                did in own,
            )
        )
    return {k: tuple(sorted(v)) for k, v in out.items()}
