"""The queue's certain answers against a brute force of the scheduler's queue (tests/queue_brute.py, issue 45): on
random small clusters of identical GPUs, every pod that `status` answers OK must get a node in every order of the
pods tied in the queue and every node choice of each, and every pod it answers Blocked in none. Undetermined is
never wrong; it is counted, and most of the pods that every alternative decides must be answered (the orders and
node choices the API does not fix are tried: analyze/queue/alternatives.py)."""

from __future__ import annotations

import json

import pytest
from clirun import run
from queue_brute import brute, random_queue

SEEDS = range(60)


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> list:
    """(seed, pod, state, the brute force's outcomes) for every pending pod of every seed the brute force decides."""
    out = []
    d = tmp_path_factory.mktemp("queues")
    for seed in SEEDS:
        objs, model = random_queue(seed)
        truth = brute(model)
        assert truth is not None, seed
        path = d / f"{seed}.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
        doc = json.loads(run(["status", "-A", "-o", "json", "--from-file", str(path)]).stdout)
        out += [(seed, r["pod"], r["state"], truth[r["pod"]]) for r in doc["items"] if r["pod"] in truth]
    return out


def test_no_certain_answer_is_contradicted_by_any_order_or_node_choice(answers):
    wrong = [(s, p, st, sorted(t)) for s, p, st, t in answers if st != "Unknown" and t != {st == "OK"}]
    assert not wrong, wrong


def test_most_pods_that_every_alternative_decides_are_answered(answers):
    decided = [a for a in answers if len(a[3]) == 1]
    open_ = [a for a in decided if a[2] == "Unknown"]
    # (measured: 7 of 229 on these seeds; 64 before the alternatives were tried)
    assert len(open_) <= 0.1 * len(decided), (len(open_), len(decided), open_[:10])
