"""Tables at a terminal use the width they have: the last column takes what the others leave, wraps at word
boundaries only (a space, after `;` or `,`) and never breaks an identifier (a namespace/name, a device id) unless a
single one is wider than every line it could go on, and then keeps every character. Piped, every row is one line."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kubectl_dra.analyze.reports.inventory import inventory
from kubectl_dra.features import Semantics
from kubectl_dra.gather.files import load_files
from kubectl_dra.render.devices import render_inventory
from kubectl_dra.render.options import RenderOptions
from kubectl_dra.render.table import fit_table
from kubectl_dra.render.terminal import Out, _wrap, longest_piece

ROOT = Path(__file__).resolve().parents[2]
HOLDERS = ROOT / "tests" / "scenarios" / "devices-node-holders" / "input.yaml"
S37 = Semantics.for_version((1, 37))

# the scenario's short names made as long as a real cluster's, in a namespace of their own
LONG = {
    "ml-prod": "ml-team-research",
    "c-whole": "train-0-gpu-x7k2p-whole-device",
    "trainer": "train-0-worker-7d9f8c6b5-abcde",
    "c-nic": "train-0-nic-k2l9m-shared-uplink",
    "web-0": "web-frontend-0-6c8b7d9f4-xyz12",
    "c-1g": "web-frontend-gpu-1g-slice-q8w4e",
}
IDENTIFIERS = [
    "ml-team-research/train-0-gpu-x7k2p-whole-device",
    "ml-team-research/train-0-worker-7d9f8c6b5-abcde",
    "ml-team-research/train-0-nic-k2l9m-shared-uplink",
    "ml-team-research/web-frontend-gpu-1g-slice-q8w4e",
    "ml-team-research/web-frontend-0-6c8b7d9f4-xyz12",
    "gpu.example.com/node-02/gpu-1",
    "gpu.example.com/node-01/gpu-0-1g-0",
]


def long_input(tmp_path) -> Path:
    text = HOLDERS.read_text()
    for short, long in LONG.items():
        text = re.sub(rf"\b{re.escape(short)}\b", long, text)
    path = tmp_path / "long.yaml"
    path.write_text(text)
    return path


def flat(text: str) -> str:
    return " ".join(text.split())


def whole_on_a_line(text: str, ident: str) -> bool:
    """ident on one line, not the start of a longer name (ml-team/train-0 in ml-team/train-0-gpu-x7k2p)."""
    return any(re.search(re.escape(ident) + r"(?![\w.-])", line) for line in text.splitlines())


# -- wrapping ------------------------------------------------------------------------------------------------------


def test_wrap_breaks_at_spaces_and_after_separators_only():
    text = "claim ml-team/train-0-gpu-x7k2p; pods ml-team/train-0 (Running), ml-team/train-1 (Pending)"
    for width in range(26, 60):
        lines = _wrap(text, width, width)
        assert all(len(x) <= width for x in lines), (width, lines)
        for ident in ("ml-team/train-0-gpu-x7k2p;", "ml-team/train-0", "ml-team/train-1", "(Running),"):
            assert whole_on_a_line("\n".join(lines), ident), (width, lines)
        assert flat(" ".join(lines)) == text
    # inside a word, after `,` or `;`: a list of classes or of key=value breaks between its items
    assert _wrap("gpu,nic,fpga", 8, 8) == ["gpu,nic,", "fpga"]
    assert longest_piece("a,bbb;cc dddd") == 4


def test_a_piece_wider_than_a_line_is_broken_keeping_every_character():
    ident = "gpu.example.com/gke-ml-cluster-gpu-pool-a-7f3c9d2e-x1b4/gpu-3"
    lines = _wrap(f"pods {ident} (Running)", 20, 20)
    assert all(len(x) <= 20 for x in lines)
    assert "".join(lines).replace(" ", "") == f"pods{ident}(Running)"
    # a first line too short for a piece the next lines hold: the piece starts on the next line, unbroken
    assert _wrap("ml-team/train-0-gpu-x7k2p", 12, 40) == ["", "ml-team/train-0-gpu-x7k2p"]


# -- fit_table -----------------------------------------------------------------------------------------------------


def table(width, rows, **kw) -> str:
    out = io.StringIO()
    fit_table(Out(out, False, width), ["DEVICE", "STATE", "DETAIL"], rows, **kw)
    return out.getvalue()


ROWS = [
    [
        "gpu.example.com/node-02/gpu-1",
        "allocated",
        "claim ml-team-research/train-0-gpu-x7k2p; pods ml-team/train-0 (Running)",
    ],
    ["gpu.example.com/node-02/gpu-2", "free", "-"],
]


@pytest.mark.parametrize("width", range(50, 130, 3))
def test_the_last_column_never_breaks_a_name(width):
    text = table(width, ROWS)
    assert max(len(x) for x in text.splitlines()) <= width
    assert whole_on_a_line(text, "ml-team-research/train-0-gpu-x7k2p;") and whole_on_a_line(text, "ml-team/train-0")
    assert flat(ROWS[0][2]) in flat(text) and "…" not in text


def test_the_last_column_takes_the_width_left_over():
    # 120 columns: the others take 46, the detail has the other 74 and is written on the row itself
    lines = table(120, ROWS).splitlines()
    assert lines[1].endswith(ROWS[0][2]) and len(lines) == 3
    # narrower than the detail: it wraps under its own column, as far right as the row's last cell starts
    lines = table(100, ROWS).splitlines()
    start = lines[0].index("DETAIL")
    assert lines[2].startswith(" " * start) and not lines[2][start].isspace()


def test_a_column_narrower_than_a_name_goes_below_the_row():
    rows = [["gpu.example.com/node-02/gpu-1", "allocated", "claim ml-team-research/train-0-gpu-x7k2p-whole-device"]]
    text = table(80, rows)  # 36 columns left (enough for a detail), the name needs 47: its own line below
    assert text.splitlines()[2] == "    claim ml-team-research/train-0-gpu-x7k2p-whole-device"


def test_rows_wider_than_the_terminal_are_written_whole_never_cut():
    rows = [["gpu.example.com/gke-ml-cluster-gpu-pool-a-7f3c9d2e-x1b4/gpu-1", "allocated", "claim ns/c"]]
    text = table(50, rows)
    assert "…" not in text and rows[0][0] in text and "allocated" in text


def test_the_last_allowed_line_ends_after_a_whole_word():
    rows = [["d", "s", " ".join(f"ml-team/claim-{i:02}" for i in range(40))]]
    text = table(60, rows, max_lines=2)
    lines = text.splitlines()
    assert len(lines) == 3 and lines[-1].endswith(" …")
    assert re.fullmatch(r"(ml-team/claim-\d\d )+…", lines[-1].strip())


def test_a_pipe_writes_every_row_on_one_line():
    long = ["gpu.example.com/node-02/gpu-1", "allocated", "claim " + "x" * 300]
    assert table(None, [long]).splitlines()[1].endswith("x" * 300)


# -- devices, with a real cluster's names ----------------------------------------------------------------------


@pytest.mark.parametrize("width", [80, 100, 120, 160, 200])
@pytest.mark.parametrize("node", [None, "node-02"])
def test_devices_keeps_every_name_whole_at_every_width(tmp_path, width, node):
    report = inventory(load_files([str(long_input(tmp_path))], None), S37, {"node": node} if node else {})
    out = io.StringIO()
    render_inventory(report, RenderOptions("text", width=width), out, listing=True)
    text = out.getvalue()
    assert max(len(x) for x in text.splitlines()) <= max(width, 107)  # the holders' POD and CLAIMS need 107
    for ident in IDENTIFIERS:
        if ident in flat(text):
            assert whole_on_a_line(text, ident), (width, ident, text)
    assert "…" not in text


def _in_terminal(args: list[str], width: int) -> str:
    import fcntl
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, width, 0, 0))
    env = dict(os.environ, NO_COLOR="1", TERM="xterm")
    env.pop("COLUMNS", None)  # the width is the terminal's own
    env.pop("KUBECONFIG", None)
    p = subprocess.Popen(
        [sys.executable, "-m", "kubectl_dra", *args], stdout=slave, stderr=subprocess.DEVNULL, env=env, cwd=ROOT
    )
    os.close(slave)
    chunks = []
    while select.select([master], [], [], 60)[0]:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    p.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode().replace("\r\n", "\n")


@pytest.mark.skipif(sys.platform != "linux", reason="pseudo-terminal sizes as Linux sets them")
def test_devices_node_in_a_120_column_terminal_and_a_pipe(tmp_path):
    args = ["devices", "--node", "node-02", "--kubernetes-version", "1.37", "--from-file", str(long_input(tmp_path))]
    text = _in_terminal(args, 120)
    lines = text.splitlines()
    assert max(len(x) for x in lines) <= 120 and "…" not in text
    for ident in IDENTIFIERS:
        if ident in flat(text):
            assert whole_on_a_line(text, ident), (ident, text)
    piped = subprocess.run([sys.executable, "-m", "kubectl_dra", *args], capture_output=True, text=True, cwd=ROOT)
    row = next(x for x in piped.stdout.splitlines() if x.startswith("gpu.example.com/node-02/gpu-1 "))
    assert row.endswith("claim ml-team-research/train-0-gpu-x7k2p-whole-device; pods "
                        "ml-team-research/train-0-worker-7d9f8c6b5-abcde (Running)")  # fmt: skip
