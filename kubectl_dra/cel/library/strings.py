"""cel-go's ext strings (v2 as used by Kubernetes): the functions whose edge cases cel-cpp words or handles
differently (``charAt``, ``substring``, ``indexOf``, ``lastIndexOf``)."""

from __future__ import annotations

from .values import cel_error


# cel-go ext strings (v2 as used by Kubernetes), ported rune for rune (Python str = code points).
def make_index_of_str(new_celgo: bool):
    def f(s: str, sub: str, offset: int = 0) -> int:
        if sub == "" and new_celgo:
            if offset < 0:
                raise cel_error(f"index out of range: {offset}")
            return min(offset, len(s))
        return f_index_of_str(s, sub, offset)

    return f


def make_last_index_of_str(new_celgo: bool):
    def f(s: str, sub: str, offset: int | None = None) -> int:
        if sub == "" and new_celgo and offset is not None:
            if offset < 0:
                raise cel_error(f"index out of range: {offset}")
            return min(offset, len(s))
        return f_last_index_of_str(s, sub, offset)

    return f


def f_index_of_str(s: str, sub: str, offset: int = 0) -> int:
    if sub == "":
        return offset
    if offset < 0:
        raise cel_error(f"index out of range: {offset}")
    if offset >= len(s):
        return -1
    return s.find(sub, offset)


def f_last_index_of_str(s: str, sub: str, offset: int | None = None) -> int:
    if offset is None:
        if sub == "":
            return len(s)
        if len(sub) > len(s):
            return -1
        offset = len(s) - 1
    if sub == "":
        return offset
    if offset < 0:
        raise cel_error(f"index out of range: {offset}")
    if offset >= len(s):
        return -1
    if offset > len(s) - len(sub):
        offset = len(s) - len(sub)
    for i in range(offset, -1, -1):
        if s.startswith(sub, i):
            return i
    return -1


def f_char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise cel_error(f"index out of range: {i}")
    return "" if i == len(s) else s[i]


def f_substring(s: str, start: int, end: int | None = None) -> str:
    if end is None:
        if start < 0 or start > len(s):
            raise cel_error(f"index out of range: {start}")
        return s[start:]
    if start > end:
        raise cel_error(f"invalid substring range. start: {start}, end: {end}")
    if start < 0 or start > len(s):
        raise cel_error(f"index out of range: {start}")
    if end < 0 or end > len(s):
        raise cel_error(f"index out of range: {end}")
    return s[start:end]
