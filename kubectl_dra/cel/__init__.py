"""Kubernetes DRA CEL selector environment (cel-cpp via cel-expr-python, imported lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["CelEnvironment", "CelCompileError", "EvalResult", "CompiledSelector", "COST_EXCEEDED", "ENGINE_LIMIT"]

if TYPE_CHECKING:  # pragma: no cover
    from .environment import (
        COST_EXCEEDED,
        ENGINE_LIMIT,
        CelCompileError,
        CelEnvironment,
        CompiledSelector,
        EvalResult,
    )


def __getattr__(name: str):
    if name in __all__:
        from . import environment  # keep `import kubectl_dra.cel` cheap

        return getattr(environment, name)
    raise AttributeError(name)
