"""The process as a one-shot command runs it and as -w runs it for hours.

A one-shot command is a short process that builds hundreds of thousands of small dicts from the API objects and
makes few reference cycles: the CLI turns the cyclic collector off (it cost ~40% of an explain on 40,000 devices),
and what the analysis computes per object is remembered for the process (IdMemo). -w outlives both shortcuts:
after its first answer, long_running() turns the collector back on, and next_evaluation() before each answer
starts a new generation of every IdMemo, so that memory follows the objects the watch holds now, not every
object it ever saw."""

from __future__ import annotations

import gc
import weakref

_MEMOS: weakref.WeakSet = weakref.WeakSet()
_LONG_RUNNING = [False]


def is_long_running() -> bool:
    """Whether the process answers again and again (-w): what is worth remembering across answers (not in a
    one-shot command, which would only pay for storing it)."""
    return _LONG_RUNNING[0]


class IdMemo:
    """What was computed from an object, remembered by id(object). Each entry holds its object, so an id() cannot
    be reused while it is remembered. Up to `limit` entries, then it starts afresh (a cache only: results are the
    same). After next_evaluation(), the entries of the generation before are found once more (and kept) by the
    evaluation that uses them; the rest go at the next turn."""

    __slots__ = ("__weakref__", "_before", "_now", "limit")

    def __init__(self, limit: int):
        self._now: dict[int, tuple[object, object]] = {}
        self._before: dict[int, tuple[object, object]] = {}
        self.limit = limit
        _MEMOS.add(self)

    def get(self, obj, default=None):
        hit = self._now.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        if self._before:
            hit = self._before.pop(id(obj), None)
            if hit is not None and hit[0] is obj:
                now = self._now  # put(obj, hit[1]), keeping the entry: -w moves every unchanged object's here
                if len(now) >= self.limit:
                    now.clear()
                now[id(obj)] = hit
                return hit[1]
        return default

    def put(self, obj, value) -> None:
        if len(self._now) >= self.limit:
            self._now.clear()
        self._now[id(obj)] = (obj, value)

    def __len__(self) -> int:
        return len(self._now)

    def turn(self) -> None:
        self._before, self._now = self._now, {}


def long_running() -> None:
    """From here on the process lives as long as the user watches: collect what the first answer left, freeze
    what survives (the watched state: the collector need not walk it again), and turn the collector back on."""
    gc.collect()
    gc.freeze()
    gc.enable()
    _LONG_RUNNING[0] = True


def one_malloc_arena() -> None:
    """Before -w's threads start: glibc's malloc gives threads arenas of their own (up to 8 per core), and memory
    freed in an arena is reused by that arena only. -w's watch threads decode the objects that the main thread's
    answers replace and free, for hours: with one arena, what one frees the other reuses (measured: 15 % less
    resident memory at 1,000 nodes; docs/performance.md). Allocation runs under the interpreter's lock anyway, so
    one arena costs no parallelism. Elsewhere than glibc (no mallopt, or a no-op), nothing changes."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_ARENA_MAX, 1)


_M_ARENA_MAX = -8  # glibc malloc.h


def generational(memo) -> None:
    """memo (an object with turn()) starts a new generation before each answer, as an IdMemo does."""
    _MEMOS.add(memo)


def next_evaluation() -> None:
    """A new answer is about to be computed from a new snapshot: a new generation of every IdMemo."""
    for memo in list(_MEMOS):
        memo.turn()
