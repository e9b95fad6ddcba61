"""Pods compete: the pending pods that use DRA dry-run one after another in kube-scheduler's queue order, each
against the devices the pods ahead of it would take (the scheduler's in-flight allocations), with the allocator
and the per-pod analysis every other answer uses (one implementation: this module only orders the pods, feeds each
pod's dry-run the allocations of the pods ahead, and says what is certain).

Order (PrioritySort, 1.34-1.38): higher spec.priority first, then the time the pod entered the queue. The API shows
its creation time (seconds); a pod the scheduler already tried was re-queued at a time the API does not show. Pods
whose scheduling gates are still on are not in the queue: they come after the others, as if their gates were
removed in the same order.

What is certain (a confident wrong answer is the worst outcome, so anything else is DRA431, undetermined):
- a pod whose component (the pods whose candidate devices or counters overlap, transitively) has no pod ahead of
  it: its own answer;
- a component of identical pods (same claim specs, same usable nodes) on node-local devices: each node holds the
  same number of copies whatever the order, so exactly the first K fit (a tie straddling K is undetermined, the
  count stays certain: a shortfall);
- a chain in which every pod ahead had one node to go to (or none) and no two were tied: the dry-run is the
  scheduler's;
- on node-local devices, a pod that alone fits on more nodes than there are pods ahead of it in its component
  (each pod ahead takes devices on one node only): it fits;
- a pod that the rungs above leave open, whose competitors ahead are few: every order of theirs the API does not fix
  and every node each may go to is dry-run, and the answer is certain where all give it the same outcome
  (alternatives.py; the node and devices are named only where they are the same in all).
The counts (identical pods, one choice each) hold only where no pod outside the component, nor a pending pod without
DRA, may be ahead and take the cpu of a node the component needs (alternatives.py first_outsiders); the room proof
checks the cpu of the node it names.
The counts (identical pods, more nodes than pods ahead, a gang's) hold only where the pods ahead can only take
devices away: not for a pod whose search may reach a device its claims err on once the devices before it are taken
(exposed.py): an error on one node ends the scheduler's attempt, whatever room another node had.
Pods that share a pending claim are placed jointly: a pod whose every pending claim is shared with a pod ahead of
it that may use the same nodes follows it, and its answer is certain only where that pod's is; any other sharing is
undetermined.
A pod whose attempt errs alone (an error is not monotonic: the allocator skips a device in use before it evaluates
selectors on it) is dry-run at its turn as well: if it errs again, it takes nothing and its own answer stands (no
place); if not, the pods behind it count what it takes, and its own place is undetermined.

Modules: outcomes.py (the named values and queue_key), order.py (who takes part, in which order), simulate.py (the
dry-run in that order), rules.py (what is certain: the named rules and the second round), judge.py (the Place, the
proofs), alternatives.py (the orders and node choices the API does not fix), exposed.py (whose search may meet an
error once others take devices), retry.py (the scheduler's retries of a pod whose attempt errs), preempted.py (pods
that preempt, and room others may free), ties.py (a preemption's tied nominations, each dry-run), pod/score.py
(which node the scheduler's scores pick), others.py (pending pods without DRA), gang.py (pod groups), report.py
(judge_queue and the pod's report)."""

from kubectl_dra.analyze.queue.judge import Ahead, Place, Queue, Shortfall
from kubectl_dra.analyze.queue.order import BASIS, Entry, order
from kubectl_dra.analyze.queue.report import judge_queue, place_reports, queue_finding, with_place

__all__ = [
    "Ahead",
    "BASIS",
    "Entry",
    "Place",
    "Queue",
    "Shortfall",
    "judge_queue",
    "place_reports",
    "order",
    "queue_finding",
    "with_place",
]
