"""-w updates (issue 31): what an answer computed from an object is remembered across answers, keyed by the object
itself, so an update pays for what changed; a changed slice (a new object, as a watch delivers it) gives the
changed answer. The watch session checks the shapes of the objects that changed only."""

from __future__ import annotations

import sys

import pytest

from kubectl_dra import runtime
from kubectl_dra.analyze.devices import blocks, checks
from kubectl_dra.analyze.reports.explain import explain_pods
from kubectl_dra.errors import DraError
from kubectl_dra.gather.watch import LiveSession
from tests.unit.test_queue import CLASS, DRIVER, NS, S37, claim, gpus, node, pod, snapshot_from_objects


@pytest.fixture
def watching():
    """As after -w's first answer (runtime.long_running, without touching the collector)."""
    before = runtime._LONG_RUNNING[0]
    runtime._LONG_RUNNING[0] = True
    checks._READ_KEYS.clear()
    blocks._BLOCKS.clear()
    blocks._ROWS.clear()
    yield
    runtime._LONG_RUNNING[0] = before
    checks._READ_KEYS.clear()
    blocks._BLOCKS.clear()
    blocks._ROWS.clear()


def model_slice(model: str) -> dict:
    s = gpus("node-a", "gpu-0", "gpu-1")
    for d in s["spec"]["devices"]:
        d["attributes"] = {"model": {"string": model}, "uuid": {"string": f"GPU-{d['name']}"}}
    return s


def verdict(objs) -> str:
    runtime.next_evaluation()
    v = explain_pods(snapshot_from_objects(objs, NS), S37, [(NS, "web")])[0].verdict
    assert v.determined, v
    return "blocked" if v.blocked else "fits"


def test_a_changed_slice_gives_the_changed_answer(watching):
    rest = [node("node-a"), CLASS, claim("web-gpu", selectors=[f'device.attributes["{DRIVER}"].model == "H100"'])]
    rest.append(pod("web", "2026-01-01T00:00:00Z"))
    a100 = model_slice("A100")
    assert verdict([a100, *rest]) == "blocked"
    assert verdict([a100, *rest]) == "blocked"  # the same objects: the pool's rows come from the memo
    assert any(table._now for _nodes, table in blocks._ROWS.values())
    h100 = model_slice("H100")  # the watch's next version of the slice: new objects
    assert verdict([h100, *rest]) == "fits"
    assert verdict([a100, *rest]) == "blocked"  # and back


def test_a_device_object_under_another_driver_is_keyed_again(watching):
    """The memo holds the driver with each key: one device object (as YAML anchors could share it) read under
    another driver gets that driver's key (its unqualified attribute names are that driver's), as without the
    memo."""
    from kubectl_dra.analyze.allocator import SelectorEvaluator
    from kubectl_dra.analyze.devices.universe import DeviceEntry

    device = {"name": "gpu-0", "attributes": {"model": {"string": "H100"}}}
    sel = [{"cel": {"expression": f'device.attributes["{DRIVER}"].model == "H100"'}}]
    ours = DeviceEntry((DRIVER, "p", "gpu-0"), device, {}, (DRIVER, "p"))
    theirs = DeviceEntry(("other.example.com", "p", "gpu-0"), device, {}, ("other.example.com", "p"))
    for _ in range(2):
        runtime.next_evaluation()
        read = checks.keyer(SelectorEvaluator(S37), sel)
        assert read(ours) != read(theirs)
        assert read(theirs) == checks._make_keyer(SelectorEvaluator(S37), [sel])(theirs)


def test_read_key_memos_are_bounded(watching):
    from kubectl_dra.analyze.allocator import SelectorEvaluator

    ev = SelectorEvaluator(S37)
    for i in range(checks._READ_KEY_MEMOS + 10):
        checks.keyer(ev, [{"cel": {"expression": f'device.attributes["{DRIVER}"].n == {i}'}}])
    assert len(checks._READ_KEYS) == checks._READ_KEY_MEMOS


def test_a_one_shot_command_remembers_nothing_across_answers():
    from kubectl_dra.analyze.allocator import SelectorEvaluator

    before = runtime._LONG_RUNNING[0]
    runtime._LONG_RUNNING[0] = False
    try:
        checks._READ_KEYS.clear()
        checks.keyer(SelectorEvaluator(S37), [{"cel": {"expression": "true"}}])
        assert not checks._READ_KEYS
    finally:
        runtime._LONG_RUNNING[0] = before


class _Record:
    def __init__(self, kind, items):
        self.path, self.kind, self.api_version, self.query, self.rv, self.items = "/x", kind, "v1", {}, "1", items


def _session(slices):
    meta = {"gaps": (), "server_version": "v1.37.0", "resource_api_version": "v1", "namespace": NS,
            "listed": frozenset(), "bound_pods": True}  # fmt: skip
    return LiveSession(None, [_Record("ResourceSlice", slices)], [], meta)


