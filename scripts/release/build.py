#!/usr/bin/env python3
"""Release builds of kubectl-dra: wheel + sdist, the standalone krew archive, the krew manifest.

    python scripts/release/build.py all        # everything below, into dist/
    python scripts/release/build.py python     # python -m build: dist/kubectl_dra-*.whl, *.tar.gz
    python scripts/release/build.py binary     # PyInstaller onedir -> dist/kubectl-dra_<os>_<arch>.tar.gz
    python scripts/release/build.py manifest   # dist/<name>.yaml from the archives in dist/
    python scripts/release/build.py manifest --update-root   # rewrite ./krew-manifest.yaml (release)
    python scripts/release/build.py tools      # print (JSON) the cached toolchain: krew, validator, kubectl, pipx

Everything slow is cached under ${KUBECTL_DRA_CACHE:-$HOME/.cache/kubectl-dra}/:
  dist/toolchain-<hash>/   venv with requirements/dist.lock (PyInstaller, build, pipx, kubectl)
  dist/binary-<hash>/      the PyInstaller onedir and its packed archive, keyed by the sources,
                           the lock files, the packaging files and this script
  tools/krew-<ver>-<go>/   krew and validate-krew-manifest built from the Go module proxy
so a rerun on a fresh clone of unchanged sources only copies the archive.

PyInstaller does not cross-compile: `binary` builds for the machine it runs on. Release CI runs
it once per OS/arch (see docs/install.md) and then `manifest` over all the archives.

Only the standard library is used until the toolchain venv exists; the script then re-executes
itself with that venv's Python (which has PyYAML, build, PyInstaller).
"""

from __future__ import annotations

import argparse
import fcntl
import gzip
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements" / "dist.lock"
ROOT_MANIFEST = ROOT / "krew-manifest.yaml"
KREW_MODULE = "sigs.k8s.io/krew"
KREW_VERSION = "v0.4.3"
DEFAULT_URI_BASE = "https://github.com/kubectl-dra/kubectl-dra/releases/download/{tag}"
ARCHIVE_RE = re.compile(r"^kubectl-dra_(?P<os>[a-z0-9]+)_(?P<arch>[a-z0-9]+)\.(?P<ext>tar\.gz|zip)$")
# Fixed timestamp for archive members, so that the same onedir always packs to the same sha256.
ARCHIVE_MTIME = 315532800  # 1980-01-01
# Files and directories whose content decides the standalone build (the cache key).
BINARY_INPUTS = [
    "kubectl_dra",
    "pyproject.toml",
    "README.md",
    "LICENSE",
    "packaging",
    "requirements/dist.lock",
    "scripts/release/build.py",
]
IN_TOOLCHAIN = "KUBECTL_DRA_BUILD_IN_TOOLCHAIN"


def log(msg: str) -> None:
    print(f"[build] {msg}", file=sys.stderr, flush=True)


