"""krew: install the standalone archive with the real krew, run it through kubectl, uninstall.

    kubectl krew install --manifest=<dist>/dra.yaml --archive=<dist>/kubectl-dra_linux_amd64.tar.gz

in a temporary KREW_ROOT, with a PATH of $KREW_ROOT/bin, kubectl + kubectl-krew and /usr/bin:/bin
(no project virtualenv). kubectl finds the plugin by its own plugin discovery; krew's symlink
$KREW_ROOT/bin/kubectl-dra points into the store, and the PyInstaller bootloader must find its
_internal directory through it.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from golden_stderr import check_stderr
from install_helpers import (
    ROOT,
    assert_same_behaviour,
    build,
    demo_commands,
    minimal_env,
    project_version,
    reference_run,
    run,
    usage_line,
)

pytestmark = pytest.mark.install


def test_krew_layout(krew_install):
    env, krew_root = krew_install
    link = krew_root / "bin" / "kubectl-dra"
    assert link.is_symlink(), list((krew_root / "bin").iterdir())
    store = krew_root / "store" / "dra" / f"v{project_version()}"
    assert Path(os.readlink(link)) == store / "kubectl-dra"
    assert (store / "LICENSE").is_file()
    assert (store / "_internal").is_dir()
    assert os.access(store / "kubectl-dra", os.X_OK)
    # krew's own bookkeeping (`krew list` needs the central index, a git clone: not used here)
    receipt = yaml.safe_load((krew_root / "receipts" / "dra.yaml").read_text())
    assert receipt["metadata"]["name"] == "dra"
    assert receipt["spec"]["version"] == f"v{project_version()}"


def test_kubectl_discovers_plugin(krew_install):
    env, krew_root = krew_install
    res = run(["kubectl", "plugin", "list", "--name-only"], env)
    assert res.returncode == 0, res
    assert "kubectl-dra" in res.stdout.split(), res


def test_version_through_kubectl(krew_install, tmp_path):
    env, _ = krew_install
    res = run(["kubectl", "dra", "version"], env)
    assert res.returncode == 0, res
    assert project_version() in res.stdout, res
    assert_same_behaviour(res, reference_run(["version"], tmp_path))


def test_help_says_kubectl_dra(krew_install):
    env, _ = krew_install
    res = run(["kubectl", "dra", "--help"], env)
    assert res.returncode == 0, res
    assert usage_line(res).startswith("Usage: kubectl dra "), res
    res = run(["kubectl", "dra", "explain", "--help"], env)
    assert res.returncode == 0 and usage_line(res).startswith("Usage: kubectl dra explain "), res


@pytest.mark.parametrize("pod,example", demo_commands(), ids=lambda v: getattr(v, "name", v))
def test_explain_through_kubectl(krew_install, tmp_path, pod, example):
    """The frozen build gives the same verdict and output as the source tree, offline."""
    env, _ = krew_install
    assert example.is_file(), f"make demo's example {example} is missing"
    for fmt in ("text", "json"):
        args = ["explain", "pod", pod, "--from-file", str(example), "-o", fmt]
        res = run(["kubectl", "dra", *args], env)
        assert res.returncode in (0, 1), res
        assert_same_behaviour(res, reference_run(args, tmp_path))


def test_bad_flag_exit_code(krew_install, tmp_path):
    env, _ = krew_install
    res = run(["kubectl", "dra", "--no-such-flag"], env)
    assert res.returncode == 2, res
    assert_same_behaviour(res, reference_run(["--no-such-flag"], tmp_path))


def test_krew_uninstall(dist, archive, kubectl_bin, custom_index, tmp_path):
    """A separate install, so that the uninstall does not depend on test order. krew refuses
    every command but install --manifest until some index is cloned (`kubectl krew update` on a
    user's machine); the central index is out of reach here, so the project's custom index is
    added first."""
    krew_root = tmp_path / "krew"
    env = minimal_env(tmp_path, [krew_root / "bin", kubectl_bin], KREW_ROOT=str(krew_root))
    res = run(["kubectl", "krew", "install", f"--manifest={dist / 'dra.yaml'}", f"--archive={archive}"], env)
    assert res.returncode == 0, res
    assert run(["kubectl", "dra", "version"], env).returncode == 0
    res = run(["kubectl", "krew", "index", "add", "kubectl-dra", custom_index.as_uri()], env)
    assert res.returncode == 0, res
    res = run(["kubectl", "krew", "uninstall", "dra"], env)
    assert res.returncode == 0, res
    assert "Uninstalled plugin: dra" in res.output, res
    assert not (krew_root / "bin" / "kubectl-dra").exists()
    assert not (krew_root / "store" / "dra").exists()
    assert not (krew_root / "receipts" / "dra.yaml").exists()
    res = run(["kubectl", "dra", "version"], env)
    assert res.returncode != 0, res
    assert "kubectl-dra" not in run(["kubectl", "plugin", "list", "--name-only"], env).stdout


def test_custom_index_route(kubectl_bin, custom_index, tmp_path):
    """docs/install.md's route while `dra` is not in krew-index: add the project's index, install
    from it (krew downloads the archive from the manifest's URI and checks its sha256)."""
    krew_root = tmp_path / "krew"
    env = minimal_env(tmp_path, [krew_root / "bin", kubectl_bin], KREW_ROOT=str(krew_root))
    res = run(["kubectl", "krew", "index", "add", "kubectl-dra", custom_index.as_uri()], env)
    assert res.returncode == 0, res
    res = run(["kubectl", "krew", "search", "dra"], env)
    assert res.returncode == 0 and "kubectl-dra/dra" in res.stdout, res
    res = run(["kubectl", "krew", "install", "kubectl-dra/dra"], env)
    assert res.returncode == 0, res
    res = run(["kubectl", "krew", "list"], env)
    assert res.returncode == 0 and "kubectl-dra/dra" in res.stdout, res
    res = run(["kubectl", "dra", "version"], env)
    assert res.returncode == 0 and project_version() in res.stdout, res
    res = run(["kubectl", "krew", "uninstall", "dra"], env)
    assert res.returncode == 0, res
    assert run(["kubectl", "dra", "version"], env).returncode != 0


def test_fallback_name_dra_doctor(dist, archive, kubectl_bin, tmp_path):
    """If krew-index refuses the name `dra` (see docs/install.md), the same archive ships as
    `dra-doctor`: krew links it as kubectl-dra_doctor and the usage text follows argv[0]."""
    manifest = tmp_path / "dra-doctor.yaml"
    build("manifest", "--name", "dra-doctor", "--out", str(manifest), "--archives", str(archive), dist=dist)
    krew_root = tmp_path / "krew"
    env = minimal_env(tmp_path, [krew_root / "bin", kubectl_bin], KREW_ROOT=str(krew_root))
    res = run(["kubectl", "krew", "install", f"--manifest={manifest}", f"--archive={archive}"], env)
    assert res.returncode == 0, res
    assert (krew_root / "bin" / "kubectl-dra_doctor").is_symlink()
    res = run(["kubectl", "dra-doctor", "version"], env)
    assert res.returncode == 0 and project_version() in res.stdout, res
    res = run(["kubectl", "dra-doctor", "--help"], env)
    assert res.returncode == 0 and usage_line(res).startswith("Usage: kubectl dra-doctor "), res


SCENARIOS = ROOT / "tests" / "scenarios"


@pytest.mark.parametrize("name", sorted(p.parent.name for p in SCENARIOS.glob("*/cmd")))
def test_golden_scenarios_frozen(krew_install, name):
    """Every golden scenario (tests/scenarios) gives its expected text, JSON and exit code from the
    frozen build run by kubectl: the CEL engine (native cel-cpp + its extensions), the protobuf
    runtime and every lazily imported module made it into the archive."""
    env, _ = krew_install
    d = SCENARIOS / name
    # ./FILE in a command is a file of the scenario's own folder (devices --request ./request.yaml)
    args = [str(d / a[2:]) if a.startswith("./") else a for a in shlex.split((d / "cmd").read_text())]
    args += ["--from-file", str(d / "input.yaml")]
    text = run(["kubectl", "dra", *args], env)
    js = run(["kubectl", "dra", *args, "-o", "json"], env)
    text = check_stderr(args, text, js)
    assert text.returncode == js.returncode == int((d / "expected.exit").read_text()), text
    assert text.stdout == (d / "expected.txt").read_text(), text
    assert json.loads(js.stdout) == json.loads((d / "expected.json").read_text()), js


def test_ctrl_c_during_api_call_exits_130(krew_install, tmp_path):
    """Ctrl-C while the API server does not answer: the frozen build (run by kubectl, which execs
    the plugin in its own process) turns SIGINT into `error: interrupted` and exit code 130."""
    env, _ = krew_install
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)  # accepts connections, never answers
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            f"clusters: [{{name: c, cluster: {{server: 'http://127.0.0.1:{server.getsockname()[1]}'}}}}]\n"
            "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
            "users: [{name: u, user: {token: t}}]\n"
        )
        proc = subprocess.Popen(
            ["kubectl", "dra", "explain", "pod", "web-0", "--kubeconfig", str(kubeconfig), "--request-timeout", "0"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            server.settimeout(60)
            conn, _ = server.accept()  # the plugin is now waiting for the API server
            time.sleep(0.5)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
            conn.close()
        finally:
            proc.kill()
    assert proc.returncode == 130, (proc.returncode, out, err)
    assert err.strip().endswith("error: interrupted"), err
