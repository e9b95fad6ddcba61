"""Input as every command reads it (issue 27, item 5): one reader, so the same bad file gets the same one `error:`
line everywhere, naming the path and what failed; stdin (`-`) wherever a file is read; and a pod spec's limits
count as requests where the API server would default them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
STEP4 = ROOT / "examples" / "tutorial" / "step4-driver-missing.yaml"
EXTENDED = ROOT / "examples" / "defaults-1.37" / "extended-resources.yaml"
POD = "recomendador-7d9c8b6f5-x2x4k"


def cli(*args, stdin: bytes | None = None, timeout=60):
    e = dict(os.environ, NO_COLOR="1")
    e.pop("KUBECONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "kubectl_dra", *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=e,
        timeout=timeout,
    )


def one_error(r) -> str:
    err = r.stderr.decode()
    assert r.returncode == 2, (r.returncode, r.stdout[-400:], err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


# Every command that reads a file, with the place the file goes ({} = the path, or - for stdin).
READERS = {
    "lint -f": ["lint", "-f", "{}"],
    "lint --from-file": ["lint", "--from-file", "{}"],
    "status": ["status", "--from-file", "{}"],
    "explain pod": ["explain", "pod", POD, "--from-file", "{}"],
    "explain claim": ["explain", "claim", "c", "--from-file", "{}"],
    "devices": ["devices", "--from-file", "{}"],
    "match -f": ["match", "claim", "-f", "{}", "--from-file", str(STEP4)],
}


def _args(template: list[str], path: str) -> list[str]:
    return [path if a == "{}" else a for a in template]


BAD = {
    "latin-1": (b"kind: Pod\nmetadata: {name: caf\xe9}\n", "{}: not UTF-8 text"),
    "binary": (b"\x7fELF\x02\x01\x01\x00\x00\x00\xa5\xff", "{}: not UTF-8 text (binary data)"),
    "malformed": (b"kind: Pod\nmetadata: {name: [unclosed\n", "{}:3:1: "),
    # `cat pods.yaml nodes.yaml`: go-yaml keeps the second list and the pods would be gone without a word
    "joined": (
        b"apiVersion: v1\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: team-a}}\nkind: List\n"
        b"apiVersion: v1\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: node-01}}\nkind: List\n",
        "{}:5:1: top-level key 'apiVersion' appears twice in one YAML document (outputs joined without '---'?)",
    ),
}


@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_the_same_bad_file_gets_the_same_message_from_every_command(tmp_path, reader, bad):
    data, expected = BAD[bad]
    p = tmp_path / "bad.yaml"
    p.write_bytes(data)
    line = one_error(cli(*_args(READERS[reader], str(p))))
    assert line.startswith("error: " + expected.format(p)), line


@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_stdin_is_read_everywhere_and_bad_stdin_is_one_error_line(reader, bad):
    """`lint -f -` used to end in `internal error: UnicodeEncodeError` on binary input, and `status --from-file -`
    in `-: no such file or directory`."""
    data, expected = BAD[bad]
    line = one_error(cli(*_args(READERS[reader], "-"), stdin=data))
    assert line.startswith("error: " + expected.format("<stdin>")), line


def test_from_file_dash_reads_a_dump_from_stdin():
    r = cli("status", "--from-file", "-", stdin=STEP4.read_bytes())
    assert r.returncode == 1, r.stderr
    assert POD in r.stdout.decode()
    r = cli("explain", "pod", POD, "--from-file", "-", "-o", "json", stdin=STEP4.read_bytes())
    assert r.returncode == 1 and json.loads(r.stdout)["verdict"]["missing"] == "driver"


def test_stdin_is_read_once():
    line = one_error(cli("lint", "-f", "-", "--from-file", "-", stdin=STEP4.read_bytes()))
    assert "stdin" in line and "once" in line


def test_a_missing_file_names_the_path_and_the_operation():
    for reader in READERS.values():
        line = one_error(cli(*_args(reader, "/nonexistent/x.yaml")))
        assert line == "error: /nonexistent/x.yaml: cannot read: no such file or directory", line


def test_a_read_failure_is_not_reported_as_an_output_failure(tmp_path, monkeypatch, capsys):
    """`status --from-file /` said `could not write the output: Permission denied` when a stat() failed while it
    walked the directory. In-process, with the walk failing as an unreadable directory does (the tests run as root)."""
    from kubectl_dra.cli import main
    from kubectl_dra.gather import files

    (tmp_path / "a.yaml").write_text(STEP4.read_text())

    def walk(top, onerror=None):
        onerror(PermissionError(13, "Permission denied", str(tmp_path / "secret")))
        yield from ()

    monkeypatch.setattr(files.os, "walk", walk)
    with pytest.raises(SystemExit) as e:
        main(["status", "--from-file", str(tmp_path)])
    assert e.value.code == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'secret'}: cannot read: permission denied\n"


def test_read_bytes_names_the_operation_for_a_directory(tmp_path):
    from kubectl_dra.errors import DraError
    from kubectl_dra.gather.files import read_bytes

    with pytest.raises(DraError, match=r": cannot read: is a directory$"):
        read_bytes(tmp_path)


def _limits_only(doc: dict, pod: str) -> dict:
    for o in doc["items"]:
        if o["kind"] == "Pod" and o["metadata"]["name"] == pod:
            for c in o["spec"]["containers"]:
                c["resources"].pop("requests", None)
    return doc


@pytest.mark.parametrize("pod", ["trainer", "trainer-2"])
def test_explain_reads_extended_resource_limits_as_requests(tmp_path, pod):
    """A pod manifest with `limits: {example.com/gpu: 1}` and no request asks for one GPU once the API server has
    defaulted it (SetDefaults_Pod): the same answer as with the request written out."""
    f = tmp_path / "limits.yaml"
    f.write_text(yaml.safe_dump(_limits_only(yaml.safe_load(EXTENDED.read_text()), pod)))
    both = cli("explain", "pod", pod, "--from-file", str(EXTENDED), "-o", "json")
    limits = cli("explain", "pod", pod, "--from-file", str(f), "-o", "json")
    assert limits.returncode == both.returncode
    a, b = json.loads(both.stdout), json.loads(limits.stdout)
    assert a["verdict"] == b["verdict"]
    assert [x["code"] for x in a["findings"]] == [x["code"] for x in b["findings"]]


def test_match_a_pod_file_with_limits_only(tmp_path):
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: trainer-3}\nspec:\n  containers:\n  - name: c\n"
        "    image: x\n    resources: {limits: {example.com/gpu: '1'}}\n"
    )
    r = cli("match", "claim", "-f", str(pod), "--from-file", str(EXTENDED), "-o", "json")
    assert r.returncode == 1, r.stderr
    assert [q["name"] for q in json.loads(r.stdout)["requests"]] == ["container-0-request-0"]
    # a request that is set wins over the limit (2 limits, 1 request: one device)
    from kubectl_dra.analyze.pod.extended import pod_extended_resources
    from kubectl_dra.features import Semantics
    from kubectl_dra.gather.files import load_files

    classes = list(load_files([EXTENDED], None).classes)
    spec = {"containers": [{"name": "c", "resources": {"limits": {"example.com/gpu": "2"}}}]}
    got = pod_extended_resources({"spec": spec}, classes, Semantics.for_version((1, 37)))
    assert [(r.resource, r.quantity) for r in got.requests] == [("example.com/gpu", 2)]
    spec["containers"][0]["resources"]["requests"] = {"example.com/gpu": "1"}
    got = pod_extended_resources({"spec": spec}, classes, Semantics.for_version((1, 37)))
    assert [(r.resource, r.quantity) for r in got.requests] == [("example.com/gpu", 1)]


def test_defaulted_requests():
    from kubectl_dra.analyze.pod.extended import defaulted_requests

    assert defaulted_requests({"resources": {"limits": {"a/b": "1"}}}) == {"a/b": "1"}
    assert defaulted_requests({"resources": {"limits": {"a/b": "2"}, "requests": {"a/b": "1"}}}) == {"a/b": "1"}
    assert defaulted_requests({"resources": {"requests": {"a/b": "1"}}}) == {"a/b": "1"}
    assert defaulted_requests({"resources": {"limits": "bad", "requests": None}}) == {}
    assert defaulted_requests({}) == {}


V9 = (
    b"apiVersion: resource.k8s.io/v9\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
    b"spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n"
)


@pytest.mark.parametrize("reader", sorted(set(READERS) - {"lint -f"}))  # lint -f reports it as DRA704
def test_an_unknown_resource_version_is_one_error_line_everywhere(tmp_path, reader):
    p = tmp_path / "v9.yaml"
    p.write_bytes(V9)
    line = one_error(cli(*_args(READERS[reader], str(p))))
    assert line.startswith("error: ResourceClaim default/c: apiVersion resource.k8s.io/v9 is not one"), line
