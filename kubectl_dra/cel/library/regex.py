"""Kubernetes' regex library (k8s.io/apiserver/pkg/cel/library/regex.go): ``find`` and ``findAll`` on RE2."""

from __future__ import annotations

import re
from typing import Any

from .values import CelFunctionError, cel_error

# Patterns run on cel-cpp's own RE2 (regex extension), so syntax and linear-time matching are RE2's,
# like Go's regexp.  A small separate cel-cpp environment is evaluated from inside the callback.
_RE2_CODES = {
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
}


class _Regex:
    progs: dict | None = None
    errors: dict[str, str | None] = {}

    @classmethod
    def _programs(cls) -> dict:
        if cls.progs is None:
            from cel_expr_python import cel

            env = cel.NewEnv(
                config=cel.NewEnvConfigFromYaml("name: re2\nextensions:\n  - name: optional\n  - name: regex\n"),
                variables={"s": cel.Type.STRING, "p": cel.Type.STRING},
            )
            cls.progs = {
                "matches": env.compile("s.matches(p)"),
                "extract": env.compile('regex.extract(s, p).orValue("\\u0000none")'),
                "extractAll": env.compile("regex.extractAll(s, p)"),
            }
        return cls.progs

    @classmethod
    def run(cls, name: str, s: str, p: str):
        v = cls._programs()[name].eval(data={"s": s, "p": p})
        if v.type().name() == "ERROR":
            raise cel_error(go_regex_error(str(v.value()), p))
        return v.plain_value()


def go_regex_error(raw: str, pattern: str) -> str:
    msg = re.sub(r"^[A-Z_]+: ", "", raw)
    msg = msg.removeprefix("invalid regular expression: ")
    for code, go in _RE2_CODES.items():
        if msg.startswith(code + ": ") or msg == code:
            arg = msg[len(code) + 2 :] if msg.startswith(code + ": ") else ""
            return f"error parsing regexp: {go}: `{arg}`"
    return f"error parsing regexp: {msg}"


def validate_re2(pattern: str) -> str | None:
    """None if RE2 accepts the pattern, else Go's regexp error text."""
    if pattern in _Regex.errors:
        return _Regex.errors[pattern]
    try:
        _Regex.run("matches", "", pattern)
        err = None
    except CelFunctionError as e:
        err = str(e)
    if len(_Regex.errors) < 1000:
        _Regex.errors[pattern] = err
    return err


def _non_capturing(p: str) -> str:
    """Turn every capturing group into a non-capturing one (k8s find returns the whole match)."""
    out = []
    i, n = 0, len(p)
    in_class = False
    while i < n:
        c = p[i]
        if c == "\\":
            out.append(p[i : i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if i < n and p[i] == "^":
                out.append("^")
                i += 1
            if i < n and p[i] == "]":
                out.append("]")
                i += 1
            continue
        if c == "(":
            if p.startswith("(?P<", i) or (
                p.startswith("(?<", i) and not p.startswith("(?<=", i) and not p.startswith("(?<!", i)
            ):
                j = p.find(">", i)
                if j != -1:
                    out.append("(?:")
                    i = j + 1
                    continue
            if p.startswith("(?", i):
                out.append(c)
                i += 1
                continue
            out.append("(?:")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def f_find(s: str, pattern: str) -> str:
    err = validate_re2(pattern)
    if err:
        raise cel_error(err)
    v = _Regex.run("extract", s, _non_capturing(pattern))
    return "" if v == "\u0000none" else v


_PY_RE_CACHE: dict[str, Any] = {}
_POSIX = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7F",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}


def _python_re(pattern: str):
    """Python re equivalent of an (already RE2-validated) pattern, or None when a construct has no
    faithful translation (Unicode classes, \\Q..\\E, ungreedy flag, negated POSIX classes)."""
    hit = _PY_RE_CACHE.get(pattern, False)
    if hit is not False:
        return hit
    rx = None
    if not any(t in pattern for t in ("\\p", "\\P", "\\Q", "\\C", "(?U", "[:^")) and not re.search(
        r"\(\?[a-zA-Z]*U", pattern
    ):
        out, i, n, in_class = [], 0, len(pattern), False
        multiline = bool(re.search(r"\(\?[a-zA-Z]*m", pattern))
        while i < n:
            c = pattern[i]
            if c == "\\" and i + 1 < n:
                nxt = pattern[i + 1]
                out.append("\\Z" if nxt == "z" else pattern[i : i + 2])
                i += 2
                continue
            if in_class:
                m = re.match(r"\[:([a-z]+):\]", pattern[i:])
                if m and m.group(1) in _POSIX:
                    out.append(_POSIX[m.group(1)])
                    i += m.end()
                    continue
                if c == "]":
                    in_class = False
                out.append(c)
                i += 1
                continue
            if c == "[":
                in_class = True
                out.append(c)
                i += 1
                if i < n and pattern[i] == "^":
                    out.append("^")
                    i += 1
                if i < n and pattern[i] == "]":
                    out.append("\\]")
                    i += 1
                continue
            if c == "$" and not multiline:
                out.append("\\Z")
                i += 1
                continue
            if pattern.startswith("(?<", i) and not pattern.startswith("(?<=", i) and not pattern.startswith("(?<!", i):
                out.append("(?P<")
                i += 3
                continue
            out.append(c)
            i += 1
        try:
            rx = re.compile("".join(out), re.ASCII)
        except re.error:
            rx = None
    if len(_PY_RE_CACHE) < 1000:
        _PY_RE_CACHE[pattern] = rx
    return rx


def _go_find_all(rx, s: str, n: int) -> list[str]:
    """regexp.FindAllString: no empty match right after a previous match."""
    out: list[str] = []
    pos, prev_end, end = 0, -1, len(s)
    limit = n if n >= 0 else end + 1
    while len(out) < limit and pos <= end:
        m = rx.search(s, pos)
        if m is None:
            break
        accept = True
        if m.end() == pos:
            if m.start() == prev_end:
                accept = False
            pos += 1
        else:
            pos = m.end()
        prev_end = m.end()
        if accept:
            out.append(m.group(0))
    return out


def f_find_all(s: str, pattern: str, limit: int = -1) -> list:
    err = validate_re2(pattern)
    if err:
        raise cel_error(err)
    if limit == 0:
        return []
    # RE2 (linear time) unless the pattern can produce empty matches, whose handling in Go's
    # FindAllString the regex extension does not reproduce.
    empty_possible = any(t in pattern for t in ("\\b", "\\B", "^", "$")) or _Regex.run("matches", "", pattern)
    if empty_possible:
        rx = _python_re(pattern)
        if rx is not None:
            return _go_find_all(rx, s, limit)
    out = list(_Regex.run("extractAll", s, _non_capturing(pattern)))
    return out if limit < 0 else out[:limit]
