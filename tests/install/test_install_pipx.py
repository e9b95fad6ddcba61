"""pipx: install the built wheel into a temporary PIPX_HOME, run it directly and as a kubectl
plugin, uninstall (checked in the install fixture's teardown).

pipx (pinned in requirements/dist.lock) resolves the wheel's pinned dependencies from the package
index like a user's `pipx install kubectl-dra` would; pip's download cache is shared with the
user's so warm reruns do not download again. The commands then run with PATH = PIPX_BIN_DIR,
kubectl, /usr/bin:/bin only.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from install_helpers import (
    assert_same_behaviour,
    demo_commands,
    minimal_env,
    project_version,
    reference_run,
    run,
    usage_line,
)

pytestmark = pytest.mark.install


def pipx_env(home: Path, pipx_home: Path, pipx_bin: Path) -> dict[str, str]:
    env = minimal_env(
        home, [pipx_bin], PIPX_HOME=str(pipx_home), PIPX_BIN_DIR=str(pipx_bin), PIPX_MAN_DIR=str(pipx_home / "man")
    )
    # pip's own settings of this machine (index, certificates, find-links) and its cache.
    env.update({k: v for k, v in os.environ.items() if k.startswith("PIP_") and k != "PIP_REQUIRE_VIRTUALENV"})
    env.setdefault("PIP_CACHE_DIR", os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")))
    return env


@pytest.fixture(scope="module")
def pipx_install(tools, wheel, kubectl_bin, tmp_path_factory):
    home = tmp_path_factory.mktemp("pipx-home")
    pipx_home, pipx_bin = home / "pipx", home / "bin"
    env = pipx_env(home, pipx_home, pipx_bin)
    res = run([tools["pipx"], "install", wheel], env, timeout=900)
    assert res.returncode == 0, res
    exe = pipx_bin / "kubectl-dra"
    assert exe.exists(), res
    # what the user runs afterwards: their PATH, no pipx, no project venv
    user_env = minimal_env(home, [pipx_bin, kubectl_bin])
    yield {"env": env, "user_env": user_env, "exe": exe, "pipx_home": pipx_home}
    # `pipx uninstall` is checked here, after every test of the module has used the install
    # (a second install just for it would cost ~25 s); a failure shows as an error of the last test.
    res = run([tools["pipx"], "uninstall", "kubectl-dra"], env)
    assert res.returncode == 0, res
    assert not exe.exists() and not exe.is_symlink()
    assert not (pipx_home / "venvs" / "kubectl-dra").exists()
    assert run(["kubectl", "dra", "version"], user_env).returncode != 0


def test_pipx_venv_has_the_pinned_runtime(pipx_install):
    """The venv pipx made holds the wheel and exactly the pinned dependency versions."""
    venv = pipx_install["pipx_home"] / "venvs" / "kubectl-dra"
    py = venv / "bin" / "python"
    res = run([py, "-m", "pip", "list", "--format=freeze"], pipx_install["env"])
    assert res.returncode == 0, res
    installed = dict(line.split("==", 1) for line in res.stdout.split() if "==" in line)
    assert installed.get("kubectl-dra") == project_version(), installed
    import tomllib

    pins = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"][
        "dependencies"
    ]
    for pin in pins:
        name, version = pin.split("==")
        got = {k.lower().replace("_", "-"): v for k, v in installed.items()}.get(name.lower().replace("_", "-"))
        assert got == version, (pin, got)


def test_console_script_directly(pipx_install, tmp_path):
    res = run(["kubectl-dra", "version"], pipx_install["user_env"])
    assert res.returncode == 0 and project_version() in res.stdout, res
    assert_same_behaviour(res, reference_run(["version"], tmp_path))


def test_version_through_kubectl(pipx_install, tmp_path):
    res = run(["kubectl", "dra", "version"], pipx_install["user_env"])
    assert res.returncode == 0 and project_version() in res.stdout, res
    assert_same_behaviour(res, reference_run(["version"], tmp_path))


def test_help_says_kubectl_dra(pipx_install):
    res = run(["kubectl", "dra", "--help"], pipx_install["user_env"])
    assert res.returncode == 0 and usage_line(res).startswith("Usage: kubectl dra "), res


@pytest.mark.parametrize("pod,example", demo_commands(), ids=lambda v: getattr(v, "name", v))
def test_explain_through_kubectl(pipx_install, tmp_path, pod, example):
    assert example.is_file(), f"make demo's example {example} is missing"
    for fmt in ("text", "json"):
        args = ["explain", "pod", pod, "--from-file", str(example), "-o", fmt]
        res = run(["kubectl", "dra", *args], pipx_install["user_env"])
        assert res.returncode in (0, 1), res
        assert_same_behaviour(res, reference_run(args, tmp_path))
