"""kubectl dra report in a real browser (Debian's Chromium, headless, installed by browser.ensure_chromium when
missing): reports made from golden scenarios and from hostile strings are opened at 1280x800 and at a phone's
390x844; the page's text holds the verdicts, no request leaves the page, no <script> exists in the DOM and nothing
runs, and no element is wider than the viewport (asked of the layout engine over the DevTools protocol: the page's
CSP forbids it any script of its own). Screenshots are kept in the test's tmp_path (KUBECTL_DRA_SCREENSHOTS=DIR
keeps them there too). In tests/e2e: marked e2e, it runs in CI's stage with the e2e, oracle and install tests; one
report is made from the e2e control plane (the others need none)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from browser import Browser, ensure_chromium, png_size
from clirun import run
from report_inputs import HOSTILE, NS, write_hostile

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
SIZES = {"desktop": (1280, 800, False), "phone": (390, 844, True)}
# golden scenarios -> what the page's text must say (their verdicts)
GOLDEN = {
    "explain-pod-map": ["gpu-lab/loader-0", "Blocked", "gpu-lab/trainer-1", "OK", "the dry-run's pick"],
    "status-all-namespaces": ["Blocked", "OK"],
    "queue-two-pods-explain": ["team-a/p1", "Blocked", "goes to a pod ahead in the queue"],
}


@pytest.fixture(scope="module")
def browser():
    b = Browser(ensure_chromium())
    yield b
    b.close()


def make_report(tmp_path, source: str) -> Path:
    out = tmp_path / "report.html"
    r = run(["report", "-A", "--from-file", source, "--output-file", str(out)])
    assert r.returncode in (0, 1, 2) and out.exists(), r
    return out


def check_page(browser, html: Path, tmp_path, name: str) -> list[str]:
    """Open the page at each size: no request but its own file, no script, no console output, nothing wider than
    the viewport, a screenshot of the viewport's width. Returns the page's text (desktop)."""
    texts = []
    keep = os.environ.get("KUBECTL_DRA_SCREENSHOTS")
    for size, (w, h, mobile) in SIZES.items():
        page = browser.page(html.as_uri(), w, h, mobile)
        assert page.requests() == [html.as_uri()], page.requests()
        assert page.eval("document.scripts.length") == 0
        assert page.eval("document.querySelectorAll('[onerror],[onload],[onmouseover],img,iframe,object').length") == 0
        assert page.console() == []
        over = page.overflow()
        assert over["scrollWidth"] <= over["viewport"] and not over["wide"], (size, over)
        shot = tmp_path / f"{name}-{size}.png"
        assert png_size(page.screenshot(shot)) == (w, h)
        if keep:
            shutil.copy(shot, Path(keep) / shot.name)
        texts.append(page.text())
    return texts


@pytest.mark.parametrize("scenario", sorted(GOLDEN))
def test_golden_reports_read_in_a_browser(browser, tmp_path, scenario):
    html = make_report(tmp_path, str(SCENARIOS / scenario / "input.yaml"))
    for text in check_page(browser, html, tmp_path, scenario):
        for words in GOLDEN[scenario]:
            assert words in text, (scenario, words)


def test_hostile_strings_are_shown_and_run_nothing(browser, tmp_path):
    html = make_report(tmp_path, write_hostile(tmp_path / "in.yaml"))
    desktop, _ = check_page(browser, html, tmp_path, "hostile")
    assert f"{NS}/web-<script>alert(1)</script>" in desktop
    # the page's own heading is the only h1 (the cluster's </style><h1> is text), and the strings are on the page
    page = browser.page(html.as_uri(), 1280, 800)
    assert page.eval("document.querySelectorAll('h1').length") == 1
    assert page.eval("document.querySelectorAll('style').length") == 1
    whole = page.eval("document.body.innerText + [...document.querySelectorAll('[title]')].map(e => e.title).join()")
    for s in HOSTILE:
        assert s in whole, s
    assert page.eval("typeof window.alert") == "function" and page.console() == []


def test_the_checks_see_what_they_look_for(browser, tmp_path):
    """The checks above are not blind: a page without the CSP, with an element wider than a phone, an image from
    another address and a script, shows all three."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width"></head><body>'
        '<div style="width:600px">wide</div><img src="http://127.0.0.1:9/x.png">'
        "<script>console.log('ran')</script></body></html>"
    )
    page = browser.page(bad.as_uri(), 390, 844, True)
    over = page.overflow()
    assert over["scrollWidth"] > over["viewport"] and any(w.startswith("DIV") for w in over["wide"])
    assert "http://127.0.0.1:9/x.png" in page.requests()
    assert page.eval("document.scripts.length") == 1 and page.console()


def test_a_report_of_the_live_control_plane_reads_in_a_browser(browser, scenario, tmp_path):
    """A report made from the real control plane (one pod bound with the only device, one that waits for it): the
    page says what status says live, of each pod, and what was read; it opens as the golden ones do; and
    --from-file on it replays the same verdicts."""
    from builders import device, request
    from dra_objects import claim, pod

    sc = scenario("report")
    sc.device_class()
    sc.slice([device("dev-0")])
    sc.create(claim("c-held", [request("gpu", sc.cls)]))
    sc.create(pod("pod-held", {"gpu": "c-held"}))
    sc.cluster.wait_bound(sc.ns, "pod-held")
    sc.create(claim("c-wait", [request("gpu", sc.cls)]))
    sc.create(pod("pod-wait", {"gpu": "c-wait"}))
    sc.cluster.wait_unschedulable(sc.ns, "pod-wait", "cannot allocate all claims")

    html = tmp_path / "report.html"
    r = sc.cluster.kubectl_dra("report", "-n", sc.ns, "--output-file", str(html))
    assert r.code == 1 and r.stderr.startswith(f"wrote {html}"), str(r)  # a pod is blocked: exit 1, as status
    live = sc.cluster.kubectl_dra("status", "-n", sc.ns, "-o", "json").json
    states = {x["pod"]: x["state"] for x in live["items"]}
    assert states == {"pod-held": "OK", "pod-wait": "Blocked"}, live
    desktop, phone = check_page(browser, html, tmp_path, "live")
    for text in (desktop, phone):
        assert "the cluster at" in text and "v1.37" in text, text[:800]  # what was read, and when
        for name, state in states.items():
            assert f"{sc.ns}/{name}\t{state}" in text, (name, state, text[:3000])  # the table's row
    assert f"{sc.ns}/pod-wait: Blocked" in desktop  # explained in full, with its map
    replayed = run(["status", "-n", sc.ns, "-o", "json", "--from-file", str(html)])
    assert {x["pod"]: x["state"] for x in json.loads(replayed.stdout)["items"]} == states, replayed
