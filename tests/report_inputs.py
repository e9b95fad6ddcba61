"""Inputs of the HTML report's tests (tests/unit/test_report_html.py, tests/e2e/test_report_browser.py): a cluster
whose every string a page could run holds markup: names, labels, annotations, attributes, taints, event messages
with <script>, </style>, javascript: URLs, quotes and an onerror attribute."""

from __future__ import annotations

import yaml
from builders import DRIVER, claim, dclass, device, event, node, pod, request, rslice

NS = "team-x"
EVIL = "<script>alert(1)</script>"
STYLE_END = "</style><h1>owned</h1>"
JS_URL = "javascript:alert(document.domain)"
QUOTES = '"\' onmouseover="alert(2)" x=\''
IMG = "<img src=x onerror=alert(3)>"
HOSTILE = (EVIL, STYLE_END, JS_URL, QUOTES, IMG)


def hostile_objects() -> list[dict]:
    blocked = pod(f"web-{EVIL}", [("gpu", "claim", "c1")], ns=NS, labels={"app": JS_URL, "x": QUOTES})
    blocked["metadata"]["annotations"] = {"note": f"{STYLE_END}{IMG}", "link": JS_URL}
    held = pod("holder", [("gpu", "claim", "c0")], ns=NS, node_name="node-01")
    held["status"] = {"phase": "Running"}
    gpu = device("gpu-0", memory="24Gi", attrs={"model": EVIL, "link": JS_URL})
    tainted = device(
        "gpu-1",
        memory="24Gi",
        attrs={"model": QUOTES},
        taints=[{"key": "example.com/evil", "value": QUOTES, "effect": "NoSchedule"}],
    )
    return [
        blocked,
        held,
        claim("c1", [request(selectors=[f'device.attributes["{DRIVER}"].model == "{IMG}"'])], ns=NS),
        claim("c0", [request()], results=[("gpu", "node-01", "gpu-0")], reserved="holder", node="node-01", ns=NS),
        dclass(),
        rslice("node-01-gpus", [gpu, tainted], "node-01"),
        event(
            f"web-{EVIL}",
            "FailedScheduling",
            f"0/1 nodes: {EVIL} {STYLE_END} {QUOTES} {JS_URL}",
            "2026-11-30T09:00:00Z",
            ns=NS,
        ),  # fmt: skip
        node("node-01", zone=IMG),
    ]


def write_hostile(path) -> str:
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": hostile_objects()}))
    return str(path)