def test_the_watch_checks_the_shape_of_what_changed():
    s = _session([gpus("node-a", "gpu-0")])
    assert len(s.snapshot().slices) == 1
    src = s.sources[0]
    kept = next(iter(src.objects.values()))
    assert s.checked == {id(kept): kept}
    bad = gpus("node-b", "gpu-0")
    bad["spec"]["devices"] = [["not", "a", "mapping"]]
    src.objects[("", "node-b-gpus", "")] = bad  # what a watch event would deliver
    with pytest.raises(DraError, match="must be a mapping"):
        s.snapshot()
    del src.objects[("", "node-b-gpus", "")]
    good = gpus("node-b", "gpu-0")
    src.objects[("", "node-b-gpus", "")] = good
    assert len(s.snapshot().slices) == 2
    assert s.checked == {id(kept): kept, id(good): good}  # a deleted object is not held
    del src.objects[("", "node-a-gpus", "")]
    s.snapshot()
    assert s.checked == {id(good): good}


class _Held(LiveSession):
    """A session whose watches are not started (no server here): the first change it waits for is Ctrl-C, and
    by then the loop must have let go of the gathered snapshot."""

    def start(self) -> None:
        pass

    def wait_for_change(self, settle: float = 0.3, poll: float = 0.5) -> None:
        import gc

        gc.collect()
        self.first_alive = self.first_ref() is not None
        raise KeyboardInterrupt


@pytest.mark.parametrize("command", ["status", "explain"])
def test_watching_lets_go_of_the_gathered_snapshot(command, capsys, monkeypatch):
    """-w lives for hours: the gather's snapshot answers first and is not kept after (it would hold every object
    of the cluster as it was, beside the ones the watch replaced them with)."""
    import weakref

    from kubectl_dra.analyze.reports.status import scan
    from kubectl_dra.cli import watch
    from kubectl_dra.cli.options import Options

    monkeypatch.setattr(runtime, "long_running", lambda: None)  # the collector stays as the test runner has it
    objs = [node("node-a"), CLASS, gpus("node-a", "gpu-0"), claim("web-gpu"), pod("web", "2026-01-01T00:00:00Z")]
    session = _Held(None, [_Record(o["kind"], [o]) for o in objs], [], _session([]).meta)
    snap = session.snapshot()
    session.first_ref = weakref.ref(snap)
    o = Options(NS, False, None, None, None, "text", (), None, {}, False, False, True, False)
    first = [snap]
    del snap
    with pytest.raises(SystemExit) as exit_:
        if command == "status":
            watch.watch_status(o, session, first, lambda s: scan(s, S37, NS, None, ()))
        else:
            watch.watch_pod(o, session, first, NS, "web")
    assert exit_.value.code == 130
    assert "web" in capsys.readouterr().out  # the first answer was given, from that snapshot
    assert session.first_alive is False


def test_the_gather_of_a_watch_keeps_no_listed_object_but_in_the_session(tmp_path):
    """gather_live(watch=True) against a loopback API server: once the watch replaces a listed slice, nothing holds
    the listed one any more (the gather's per-page callback stayed on the client, which the session keeps for hours,
    and held every object listed beside its replacement: the drift the soak measured, +1 object per object replaced
    the first time)."""
    import gc
    import json

    from loopback import Handler, kubeconfig, serve, url

    from kubectl_dra.gather.live import gather_live
    from kubectl_dra.gather.result import LiveRequest

    slices = {"metadata": {"resourceVersion": "7"}, "items": [gpus("node-a", "gpu-0")]}

    class Api(Handler):
        def do_GET(self):
            path = self.path.split("?")[0]
            if path == "/version":
                return self.send_json(200, {"gitVersion": "v1.37.2"})
            if path == "/apis/resource.k8s.io":
                return self.send_json(200, {"kind": "APIGroup", "name": "resource.k8s.io", "versions": [{"groupVersion": "resource.k8s.io/v1", "version": "v1"}]})  # fmt: skip
            if path.endswith("/resourceslices"):
                return self.send_json(200, raw=json.dumps(slices).encode())
            if path.rsplit("/", 1)[-1] in ("pods", "events", "nodes", "deviceclasses", "resourceclaims", "resourceclaimtemplates", "daemonsets", "namespaces") or "/namespaces/" in path:  # fmt: skip
                return self.send_json(200, {"metadata": {"resourceVersion": "7"}, "items": []})
            return self.send_json(404, {"kind": "Status", "code": 404, "reason": "NotFound"})

    with serve(Api) as srv:
        got = gather_live(
            LiveRequest(all_namespaces=True, partial=True, watch=True),
            kubeconfig=str(kubeconfig(tmp_path / "kc", {"server": url(srv)})),
            context=None,
            timeout=30,
        )
    session = got.session
    src = next(x for x in session.sources if x.kind == "ResourceSlice")
    ((key, listed),) = src.objects.items()
    assert listed["metadata"]["name"] == "node-a-gpus"
    del got
    changed = json.loads(json.dumps(listed))
    changed["metadata"]["resourceVersion"] = "8"
    session._apply(src, {"type": "MODIFIED", "object": changed})
    assert src.objects[key] is changed
    session.snapshot()
    gc.collect()
    holders = [r for r in gc.get_referrers(listed) if r is not locals() and not isinstance(r, type(sys._getframe()))]
    assert holders == [], [type(r).__name__ for r in holders]


