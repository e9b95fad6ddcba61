"""kubectl_dra/runtime.py: -w as a long-running process. The id()-keyed memos hold what the last evaluations used,
not every object the process saw; the cyclic collector is back on after the first answer."""

from __future__ import annotations

import gc

from kubectl_dra import runtime
from kubectl_dra.analyze.allocator import pools
from kubectl_dra.runtime import IdMemo


def test_a_memo_keeps_what_the_last_evaluation_used():
    memo = IdMemo(100)
    kept, dropped = {"name": "kept"}, {"name": "dropped"}
    memo.put(kept, 1)
    memo.put(dropped, 2)
    runtime.next_evaluation()
    assert memo.get(kept) == 1  # used by this evaluation: carried into its generation
    runtime.next_evaluation()
    assert memo.get(kept) == 1 and memo.get(dropped) is None and len(memo) == 1


def test_a_memo_never_answers_for_another_object_with_a_recycled_id():
    memo = IdMemo(100)
    memo.put({"a": 1}, "for a dict that is gone")  # the entry holds it: its id() cannot come back
    assert all(memo.get({"b": i}) is None for i in range(1000))


def test_a_memo_starts_afresh_at_its_limit():
    memo = IdMemo(3)
    objs = [{"i": i} for i in range(4)]
    for o in objs:
        memo.put(o, o["i"])
    assert len(memo) == 1 and memo.get(objs[3]) == 3 and memo.get(objs[0]) is None


def test_slice_digests_follow_the_watched_slices():
    """A watch replaces a slice object at each update; after two evaluations only the current objects remain."""
    for _ in range(3):
        runtime.next_evaluation()  # leave nothing from other tests
    for update in range(50):
        current = [{"metadata": {"name": f"s{i}"}, "spec": {"devices": [{"name": f"d{update}"}]}} for i in range(10)]
        runtime.next_evaluation()
        for s in current:
            assert pools.slice_digest(s).names == (f"d{update}",)
    assert len(pools._DIGESTS) == 10 and len(pools._DIGESTS._before) <= 10


def test_long_running_turns_the_collector_back_on():
    gc.disable()
    try:
        runtime.long_running()
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()
