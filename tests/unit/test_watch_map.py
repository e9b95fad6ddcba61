"""devices -o map -w: the map, then the map again each time what it draws changes, from the watch's objects
(gather/watch.py LiveSession without a server: the events are applied as the watch applies them)."""

from __future__ import annotations

import builders
import pytest

from kubectl_dra.analyze.reports.inventory import inventory
from kubectl_dra.cli import watch
from kubectl_dra.cli.devices import _show_map
from kubectl_dra.cli.options import Options
from kubectl_dra.gather.watch import LiveSession
from tests.unit.test_queue import CLASS, NS, S37, gpus, node
from tests.unit.test_watch_updates import _Record, _session

HELD = builders.claim("held", [builders.request()], results=[("gpu", "node-a", "gpu-0")], node="node-a",
                      reserved="web", ns=NS)  # fmt: skip


class _Events(LiveSession):
    """A session that, instead of waiting on the server, applies the next of its events (one change each), then
    ends as Ctrl-C ends -w."""

    def start(self) -> None:
        pass

    def wait_for_change(self, settle: float = 0.3, poll: float = 0.5) -> None:
        if not self.events:
            raise KeyboardInterrupt
        kind, event = self.events.pop(0)
        self._apply(next(s for s in self.sources if s.kind == kind), event)


def watched(events: list, capsys) -> str:
    objs = [node("node-a"), CLASS, gpus("node-a", "gpu-0", "gpu-1")]
    session = _Events(None, [_Record(o["kind"], [o]) for o in objs] + [_Record("ResourceClaim", [])], [],
                      _session([]).meta)  # fmt: skip
    session.events = list(events)
    o = Options(NS, True, None, None, None, "map", (), None, {}, False, False, True, False)
    with pytest.raises(SystemExit) as exit_:
        watch.watch_map(o, session, [session.snapshot()], lambda s: inventory(s, S37), _show_map)
    assert exit_.value.code == 130
    return capsys.readouterr().out


def test_the_map_is_drawn_again_when_a_device_is_taken(capsys):
    out = watched([("ResourceClaim", {"type": "ADDED", "object": HELD})], capsys)
    first, _, again = out.partition("the map changed:")
    assert "Watching (Ctrl-C to stop):" in first and again, out

    def row(text: str) -> list[str]:
        return next(line for line in text.splitlines() if line.startswith("node-a")).split()

    # NO_COLOR glyphs: "." free, "#" allocated (held first); DEV, FREE, then the cells
    assert row(first) == ["node-a", "2", "2", ".."]
    assert row(again) == ["node-a", "2", "1", "#."]
    assert "the map changed" not in again  # one change, one map more


def test_a_change_the_map_does_not_show_draws_nothing(capsys):
    same = gpus("node-a", "gpu-0", "gpu-1")  # a new object, as the watch delivers it, with the same devices
    same["metadata"]["resourceVersion"] = "2"
    out = watched([("ResourceSlice", {"type": "MODIFIED", "object": same})], capsys)
    assert "the map changed" not in out and out.count("MAP") == 1, out


def test_watch_is_for_the_map_and_for_a_cluster(tmp_path):
    from clirun import run

    r = run(["devices", "-w", "--from-file", str(tmp_path / "none.yaml")])
    assert r.returncode == 2 and "use it with -o map" in r.stderr, r
    (tmp_path / "in.yaml").write_text("apiVersion: v1\nkind: List\nitems: []\n")
    r = run(["devices", "-o", "map", "-w", "--from-file", str(tmp_path / "in.yaml")])
    assert r.returncode == 2 and "cannot watch --from-file input" in r.stderr, r