def _event(name: str, rv: str) -> dict:
    return {"kind": "Event", "apiVersion": "v1", "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}",
            "resourceVersion": rv}, "reason": "FailedScheduling", "message": f"{name} at {rv}"}  # fmt: skip


def test_a_relist_keeps_the_objects_it_holds_at_the_same_version(tmp_path):
    """A relist (410 Gone: Events, which have no watch cache, after each etcd compaction) gives every object again;
    one at the version held is the held object, page by page (no second copy of the list, and what the answers
    remember of it stays valid); a changed one is the new one; one no longer listed is gone."""
    import json

    from loopback import Handler, kubeconfig, serve, url

    from kubectl_dra.gather.client import Client

    listed = [_event("a", "10"), _event("b", "12"), _event("c", "13")]

    class Events(Handler):
        def do_GET(self):
            limit = 2 if "limit=2" in self.path else len(listed)
            start = 2 if "continue=next" in self.path else 0
            page = listed[start : start + limit]
            more = {"continue": "next"} if start + limit < len(listed) else {}
            self.send_json(200, raw=json.dumps({"metadata": {"resourceVersion": "20", **more}, "items": page}).encode())

    held_a, held_b, held_gone = _event("a", "10"), _event("b", "11"), _event("z", "5")
    with serve(Events) as srv:
        c = Client(kubeconfig(tmp_path / "kc", {"server": url(srv)}), None, 30, chunk_size=2)
        s = LiveSession(c, [_Record("Event", [held_a, held_b, held_gone])], [], _session([]).meta)
        src = s.sources[0]
        src.path = "/api/v1/events"
        s._relist(src)
    got = {k[1]: o for k, o in src.objects.items()}
    assert set(got) == {"a", "b", "c"} and src.rv == "20" and src.relists == 1
    assert got["a"] is held_a  # the same version: the object held, not the copy the list decoded
    assert got["b"] is not held_b and got["b"]["metadata"]["resourceVersion"] == "12"
    assert got["c"]["message"] == "c at 13"


def _live(type_name: str) -> int:
    import gc

    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o).__name__ == type_name)


def test_answers_leave_no_cel_call_behind(watching):
    """cel-expr-python 0.1.3 never releases the arguments (and result) of a function implemented in Python: every
    compareTo of a quantity keeps two Quantity messages for good (cel/environment.py environment_for). -w keeps
    one environment across answers, whose compiled selectors remember results by the values read: the watch's
    new slice objects with the values seen before make no new call, so the answers leave nothing behind."""
    import copy

    sel = f'device.capacity["{DRIVER}"].memory.compareTo(quantity("20Gi")) >= 0'
    rest = [node("node-a"), CLASS, claim("web-gpu", selectors=[sel]), pod("web", "2026-01-01T00:00:00Z")]
    held = gpus("node-a", "gpu-0", "gpu-1")
    for _ in range(3):
        assert verdict([held, *rest]) == "fits"
    before = _live("Quantity")
    for _ in range(40):
        held = copy.deepcopy(held)  # the watch's next version of the slice: new objects, the same values
        assert verdict([held, *rest]) == "fits"
    assert _live("Quantity") - before < 5  # before: +2 an answer


def test_the_kept_environment_holds_only_the_last_answers_devices(watching):
    """The kept environment's activations (built per device object) follow the watched objects: after two
    answers on new slice objects nothing of the replaced ones is held."""
    import copy

    from kubectl_dra.cel.environment import environment_for

    sel = f'device.capacity["{DRIVER}"].memory.compareTo(quantity("20Gi")) >= 0'
    rest = [node("node-a"), CLASS, claim("web-gpu", selectors=[sel]), pod("web", "2026-01-01T00:00:00Z")]
    env = environment_for(S37.version, S37.list_attributes)
    held = gpus("node-a", "gpu-0", "gpu-1")
    old = held["spec"]["devices"]
    assert verdict([held, *rest]) == "fits"
    env._activation(old[0])
    for _ in range(2):
        held = copy.deepcopy(held)
        assert verdict([held, *rest]) == "fits"
    assert environment_for(S37.version, S37.list_attributes) is env
    assert all(
        entry[0] is not old[0] for gen in (env._act_cache._now, env._act_cache._before) for entry in gen.values()
    )


def test_a_one_shot_command_gets_a_new_environment():
    from kubectl_dra.cel.environment import environment_for

    before = runtime._LONG_RUNNING[0]
    runtime._LONG_RUNNING[0] = False
    try:
        assert environment_for(S37.version, S37.list_attributes) is not environment_for(S37.version, False)
        assert environment_for((1, 37), False) is not environment_for((1, 37), False)
    finally:
        runtime._LONG_RUNNING[0] = before
