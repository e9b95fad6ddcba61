"""Shell completion of the installed standalone build (krew), as docs/install.md tells users to
set it up."""

from __future__ import annotations

import pytest
from install_helpers import run

pytestmark = pytest.mark.install


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts(krew_install, shell):
    env, _ = krew_install
    res = run(["kubectl", "dra", "completion", shell], env)
    assert res.returncode == 0 and res.stderr == "", res
    assert "_KUBECTL_DRA_COMPLETE" in res.stdout and "kubectl-dra" in res.stdout, res


def test_bash_completion_completes(krew_install):
    """docs/install.md's line, for real: bash sources the script printed by the installed plugin
    and its completion function asks the frozen binary for candidates."""
    env, _ = krew_install
    script = (
        "source <(kubectl-dra completion bash)\n"
        'COMP_WORDS=(kubectl-dra ex); COMP_CWORD=1; _kubectl_dra_completion kubectl-dra; echo "1:${COMPREPLY[*]}"\n'
        'COMP_WORDS=(kubectl-dra explain ""); COMP_CWORD=2; _kubectl_dra_completion kubectl-dra; echo "2:${COMPREPLY[*]}"\n'
    )
    res = run(["bash", "--norc", "--noprofile", "-c", script], env)
    assert res.returncode == 0, res
    lines = dict(ln.split(":", 1) for ln in res.stdout.splitlines() if ln[:2] in ("1:", "2:"))
    assert lines.get("1", "").split() == ["explain"], res
    assert {"pod", "claim"} <= set(lines.get("2", "").split()), res


def test_kubectl_plugin_completion(krew_install, tmp_path):
    """`kubectl dra <TAB>`: kubectl (>= 1.26) asks kubectl_complete-dra on PATH; the bridge shipped
    in the archive answers from the frozen binary. Linked as docs/install.md says."""
    env, krew_root = krew_install
    bindir = tmp_path / "bin"
    bindir.mkdir()
    store_exe = (krew_root / "bin" / "kubectl-dra").resolve()
    (bindir / "kubectl_complete-dra").symlink_to(store_exe.parent / "kubectl_complete-dra")
    env = dict(env, PATH=f"{bindir}:{env['PATH']}")
    res = run(["kubectl", "__complete", "dra", "ex"], env)
    assert res.returncode == 0 and res.stdout.splitlines() == ["explain", ":4"], res
    res = run(["kubectl", "__complete", "dra", "explain", ""], env)
    assert res.returncode == 0 and sorted(res.stdout.splitlines()) == [":4", "claim", "pod"], res
    res = run(["kubectl", "__complete", "dra", "explain", "pod", "-o", ""], env)
    assert res.returncode == 0 and res.stdout.splitlines() == ["text", "wide", "json", "yaml", ":4"], res
    # file arguments: the shell completes file names
    res = run(["kubectl", "__complete", "dra", "explain", "pod", "--from-file", ""], env)
    assert res.returncode == 0 and res.stdout.splitlines()[-1] == ":0", res
