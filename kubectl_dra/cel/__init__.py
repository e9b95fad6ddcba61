"""Kubernetes DRA CEL selector environment (cel-cpp via cel-expr-python, imported lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = [
    "CelEnvironment",
    "CelCompileError",
    "EvalResult",
    "CompiledSelector",
    "COST_EXCEEDED",
    "ENGINE_LIMIT",
    "DERIVED_EMPTY_LIST",
]

if TYPE_CHECKING:  # pragma: no cover
    from ._common import COST_EXCEEDED, DERIVED_EMPTY_LIST, ENGINE_LIMIT, CelCompileError, EvalResult
    from ._selector import CompiledSelector
    from .environment import CelEnvironment

# The modules, by job: see README.md "Layout" (environment: a Kubernetes version; _selector: one compiled
# expression, built by _compile, _checks, _analysis, _rewrite and _memo; _engine and library/: cel-cpp and
# Kubernetes' libraries).
_HOME = {
    "CelEnvironment": "environment",
    "CompiledSelector": "_selector",
    "CelCompileError": "_common",
    "EvalResult": "_common",
    "COST_EXCEEDED": "_common",
    "ENGINE_LIMIT": "_common",
    "DERIVED_EMPTY_LIST": "_common",
}


def __getattr__(name: str):
    if name in _HOME:
        import importlib  # keep `import kubectl_dra.cel` cheap: nothing loads until a name is used

        return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    raise AttributeError(name)
