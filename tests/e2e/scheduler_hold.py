"""kube-scheduler held off by its own leader election while a test creates pods, so that every pod is in its queue,
in the order the pods were created, before it schedules any (issue 45 item 5).

Why the Lease holds it, in kube-scheduler v1.37.2's cmd/kube-scheduler/app/server.go (`Run`):
`startInformersAndWaitForSync` starts the informers, waits for their caches and for `sched.WaitForHandlersSync` (every
item of the initial lists delivered to the event handlers, which add each unscheduled pod to the scheduling queue:
pkg/scheduler/eventhandlers.go `addPodToSchedulingQueue` -> `PriorityQueue.Add`, stamped with the time it is added),
and it runs before leader election unless `DelayCacheUntilActive` is set (it is not by default); only
`OnStartedLeading` calls `sched.Run`, which starts the `ScheduleOne` loop that pops the queue. So while a test holds
the Lease kube-system/kube-scheduler, the scheduler's informers keep adding the pods created meanwhile to its active
queue, each as its watch event arrives (creation order), and nothing is scheduled; when the Lease is deleted the
scheduler takes it on its next retry (--leader-elect-retry-period, 500ms here) and pops the queue in PrioritySort's
order (priority, then that timestamp).

A running leader cannot be told to stand down: it keeps scheduling until its renew deadline passes, then exits. So
`SchedulerHold.take` stops it (SIGTERM: it releases the Lease), takes the Lease for the test, and starts it again;
the new process lists the pods that already exist (those of other tests: in the informer's list order, which is why
DRA431 warns that after a restart or fail-over the order of one priority is not the creation order), and the pods the
test creates from then on reach its queue by watch, in creation order. SIGSTOP (Cluster.scheduler_paused) is
different: on SIGCONT the scheduler may pop the first pod delivered before the other pods' watch events arrive.
"""

from __future__ import annotations

import threading
import time

from e2e_helpers import clusterlib, wait_for

HOLDER = "kubectl-dra-e2e-test"
LEASE = clusterlib.SCHEDULER_LEASE
LEASE_SECONDS = 30  # if the test dies holding it, the scheduler leads again this long after the last renewal
RENEW_SECONDS = 5


class SchedulerHold:
    """The Lease kube-system/kube-scheduler held by the test (renewed in a thread) and a kube-scheduler waiting for it."""

    def __init__(self, state: dict, api):
        self.state, self.api = state, api
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.taken_at = 0.0
        self.released_in = 0.0  # seconds from the Lease's deletion to the scheduler's holding it

    def _lease(self) -> dict:
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "kube-scheduler", "namespace": "kube-system"},
            "spec": {
                "holderIdentity": HOLDER,
                "leaseDurationSeconds": LEASE_SECONDS,
                "acquireTime": clusterlib.now_micro(),
                "renewTime": clusterlib.now_micro(),
            },
        }

    def _write(self) -> None:
        old = self.api.get(LEASE, ok404=True)
        if old is None:
            self.api.post(LEASE.rsplit("/", 1)[0], self._lease())
            return
        old["spec"] = {**old["spec"], **self._lease()["spec"]}
        self.api.put(LEASE, old)

    def _renew(self) -> None:
        while not self._stop.wait(RENEW_SECONDS):
            try:
                lease = self.api.get(LEASE)
                lease["spec"]["renewTime"] = clusterlib.now_micro()
                self.api.put(LEASE, lease)
            except clusterlib.ApiError:  # a conflict: the next round renews it
                continue

    def take(self) -> None:
        clusterlib.restart_scheduler(self.state, between=self._write)
        assert clusterlib.scheduler_leader(self.api) == HOLDER, "the Lease was not the test's after the restart"
        self._thread = threading.Thread(target=self._renew, name="scheduler-lease", daemon=True)
        self._thread.start()
        self.taken_at = time.monotonic()

    def release(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(10)
        t0 = time.monotonic()
        self.api.delete(LEASE)
        wait_for(
            "kube-scheduler to take its Lease",
            lambda: clusterlib.scheduler_leader(self.api) not in ("", HOLDER),
            30,
            0.1,
        )
        self.released_in = round(time.monotonic() - t0, 2)
