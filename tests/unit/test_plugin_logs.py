"""--plugin-logs: gather/logs.py reading pods/log from a real HTTP server on loopback (the answer as the API
server gives it: the log's text, a 403 Status, the 500 it answers when it cannot reach the kubelet), and the log
shown under DRA607 on the tutorial's step 4 (its plugin pod on node-01 crash-loops): which container and instance
is asked for, the lines escaped at 80 columns, and the evidence in -o json."""

from __future__ import annotations

import io
import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from loopback import Handler, kubeconfig, serve, url

from kubectl_dra.analyze.pod.plugin_logs import FROM_FILE, from_file, log_targets, with_logs
from kubectl_dra.analyze.reports.explain import explain_pod
from kubectl_dra.features import Semantics
from kubectl_dra.gather.client import Client
from kubectl_dra.gather.files import load_files
from kubectl_dra.gather.logs import read_log, read_logs
from kubectl_dra.render import render
from kubectl_dra.render.options import RenderOptions

STEP4 = Path(__file__).resolve().parents[2] / "examples" / "tutorial" / "step4-driver-missing.yaml"
POD = "dra-example-driver-kubeletplugin-7xk2p"
LOG = "I1130 10:03:39 driver.go:80] starting\nE1130 10:03:40 main.go:51] error: open /var/run/cdi: \x1b[31mdenied\n"


class _Api(Handler):
    def do_GET(self):
        self.server.asked.append(self.path)
        u = urlsplit(self.path)
        if self.server.status == 200:
            body = LOG.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        msg = {403: f'pods "{u.path.split("/")[-2]}" is forbidden: User "dev" cannot get resource "pods/log"',
               500: "Get \"https://127.0.0.1:10250/containerLogs/x\": dial tcp 127.0.0.1:10250: connect: connection refused"}  # fmt: skip
        self.send_json(self.server.status, {"kind": "Status", "status": "Failure", "message": msg[self.server.status]})


def _client(srv, tmp_path) -> Client:
    return Client(kubeconfig(tmp_path / "kc", cluster={"server": url(srv)}), None, 5)


def test_read_log_asks_the_tail_of_the_previous_instance_and_returns_its_lines(tmp_path):
    with serve(_Api, status=200, asked=[]) as srv:
        got = read_log(_client(srv, tmp_path), "dra-example-driver", POD, "plugin", 1, True)
    u = urlsplit(srv.asked[0])
    assert u.path == f"/api/v1/namespaces/dra-example-driver/pods/{POD}/log"
    assert parse_qs(u.query) == {"tailLines": ["1"], "container": ["plugin"], "previous": ["true"]}
    assert got["lines"] == ["E1130 10:03:40 main.go:51] error: open /var/run/cdi: \x1b[31mdenied"]


def test_forbidden_is_undetermined_naming_the_permission_and_a_kubelet_out_of_reach_one_line(tmp_path):
    with serve(_Api, status=403, asked=[]) as srv:
        got = read_log(_client(srv, tmp_path), "dra-example-driver", POD, "plugin", 20, False)
    assert got["undetermined"] == "cannot get pods/log in namespace dra-example-driver (forbidden)"
    assert "previous" not in parse_qs(urlsplit(srv.asked[0]).query)
    with serve(_Api, status=500, asked=[]) as srv:
        got = read_log(_client(srv, tmp_path), "dra-example-driver", POD, "plugin", 20, False)
    assert "500" in got["error"] and "connection refused" in got["error"] and "\n" not in got["error"]
    assert len(srv.asked) == 1  # a 500 without Retry-After is not retried


def test_no_target_no_request():
    assert read_logs([], kubeconfig="/nonexistent", context=None, timeout=1) == {}


def _step4():
    return explain_pod(load_files([str(STEP4)], "default"), Semantics.for_version((1, 37)), "default",
                       "recomendador-7d9c8b6f5-x2x4k")  # fmt: skip


def test_the_crash_looping_plugin_container_is_read_previous_and_shown_escaped_at_80_columns(tmp_path):
    report = _step4()
    targets = log_targets(report)
    assert [t[1:] for t in targets] == [("dra-example-driver", POD, "plugin", True)]
    with serve(_Api, status=200, asked=[]) as srv:
        logs = read_logs([(*t, 20) for t in targets], kubeconfig=kubeconfig(tmp_path / "kc", cluster={"server": url(srv)}),
                         context=None, timeout=5)  # fmt: skip
    shown = with_logs(report, logs)
    out = io.StringIO()
    render(shown, RenderOptions("text", width=80), out)
    text = out.getvalue()
    assert all(len(line) <= 80 for line in text.splitlines())
    at = text.index("DRA607 driver-plugin")  # the finding (the Pieces line names DRA607 too)
    block = text[at : text.index("hint:", at)]
    assert "log of container plugin (previous instance), last 2 line(s):" in block
    assert "\x1b" not in text and "denied" in block
    assert "             I1130 10:03:39 driver.go:80] starting" in block  # indented under the finding
    out = io.StringIO()
    render(shown, RenderOptions("json"), out)
    f607 = next(f for f in json.loads(out.getvalue())["findings"] if f["code"] == "DRA607")
    assert f607["evidence"]["plugin"]["log"]["previous"] is True
    assert f607["evidence"]["plugin"]["log"]["lines"][1].endswith("\x1b[31mdenied")  # JSON escapes it itself


def test_from_file_says_logs_are_not_in_a_dump():
    out = io.StringIO()
    render(from_file(_step4()), RenderOptions("text", width=80), out)
    assert "log: not read: container logs are not in a dump (--from-file)" in out.getvalue()
    assert FROM_FILE.startswith("container logs are not in a dump")


def test_the_flag_reads_as_kubectl_optional_values():
    """--plugin-logs NAME is the flag and the pod's name; =N the lines; anything else one error line, exit 2."""
    from clirun import run

    crash = str(STEP4.parents[2] / "tests" / "scenarios" / "driver-plugin-crashloop" / "input.yaml")
    base = ["-n", "gpu-team", "--from-file", crash, "-o", "json"]
    for args in (["--plugin-logs", "web-0"], ["web-0", "--plugin-logs=3"]):
        r = run(["explain", "pod", *args, *base])
        f607 = next(f for f in json.loads(r.stdout)["findings"] if f["code"] == "DRA607")
        assert r.returncode == 1 and f607["evidence"]["plugin"]["log"] == {"error": FROM_FILE}, r
    for bad in ("--plugin-logs=0", "--plugin-logs=x"):
        r = run(["explain", "pod", "web-0", bad, *base])
        assert r.returncode == 2 and r.stderr.startswith("error: --plugin-logs=N") and r.stderr.count("\n") == 1, r
    r = run(["explain", "pod", "-l", "app=web", "--plugin-logs", *base])
    assert r.returncode == 2 and "takes one pod NAME" in r.stderr, r
    r = run(["explain", "pod", "web-0", *base])
    assert "log" not in next(f for f in json.loads(r.stdout)["findings"] if f["code"] == "DRA607")["evidence"]["plugin"]
