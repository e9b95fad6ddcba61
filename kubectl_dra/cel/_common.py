"""Limits, the stand-in names the source rewriting uses, the compile error and the evaluation result: shared by
every part of the CEL environment."""

from __future__ import annotations

from dataclasses import dataclass

# Marks a derived attribute whose value is an empty list (_derived.py): 1.38 keeps the empty []string, which no
# published attribute can be (its conversion drops empty lists), an empty set where constraints compare sets.
DERIVED_EMPTY_LIST = "derivedEmptyList"

MAX_EXPRESSION_BYTES = 10 * 1024
COST_LIMIT = 1_000_000
COST_EXCEEDED = "operation cancelled: actual cost limit exceeded"
# cel-cpp (as built into cel-expr-python 0.1.3) aborts an evaluation after 10,000 comprehension
# iterations in total; Kubernetes' limit is a cost of 1,000,000, so some expressions Kubernetes
# evaluates fine cannot be evaluated here.
ENGINE_LIMIT = (
    "kubectl-dra: the expression needs more than 10000 loop iterations, beyond what the "
    "local CEL engine evaluates; Kubernetes' result is unknown"
)
MAX_VALUE_SIZE = 2_000_000  # elements / characters of any intermediate value
NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) "
    "or guarding the check with has() for optional fields"
)
# Same-length stand-ins for member names that clash with the strings extension (caret columns stay right).
RENAMES = {"indexOf": "k8sIdxO", "lastIndexOf": "k8sLastIdxO", "charAt": "k8sCAt", "substring": "k8sSubstr"}
LISTS_RANGE = "k8sLstRange"  # same length as "lists.range"
K8S_STRING = "k8sStr"  # same length as "string"
# receiver-style calls of conversion functions (x.string()) are renamed to these same-length names,
# which only have hidden member overloads, so the error can name the receiver type like cel-go
CONVERSION_STANDINS = {
    "string": K8S_STRING,
    "int": "k8i",
    "uint": "k8ui",
    "double": "k8sDbl",
    "bool": "k8sB",
    "bytes": "k8sBy",
}
HIDDEN_MEMBER = "k8s_hidden_member_"
# Global-only functions that cel-go refuses receiver-style ("found no matching overload for 'sign' applied to
# 'kubernetes.Quantity.()'"), with the arities of their hidden member overloads: _engine.py declares those so that
# the checker resolves such calls, and _checks.hidden_member_calls / _compile.hidden_member_issues word them.
GLOBAL_ONLY = {
    "sign": (1,),
    "quantity": (1,),
    "isQuantity": (1,),
    "semver": (1, 2),
    "isSemver": (1, 2),
    "url": (1,),
    "isURL": (1,),
    "isIP": (1,),
    "cidr": (1,),
    "isCIDR": (1,),
}
QEQ = "k8sQuantityEq"
UNRENAME = {v: k for k, v in RENAMES.items()}
UNRENAME[LISTS_RANGE] = "lists.range"
UNRENAME.update({v: k for k, v in CONVERSION_STANDINS.items()})


class CelCompileError(Exception):
    """An expression that Kubernetes would reject at compile time; ``str()`` is the k8s wording.

    exact=False marks an expression Kubernetes accepts but the local engine cannot run (the
    message then starts with "kubectl-dra:"), e.g. transformMap() or the format.* library.
    """

    def __init__(self, message: str, exact: bool = True):
        super().__init__(message)
        self.message = message
        self.exact = exact


@dataclass(frozen=True, slots=True)
class EvalResult:
    """Outcome of one selector on one device.

    value: True/False, or None when ``error`` is set.
    error: the Kubernetes runtime error text, or None.
    reads: ((path, value), ...) what the expression read; value None means "missing".
    exact: False when the result is this tool's limitation rather than Kubernetes' answer
        (``error`` then starts with "kubectl-dra:"); see ENGINE_LIMIT.

    "operation cancelled: actual cost limit exceeded" is an approximation: cel-cpp has no cost
    tracking, so it is reported when a static bound of the cost (counting one iteration for loops
    that can stop early) exceeds Kubernetes' limit of 1,000,000, when an intermediate value could
    exceed 2,000,000 elements/characters, or when the engine's iteration budget ran out and the
    pessimistic bound exceeds the limit.
    """

    value: bool | None
    error: str | None
    reads: tuple = ()
    exact: bool = True
    # a derived version given without the build metadata it may carry ("1.2.3+abc" as "1.2.3"): _derived.py
    build_dropped: bool = False

    @property
    def device_matches_error(self) -> str | None:
        """The error as cel.CompilationResult.DeviceMatches returns it: 1.37's optional-chaining
        hint is only added by the allocator (selectorsMatch), so per-device results omit it."""
        if self.error is None:
            return None
        return self.error.replace(NO_SUCH_KEY_HINT, "")
