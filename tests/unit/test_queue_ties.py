"""queue/ties.py: a preemption whose nomination DefaultPreemption's criteria tie is dry-run once per tied node, and a
pod left open by the tie is certain only where every nomination gives it a certain answer and the same outcome. The
dry-runs here are stand-ins that return chosen places (the real dry-run: the golden preempt-tie-between-nodes, and
the queue agreement suite's seeds against the real scheduler, docs/fidelity.md)."""

from __future__ import annotations

from types import SimpleNamespace

from kubectl_dra.analyze.queue.judge import Place, Queue
from kubectl_dra.analyze.queue.outcomes import Outcome
from kubectl_dra.analyze.queue.ties import MAX_BRANCHES, with_ties


def _place(outcome, certain, node=None, devices=(), reason="r"):
    return Place(
        position=1, gated=False, outcome=outcome, certain=certain, node=node, devices=devices, ahead=(), reason=reason
    )


OPEN = _place(Outcome.UNDETERMINED, False, reason="tied")


def _runner(ties: dict, by_choice, more=None):
    """A dry-run stand-in: the first run (nothing forced) meets ties; a forced run gives by_choice(forced)."""
    calls = []

    def run(entries, forced):
        calls.append(dict(forced))
        if not forced:
            return Queue("b", ("ns/a", "ns/b"), {"ns/a": OPEN, "ns/b": OPEN}), ties
        return Queue("b", ("ns/a", "ns/b"), by_choice(forced)), (more or {})

    return run, calls


ENTRIES = [SimpleNamespace(gang=None), SimpleNamespace(gang=None)]


def test_each_tied_nomination_is_dry_run_and_a_pod_placed_in_every_one_is_certain():
    def by(forced):
        n = forced["ns/a"]
        return {
            "ns/a": _place(Outcome.FITS, True, n, (f"d/{n}",)),
            "ns/b": _place(Outcome.TAKEN, True),  # taken first whichever node
        }

    run, calls = _runner({"ns/a": ("node-1", "node-2")}, by)
    q = with_ties(ENTRIES, run)
    assert calls == [{}, {"ns/a": "node-1"}, {"ns/a": "node-2"}]
    a, b = q.places["ns/a"], q.places["ns/b"]
    assert a.certain and a.outcome == Outcome.FITS and a.devices == () and not a.exact
    assert "node-1 or node-2" in a.reason and "whichever one the scheduler nominates" in a.reason
    assert b.certain and b.outcome == Outcome.TAKEN and b.reason.endswith("(whichever node the tied preemption "
                                                                          "nominates: ns/a on node-1 or node-2)")  # fmt: skip


def test_a_pod_whose_outcome_differs_between_nominations_stays_open():
    def by(forced):
        fits = forced["ns/a"] == "node-1"
        return {
            "ns/a": _place(Outcome.FITS, True, forced["ns/a"]),
            "ns/b": _place(Outcome.FITS if fits else Outcome.TAKEN, True),
        }

    run, _ = _runner({"ns/a": ("node-1", "node-2")}, by)
    q = with_ties(ENTRIES, run)
    assert q.places["ns/b"] is OPEN and q.places["ns/a"].certain


def test_an_open_answer_in_one_nomination_leaves_the_pod_open():
    def by(forced):
        certain = forced["ns/a"] == "node-1"
        return {"ns/a": _place(Outcome.FITS, certain, forced["ns/a"]), "ns/b": _place(Outcome.FITS, True)}

    run, _ = _runner({"ns/a": ("node-1", "node-2")}, by)
    q = with_ties(ENTRIES, run)
    assert q.places["ns/a"] is OPEN and q.places["ns/b"].certain


def test_a_tie_the_nominations_do_not_settle_or_too_many_leave_the_first_dry_run():
    def by(forced):
        return {"ns/a": _place(Outcome.FITS, True), "ns/b": _place(Outcome.FITS, True)}

    run, calls = _runner({"ns/a": ("node-1", "node-2")}, by, more={"ns/b": ("node-1", "node-2")})
    assert with_ties(ENTRIES, run).places["ns/a"] is OPEN
    many = {f"ns/p{i}": ("node-1", "node-2") for i in range(4)}  # 16 combinations
    assert 2**4 > MAX_BRANCHES
    run, calls = _runner(many, by)
    assert with_ties(ENTRIES, run).places["ns/a"] is OPEN and calls == [{}]
    grouped = [SimpleNamespace(gang=object()), SimpleNamespace(gang=None)]  # a pod group's state is shared
    run, calls = _runner({"ns/a": ("node-1", "node-2")}, by)
    assert with_ties(grouped, run).places["ns/a"] is OPEN and calls == [{}]
