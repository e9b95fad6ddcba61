"""Semantic versions with the parsing and ordering of github.com/blang/semver/v4 (strict ``Parse``)
plus the ``normalize`` rules of the Kubernetes CEL semver library."""

from __future__ import annotations

_NUM = set("0123456789")
_ALNUM = set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")
UINT64_MAX = 2**64 - 1


class SemverError(ValueError):
    pass


def _only(s: str, allowed: set[str]) -> bool:
    return all(c in allowed for c in s)


def _leading_zero(s: str) -> bool:
    return len(s) > 1 and s[0] == "0"


def _number(part: str, what: str) -> int:
    if part == "":
        raise SemverError('strconv.ParseUint: parsing "": invalid syntax')
    if not _only(part, _NUM):
        raise SemverError(f"Invalid character(s) found in {what} number {_goq(part)}")
    if _leading_zero(part):
        raise SemverError(f"{what.capitalize()} number must not contain leading zeroes {_goq(part)}")
    v = int(part)
    if v > UINT64_MAX:
        raise SemverError(f"strconv.ParseUint: parsing {_goq(part)}: value out of range")
    return v


def _goq(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse(s: str) -> tuple[int, int, int, tuple[int | str, ...]]:
    """blang semver.Parse: returns (major, minor, patch, prerelease identifiers)."""
    if len(s) == 0:
        raise SemverError("Version string empty")
    parts = s.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major")
    minor = _number(parts[1], "minor")
    patch_str = parts[2]
    build: list[str] = []
    pre: list[str] = []
    bi = patch_str.find("+")
    if bi != -1:
        build = patch_str[bi + 1 :].split(".")
        patch_str = patch_str[:bi]
    pi = patch_str.find("-")
    if pi != -1:
        pre = patch_str[pi + 1 :].split(".")
        patch_str = patch_str[:pi]
    patch = _number(patch_str, "patch")
    pre_ids: list[int | str] = []
    for p in pre:
        if p == "":
            raise SemverError("Prerelease is empty")
        if _only(p, _NUM):
            if _leading_zero(p):
                raise SemverError(f"Numeric PreRelease version must not contain leading zeroes {_goq(p)}")
            pre_ids.append(int(p))
        elif _only(p, _ALNUM):
            pre_ids.append(p)
        else:
            raise SemverError(f"Invalid character(s) found in prerelease {_goq(p)}")
    for b in build:
        if b == "":
            raise SemverError("Build meta data is empty")
        if not _only(b, _ALNUM):
            raise SemverError(f"Invalid character(s) found in build meta data {_goq(b)}")
    return major, minor, patch, tuple(pre_ids)


def normalize(s: str) -> str:
    """normalizeAndParse's rewriting (k8s.io/apiserver/pkg/cel/library/semverlib.go)."""
    s = s[1:] if s.startswith("v") else s
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if len(p) == 0 or p[0] not in "0123456789":
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        while len(parts) < 3:
            parts.append("0")
    return ".".join(parts)


def canonical(v: tuple[int, int, int, tuple[int | str, ...]]) -> str:
    """Version without build metadata: equal strings <=> blang EQ."""
    major, minor, patch, pre = v
    base = f"{major}.{minor}.{patch}"
    if pre:
        base += "-" + ".".join(str(p) for p in pre)
    return base


def compare(a: tuple, b: tuple) -> int:
    for x, y in zip(a[:3], b[:3]):
        if x != y:
            return -1 if x < y else 1
    pa, pb = a[3], b[3]
    if not pa and not pb:
        return 0
    if not pa:
        return 1
    if not pb:
        return -1
    for x, y in zip(pa, pb):
        if x == y:
            continue
        xi, yi = isinstance(x, int), isinstance(y, int)
        if xi and yi:
            return -1 if x < y else 1
        if xi:
            return -1
        if yi:
            return 1
        return -1 if x < y else 1
    if len(pa) == len(pb):
        return 0
    return -1 if len(pa) < len(pb) else 1


def parse_canonical(text: str) -> tuple[int, int, int, tuple[int | str, ...]]:
    return parse(text)
