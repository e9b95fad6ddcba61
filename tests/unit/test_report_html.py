"""kubectl dra report (cli/report.py, render/html.py): one self-contained page, safe whatever the cluster's strings
hold, that --from-file replays. The browser's view of the same pages: tests/e2e/test_report_browser.py."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from clirun import run
from report_inputs import HOSTILE, NS, QUOTES, write_hostile

from kubectl_dra.render.html import CSP, DOCS

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
# the page's own markup: anything else came from the cluster unescaped
TAGS = {"html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "dl", "dt", "dd", "p", "code",
        "div", "table", "thead", "tbody", "tr", "th", "td", "span", "a", "details", "summary", "pre", "em", "svg", "g",
        "rect", "text", "path"}  # fmt: skip


class Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.text, self.comments = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(tag, k, v) for k, v in attrs]

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.comments.append(data)


def parse(page: str) -> Tags:
    p = Tags()
    p.feed(page)
    return p


def report(tmp_path, source: str, *args) -> tuple[str, object]:
    out = tmp_path / "report.html"
    r = run(["report", *args, "--from-file", source, "--output-file", str(out)])
    assert r.returncode in (0, 1), r
    return out.read_text(encoding="utf-8"), r


def test_hostile_strings_are_text_and_nothing_can_run(tmp_path):
    page, _ = report(tmp_path, write_hostile(tmp_path / "in.yaml"), "-A")
    tags = parse(page)
    assert set(tags.tags) <= TAGS, set(tags.tags) - TAGS  # no <script>, <img>, <h1> of the cluster's
    assert tags.tags.count("style") == 1 and page.count("</style>") == 1
    assert "<script" not in page.lower()
    for tag, k, v in tags.attrs:
        assert not k.startswith("on"), (tag, k)
        if k in ("href", "src", "xlink:href", "action"):
            assert k == "href" and re.fullmatch(re.escape(DOCS).replace(r"\{\}", r"DRA\d{3}"), v), (tag, k, v)
    text = "".join(tags.text)
    # every hostile string reaches the page, as text: in the verdicts, the explanation, the maps' titles
    for s in HOSTILE:
        assert s in text or any(s in (v or "") for _, _, v in tags.attrs), s
    assert f"{NS}/web-<script>alert(1)</script>" in text
    assert any(QUOTES in (v or "") for _, k, v in tags.attrs if k == "title")  # a taint in a cell's title


def test_the_page_is_self_contained_and_says_what_was_read(tmp_path):
    page, r = report(tmp_path, str(SCENARIOS / "explain-pod-map" / "input.yaml"), "-n", "gpu-lab")
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in page
    assert "default-src 'none'" in CSP and "script-src" not in CSP
    assert not re.search(
        r"""(src|href)=["'](?!https://github\.com/kubectl-dra/kubectl-dra/blob/main/docs/codes/)""", page
    )
    text = "".join(parse(page).text)
    for words in ("namespace gpu-lab", "Kubernetes 1.37", "gpu-lab/loader-0", "Blocked", "trainer-1", "OK",
                  "Devices, node by node", "the dry-run's pick", "DRA421"):  # fmt: skip
        assert words in text, words
    assert text.index("gpu-lab/loader-0") < text.index("gpu-lab/trainer-1")  # blocked first
    assert r.returncode == 1  # as status: a pod is blocked
    assert "wrote" in r.stderr


def test_from_file_report_html_replays_the_input(tmp_path):
    src = str(SCENARIOS / "explain-pod-map" / "input.yaml")
    page, _ = report(tmp_path, src, "-A")
    for args in (["status", "-A"], ["devices", "-o", "map"], ["explain", "pod", "trainer-1", "-n", "gpu-lab", "--map"]):
        direct, replayed = run([*args, "--from-file", src]), run([*args, "--from-file", str(tmp_path / "report.html")])
        assert (replayed.returncode, replayed.stdout) == (direct.returncode, direct.stdout), args


def test_the_embedded_input_is_redacted_as_dump_redacts(tmp_path):
    import yaml

    from kubectl_dra.gather.bundle import from_html

    src = tmp_path / "in.yaml"
    write_hostile(src)
    doc = yaml.safe_load(src.read_text())
    pod = doc["items"][0]
    pod["spec"]["containers"][0]["env"] = [{"name": "PASSWORD", "value": "hunter2"}]
    pod["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = "{secret}"
    src.write_text(yaml.safe_dump(doc))
    page, _ = report(tmp_path, str(src), "-A")
    embedded = from_html(page.encode(), "report.html")
    assert "hunter2" not in page and "hunter2" not in str(embedded) and "{secret}" not in str(embedded)
    assert embedded["items"][0]["kind"] == "Bundle"


def test_a_damaged_or_foreign_html_file_is_an_error(tmp_path):
    other = tmp_path / "other.html"
    other.write_text("<!DOCTYPE html><html><body>hi</body></html>")
    r = run(["status", "-A", "--from-file", str(other)])
    assert r.returncode == 2 and "without kubectl-dra's embedded input" in r.stderr
