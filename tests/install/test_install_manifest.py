"""krew-manifest.yaml: krew-index's rules, and krew's own validator (sigs.k8s.io/krew v0.4.3
cmd/validate-krew-manifest), including its real install of every listed platform.

The validator downloads each platform's `uri`. The release URL is not reachable from here, so
the full run validates the manifest the release script generates for a URI base on a local
HTTP server (127.0.0.1) that serves the archives just built; the checked-in manifest gets the
validator's structural checks (-skip-install) and must equal the generated one except for the
uri/sha256 that a release rewrites.
"""

from __future__ import annotations

import re
import shutil

import pytest
import yaml
from install_helpers import ROOT, build, minimal_env, project_version, run

pytestmark = pytest.mark.install

MANIFEST = ROOT / "krew-manifest.yaml"


@pytest.fixture(scope="module")
def manifest():
    return yaml.safe_load(MANIFEST.read_text())


def test_header(manifest):
    assert manifest["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert manifest["kind"] == "Plugin"
    assert manifest["metadata"]["name"] == "dra"
    assert manifest["spec"]["version"] == f"v{project_version()}"
    assert manifest["spec"]["homepage"].startswith("https://")


def test_short_description(manifest):
    short = manifest["spec"]["shortDescription"]
    assert "\n" not in short and len(short) <= 50, (len(short), short)


def test_description_wrapped_without_usage_examples(manifest):
    lines = MANIFEST.read_text().splitlines()
    start = lines.index("  description: |") + 1
    body = []
    for line in lines[start:]:
        if line and not line.startswith("    "):
            break
        body.append(line)
    assert body and all(len(line) <= 80 for line in body), [line for line in body if len(line) > 80]
    desc = manifest["spec"]["description"]
    assert not re.search(r"kubectl[ -]dra|^\s*\$ |\s--?[a-z]", desc, re.M), "usage examples belong in --help"


def test_caveats_are_prerequisites_only(manifest):
    caveats = manifest["spec"].get("caveats", "")
    # only the RBAC prerequisite: no command lines, no flags
    assert "read access" in caveats
    assert not re.search(r"kubectl |\s--?[a-z]|\$ ", caveats), caveats


def test_platforms(manifest):
    version = manifest["spec"]["version"]
    for p in manifest["spec"]["platforms"]:
        labels = p["selector"]["matchLabels"]
        ext = "zip" if labels["os"] == "windows" else "tar.gz"
        assert p["uri"].endswith(f"/{version}/kubectl-dra_{labels['os']}_{labels['arch']}.{ext}"), p["uri"]
        assert re.fullmatch(r"[0-9a-f]{64}", p["sha256"]), p["sha256"]
        assert p["bin"] == ("kubectl-dra.exe" if labels["os"] == "windows" else "kubectl-dra")
        assert "files" not in p, "krew extracts the whole archive (LICENSE included) when files is omitted"


def test_checked_in_manifest_is_what_the_release_script_writes(dist, manifest):
    """Only uri/sha256 differ between ./krew-manifest.yaml and dist/dra.yaml, so the manifest the
    install tests use carries the checked-in descriptions, name, version, selectors and bin."""
    generated = yaml.safe_load((dist / "dra.yaml").read_text())

    def strip(m):
        platforms = [{k: v for k, v in p.items() if k not in ("uri", "sha256")} for p in m["spec"]["platforms"]]
        return {**m, "spec": {**m["spec"], "platforms": platforms}}

    assert strip(generated) == strip(manifest)
    assert [p["uri"] for p in generated["spec"]["platforms"]] == [p["uri"] for p in manifest["spec"]["platforms"]]
    # and the text is byte-identical apart from the sha256 lines (formatting is the script's)
    drop = lambda t: [ln for ln in t.splitlines() if "sha256:" not in ln]  # noqa: E731
    assert drop((dist / "dra.yaml").read_text()) == drop(MANIFEST.read_text())


def validator(tools, kubectl_bin, home, manifest_path, *flags):
    env = minimal_env(home, [kubectl_bin], TMPDIR=str(home))
    return run([tools["validate-krew-manifest"], "-manifest", manifest_path, *flags], env, timeout=600)


def test_validator_structural_checks_on_checked_in_manifest(tools, kubectl_bin, tmp_path):
    # krew-index keeps it as plugins/<name>.yaml and the validator checks name == file name.
    target = tmp_path / "dra.yaml"
    shutil.copy(MANIFEST, target)
    res = validator(tools, kubectl_bin, tmp_path, target, "-skip-install")
    assert res.returncode == 0, res
    assert "structural validation OK" in res.output, res


def test_validator_rejects_a_broken_manifest(tools, kubectl_bin, tmp_path):
    """Control: the validator does reject what krew-index would reject."""
    target = tmp_path / "dra.yaml"
    text = MANIFEST.read_text()
    target.write_text(re.sub(r"sha256: ([0-9a-f]{64})", lambda m: "sha256: " + m.group(1).upper(), text))
    res = validator(tools, kubectl_bin, tmp_path, target, "-skip-install")
    assert res.returncode != 0, res
    target.write_text(text.replace("name: dra", "name: dra-doctor"))
    res = validator(tools, kubectl_bin, tmp_path, target, "-skip-install")
    assert res.returncode != 0, res


def test_validator_full_install_of_every_platform(tools, kubectl_bin, dist, archive, release_server, tmp_path):
    """krew-index's CI check: every platform installs (download, sha256, extract) and a LICENSE
    file is extracted."""
    target = tmp_path / "dra.yaml"
    build("manifest", "--uri-base", release_server, "--out", str(target), "--archives", str(archive), dist=dist)
    res = validator(tools, kubectl_bin, tmp_path, target)
    assert res.returncode == 0, res
    assert "all 1 spec.platforms installed fine" in res.output, res
