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