def cache_root() -> Path:
    env = os.environ.get("KUBECTL_DRA_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "kubectl-dra"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def project_version() -> str:
    text = (ROOT / "kubectl_dra" / "__init__.py").read_text()
    m = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', text, re.M)
    if not m:
        raise SystemExit("kubectl_dra/__init__.py has no __version__")
    return m.group(1)


def host_platform() -> tuple[str, str]:
    """(os, arch) in krew's (GOOS, GOARCH) spelling for the machine this runs on."""
    osname = {"linux": "linux", "darwin": "darwin", "win32": "windows"}.get(sys.platform, sys.platform)
    machine = platform.machine().lower()
    arch = {
        "x86_64": "amd64",
        "amd64": "amd64",
        "aarch64": "arm64",
        "arm64": "arm64",
        "armv7l": "arm",
        "i386": "386",
        "i686": "386",
        "ppc64le": "ppc64le",
    }.get(machine, machine)
    return osname, arch


@contextmanager
def locked(path: Path):
    """Serialise builds of one cache entry (pytest-xdist workers, parallel make)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    log("$ " + " ".join(str(c) for c in cmd))
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


# --------------------------------------------------------------------------- toolchain venv
def toolchain_dir() -> Path:
    h = hashlib.sha256()
    h.update(LOCK.read_bytes())
    h.update(sys.version.encode())
    h.update(os.path.realpath(sys.base_prefix).encode())
    h.update(platform.machine().encode())
    return cache_root() / "dist" / f"toolchain-{h.hexdigest()[:16]}"


def venv_bin(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / name


def ensure_toolchain() -> Path:
    """The venv with requirements/dist.lock, created once per lock/Python and then only read."""
    final = toolchain_dir()
    venv = final / "venv"
    if (final / "ok").exists():
        return venv
    with locked(final.with_suffix(".lock")):
        if (final / "ok").exists():
            return venv
        t0 = time.monotonic()
        # The venv must be created at its final path (its scripts embed it), so it is built in
        # place and marked complete by the "ok" file only at the end.
        shutil.rmtree(final, ignore_errors=True)
        final.mkdir(parents=True)
        base_python = getattr(sys, "_base_executable", sys.executable)
        run([base_python, "-m", "venv", venv])
        run(
            [
                venv_bin(venv, "python"),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--no-input",
                "-r",
                LOCK,
            ]
        )
        # (its "No broken requirements found." on stderr: `build.py tools` prints JSON on stdout)
        run([venv_bin(venv, "python"), "-m", "pip", "check"], stdout=sys.stderr)
        (final / "ok").write_text(f"created in {time.monotonic() - t0:.1f}s\n")
        log(f"toolchain ready in {time.monotonic() - t0:.1f}s: {venv}")
    return venv


def reexec_in_toolchain(argv: list[str]) -> None:
    venv = ensure_toolchain()
    if os.environ.get(IN_TOOLCHAIN) == str(venv):
        return
    py = venv_bin(venv, "python")
    env = dict(os.environ, **{IN_TOOLCHAIN: str(venv)})
    os.execve(str(py), [str(py), str(Path(__file__).resolve()), *argv], env)


# --------------------------------------------------------------------------- Go tools
def go_tools_dir() -> Path:
    go = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True, check=True).stdout.strip()
    return cache_root() / "tools" / f"krew-{KREW_VERSION}-{go}"


def ensure_go_tools() -> dict[str, Path]:
    """krew and validate-krew-manifest built from the Go module proxy (pinned version)."""
    d = go_tools_dir()
    tools = {"krew": d / "krew", "validate-krew-manifest": d / "validate-krew-manifest"}
    if all(p.exists() for p in tools.values()):
        return tools
    with locked(d.with_suffix(".lock")):
        if all(p.exists() for p in tools.values()):
            return tools
        t0 = time.monotonic()
        tmp = Path(tempfile.mkdtemp(prefix=d.name + ".", dir=d.parent))
        env = dict(os.environ, GOBIN=str(tmp), CGO_ENABLED="0", GOFLAGS="-mod=mod -buildvcs=false", GOTOOLCHAIN="local")
        run(
            [
                "go",
                "install",
                f"{KREW_MODULE}/cmd/krew@{KREW_VERSION}",
                f"{KREW_MODULE}/cmd/validate-krew-manifest@{KREW_VERSION}",
            ],
            env=env,
        )
        shutil.rmtree(d, ignore_errors=True)
        tmp.rename(d)
        log(f"krew {KREW_VERSION} built in {time.monotonic() - t0:.1f}s: {d}")
    return tools


def cmd_tools(args) -> None:
    venv = ensure_toolchain()
    go = ensure_go_tools()
    print(
        json.dumps(
            {
                "python": str(venv_bin(venv, "python")),
                "pipx": str(venv_bin(venv, "pipx")),
                "pre-commit": str(venv_bin(venv, "pre-commit")),
                "pyinstaller": str(venv_bin(venv, "pyinstaller")),
                "kubectl": str(venv_bin(venv, "kubectl")),
                "krew": str(go["krew"]),
                "validate-krew-manifest": str(go["validate-krew-manifest"]),
            },
            indent=2,
        )
    )


# --------------------------------------------------------------------------- wheel + sdist
def build_python(outdir: Path, *, sdist: bool = True, wheel: bool = True) -> list[Path]:
    venv = ensure_toolchain()
    outdir.mkdir(parents=True, exist_ok=True)
    before = {p.name for p in outdir.iterdir()}
    version = project_version()
    # Remove stale artefacts of this version so the result is exactly what was just built.
    for p in outdir.glob(f"kubectl_dra-{version}*"):
        if (p.suffix == ".whl" and wheel) or (p.name.endswith(".tar.gz") and sdist):
            p.unlink()
    # Both: python -m build's default, the sdist first and the wheel built from the unpacked
    # sdist, which proves the sdist is complete. Isolated: the backend comes from pyproject's
    # [build-system] requires (pinned).
    flags = [] if (sdist and wheel) else ["--sdist"] if sdist else ["--wheel"]
    run([venv_bin(venv, "python"), "-m", "build", *flags, "--outdir", outdir, ROOT])
    built = sorted(
        p for p in outdir.glob(f"kubectl_dra-{version}*") if p.suffix == ".whl" or p.name.endswith(".tar.gz")
    )
    log("built " + ", ".join(p.name for p in built) + f" ({len(before)} files were in {outdir})")
    return built


def cmd_python(args) -> None:
    for p in build_python(Path(args.dist)):
        print(p)


# --------------------------------------------------------------------------- standalone binary
def binary_key() -> str:
    h = hashlib.sha256()
    h.update(toolchain_dir().name.encode())
    h.update("/".join(host_platform()).encode())
    for rel in BINARY_INPUTS:
        p = ROOT / rel
        files = (
            [p]
            if p.is_file()
            else sorted(f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc")
        )
        for f in files:
            h.update(str(f.relative_to(ROOT)).encode() + b"\0")
            h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()[:20]


def archive_name(osname: str, arch: str) -> str:
    return f"kubectl-dra_{osname}_{arch}." + ("zip" if osname == "windows" else "tar.gz")


def exe_name(osname: str) -> str:
    return "kubectl-dra.exe" if osname == "windows" else "kubectl-dra"


def smoke_test(exe: Path) -> str:
    """Run the frozen binary with an empty environment: no project venv, no Python on PATH."""
    env = {"PATH": "/usr/bin:/bin", "HOME": tempfile.gettempdir(), "LANG": "C.UTF-8"}
    if os.name == "nt":
        env = {"SYSTEMROOT": os.environ.get("SYSTEMROOT", ""), "PATH": os.environ.get("SYSTEMROOT", "")}
    res = subprocess.run([str(exe), "version"], env=env, capture_output=True, text=True, timeout=120)
    if res.returncode != 0 or project_version() not in res.stdout + res.stderr:
        raise SystemExit(f"frozen binary failed its smoke test (exit {res.returncode}):\n{res.stdout}\n{res.stderr}")
    return res.stdout.strip()


def pack(onedir: Path, dest: Path, osname: str) -> None:
    """The krew archive: the onedir's content at the top level plus LICENSE (and, except on
    Windows, kubectl's plugin-completion bridge kubectl_complete-dra), reproducibly."""
    entries: list[tuple[Path, str]] = [(ROOT / "LICENSE", "LICENSE")]
    if osname != "windows":
        entries.append((ROOT / "packaging" / "kubectl_complete-dra", "kubectl_complete-dra"))
    for p in sorted(onedir.rglob("*")):
        entries.append((p, p.relative_to(onedir).as_posix()))
    tmp = dest.with_name(dest.name + ".tmp")
    if osname == "windows":
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            for src, arc in entries:
                if src.is_file():
                    zi = zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0))
                    zi.external_attr = (0o755 if os.access(src, os.X_OK) else 0o644) << 16
                    zi.compress_type = zipfile.ZIP_DEFLATED
                    z.writestr(zi, src.read_bytes())
    else:
        with (
            open(tmp, "wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz,
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            for src, arc in entries:
                ti = tar.gettarinfo(str(src), arcname=arc)
                ti.uid = ti.gid = 0
                ti.uname = ti.gname = ""
                ti.mtime = ARCHIVE_MTIME
                if ti.isreg():
                    ti.mode = 0o755 if os.access(src, os.X_OK) else 0o644
                    with open(src, "rb") as f:
                        tar.addfile(ti, f)
                else:
                    ti.mode = 0o755 if ti.isdir() else ti.mode
                    tar.addfile(ti)
    tmp.replace(dest)


def build_binary(outdir: Path) -> Path:
    osname, arch = host_platform()
    venv = ensure_toolchain()
    key = binary_key()
    entry = cache_root() / "dist" / f"binary-{key}"
    archive = entry / archive_name(osname, arch)
    with locked(entry.with_suffix(".lock")):
        if not (entry / "ok").exists():
            t0 = time.monotonic()
            shutil.rmtree(entry, ignore_errors=True)
            work = Path(tempfile.mkdtemp(prefix=f"binary-{key}.", dir=entry.parent))
            try:
                wheel = build_python(work / "wheel", sdist=False)[0]
                site = work / "site"
                run(
                    [
                        venv_bin(venv, "python"),
                        "-m",
                        "pip",
                        "install",
                        "-q",
                        "--disable-pip-version-check",
                        "--no-deps",
                        "--no-compile",
                        "--target",
                        site,
                        wheel,
                    ]
                )
                # Install-time paths would make every build differ: PEP 610's direct_url.json (the
                # temporary wheel path) and RECORD's line for the console script (its shebang
                # names the toolchain's python; the script itself is not frozen). Drop both, so
                # the same sources always freeze to the same bytes.
                for di in site.glob("kubectl_dra-*.dist-info"):
                    (di / "direct_url.json").unlink(missing_ok=True)
                    record = di / "RECORD"
                    record.write_text(
                        "".join(
                            line
                            for line in record.read_text().splitlines(True)
                            if not line.startswith((f"{di.name}/direct_url.json,", "../"))
                        )
                    )
                env = dict(
                    os.environ,
                    KUBECTL_DRA_SITE=str(site),
                    PYTHONPATH=str(site),
                    PYTHONHASHSEED="0",
                    SOURCE_DATE_EPOCH=str(ARCHIVE_MTIME),
                )
                env.pop("PYTHONSTARTUP", None)
                with open(work / "pyinstaller.log", "w") as logf:
                    try:
                        run(
                            [
                                venv_bin(venv, "pyinstaller"),
                                "--noconfirm",
                                "--clean",
                                "--distpath",
                                work / "out",
                                "--workpath",
                                work / "build",
                                ROOT / "packaging" / "kubectl-dra.spec",
                            ],
                            env=env,
                            cwd=work,
                            stdout=logf,
                            stderr=subprocess.STDOUT,
                        )
                    except subprocess.CalledProcessError:
                        sys.stderr.write((work / "pyinstaller.log").read_text()[-6000:])
                        raise
                onedir = work / "out" / "kubectl-dra"
                log("smoke test: " + smoke_test(onedir / exe_name(osname)))
                entry.mkdir(parents=True)
                (work / "out" / "kubectl-dra").rename(entry / "kubectl-dra")
                shutil.copy(work / "pyinstaller.log", entry / "pyinstaller.log")
                pack(entry / "kubectl-dra", archive, osname)
                (entry / "ok").write_text(
                    json.dumps(
                        {
                            "key": key,
                            "seconds": round(time.monotonic() - t0, 1),
                            "archive": archive.name,
                            "sha256": sha256_file(archive),
                        }
                    )
                    + "\n"
                )
                log(f"standalone build in {time.monotonic() - t0:.1f}s -> {entry}")
            finally:
                shutil.rmtree(work, ignore_errors=True)
        else:
            log(f"standalone build cached: {entry}")
        os.utime(entry)  # most recently used, for prune()
        outdir.mkdir(parents=True, exist_ok=True)
        dest = outdir / archive.name
        shutil.copyfile(archive, dest)
    prune("binary-*", keep=int(os.environ.get("KUBECTL_DRA_CACHE_KEEP", "4")))
    return dest


def prune(pattern: str, keep: int) -> None:
    """Drop all but the `keep` most recently used cache entries matching pattern (each source
    change makes a new binary-<key> entry of ~130 MB)."""
    base = cache_root() / "dist"
    entries = sorted(
        (p for p in base.glob(pattern) if p.is_dir() and "." not in p.name),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for old in entries[keep:]:
        with locked(old.with_suffix(".lock")):
            shutil.rmtree(old, ignore_errors=True)
        log(f"pruned old cache entry {old}")


def cmd_binary(args) -> None:
    print(build_binary(Path(args.dist)))


# --------------------------------------------------------------------------- krew manifest
def _block(text: str, indent: str = "    ") -> str:
    return "".join(indent + line + "\n" if line.strip() else "\n" for line in text.rstrip("\n").split("\n"))


def render_manifest(*, name: str, version: str, meta: dict, platforms: list[dict]) -> str:
    out = [
        "apiVersion: krew.googlecontainertools.github.com/v1alpha2",
        "kind: Plugin",
        "metadata:",
        f"  name: {name}",
        "spec:",
        f"  version: {version}",
        f"  homepage: {meta['homepage']}",
        f"  shortDescription: {meta['shortDescription']}",
        "  description: |",
        _block(meta["description"]).rstrip("\n"),
    ]
    if meta.get("caveats"):
        out += ["  caveats: |", _block(meta["caveats"]).rstrip("\n")]
    out.append("  platforms:")
    for p in platforms:
        out += [
            "  - selector:",
            "      matchLabels:",
            f"        os: {p['os']}",
            f"        arch: {p['arch']}",
            f"    uri: {p['uri']}",
            f"    sha256: {p['sha256']}",
            f"    bin: {p['bin']}",
        ]
    return "\n".join(out) + "\n"


def build_manifest(archives: list[Path], *, uri_base: str, name: str | None) -> tuple[str, str]:
    import yaml  # only inside the toolchain venv

    root = yaml.safe_load(ROOT_MANIFEST.read_text())
    meta = root["spec"]
    name = name or root["metadata"]["name"]
    version = "v" + project_version()
    base = uri_base.format(tag=version, version=version).rstrip("/")
    platforms = []
    for a in sorted(archives, key=lambda p: p.name):
        m = ARCHIVE_RE.match(a.name)
        if not m:
            raise SystemExit(f"not a kubectl-dra release archive: {a}")
        platforms.append(
            {
                "os": m["os"],
                "arch": m["arch"],
                "uri": f"{base}/{a.name}",
                "sha256": sha256_file(a),
                "bin": exe_name(m["os"]),
            }
        )
    if not platforms:
        raise SystemExit("no kubectl-dra_<os>_<arch>.tar.gz|zip archive to put in the manifest")
    text = render_manifest(name=name, version=version, meta=meta, platforms=platforms)
    # The hand-written YAML must mean exactly what we think it means.
    parsed = yaml.safe_load(text)
    assert parsed["metadata"]["name"] == name and parsed["spec"]["version"] == version
    for k in ("homepage", "shortDescription", "description", "caveats"):
        assert parsed["spec"].get(k) == meta.get(k), k
    assert [p["sha256"] for p in parsed["spec"]["platforms"]] == [p["sha256"] for p in platforms]
    return name, text


def cmd_manifest(args) -> None:
    dist = Path(args.dist)
    archives = (
        [Path(a) for a in args.archives]
        if args.archives
        else sorted(p for p in dist.glob("kubectl-dra_*") if ARCHIVE_RE.match(p.name))
    )
    name, text = build_manifest(archives, uri_base=args.uri_base, name=args.name)
    if args.update_root:
        ROOT_MANIFEST.write_text(text)
        print(ROOT_MANIFEST)
    else:
        dist.mkdir(parents=True, exist_ok=True)
        out = Path(args.out) if args.out else dist / f"{name}.yaml"
        out.write_text(text)
        print(out)


def cmd_all(args) -> None:
    dist = Path(args.dist)
    for p in build_python(dist):
        print(p)
    print(build_binary(dist))
    cmd_manifest(args)


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dist", default=str(ROOT / "dist"), help="output directory (default: ./dist)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("tools", help="build/locate the cached toolchain and print it as JSON")
    sub.add_parser("python", help="wheel and sdist (python -m build)")
    sub.add_parser("binary", help="standalone PyInstaller build for this machine, packed for krew")
    for name in ("manifest", "all"):
        p = sub.add_parser(name, help="krew manifest" if name == "manifest" else "python + binary + manifest")
        p.add_argument(
            "--uri-base",
            default=os.environ.get("KUBECTL_DRA_URI_BASE", DEFAULT_URI_BASE),
            help=f"where the archives are published; {{tag}} is replaced by v<version> (default: {DEFAULT_URI_BASE})",
        )
        p.add_argument("--name", help="krew plugin name (default: metadata.name of ./krew-manifest.yaml)")
        p.add_argument("--archives", nargs="*", help="archives to list (default: dist/kubectl-dra_*)")
        p.add_argument("--out", help="output file (default: dist/<name>.yaml)")
        p.add_argument("--update-root", action="store_true", help="rewrite ./krew-manifest.yaml instead")
    args = ap.parse_args(argv)
    if args.cmd != "tools":
        reexec_in_toolchain(argv)
    {"tools": cmd_tools, "python": cmd_python, "binary": cmd_binary, "manifest": cmd_manifest, "all": cmd_all}[
        args.cmd
    ](args)


if __name__ == "__main__":
    main(sys.argv[1:])
