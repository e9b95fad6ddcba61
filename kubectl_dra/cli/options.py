"""The command line's options, built and checked once from the flags (kubectl's Options/Complete/Validate): the
commands read typed fields, never a dict of flag names."""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_dra.errors import DraError
from kubectl_dra.features import (
    DEFAULT_VERSION,
    NEWEST,
    SUPPORTED_VERSIONS,
    FeatureGateError,
    Semantics,
    check_gates,
    parse_gates,
    parse_version,
    version_tuple,
)

VERSIONS_METAVAR = "|".join(f"{a}.{b}" for a, b in SUPPORTED_VERSIONS)


def parse_timeout(text: str | None) -> float | None:
    """--request-timeout as kubectl reads it: 30s, 1m, 500ms, a bare number of seconds; 0 waits forever (None)."""
    t = (text or "0").strip().lower()
    mult = 1.0
    for suffix, m in (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if t.endswith(suffix):
            t, mult = t[: -len(suffix)], m
            break
    try:
        v = float(t) * mult
    except ValueError:
        raise DraError(f"invalid --request-timeout {text!r}: use a duration such as 30s or 1m") from None
    if v < 0:
        raise DraError("--request-timeout must not be negative")
    return v or None


@dataclass(frozen=True)
class Options:
    namespace: str | None
    all_namespaces: bool
    kubeconfig: str | None
    context: str | None
    timeout: float | None
    output: str
    from_files: tuple[str, ...]
    kubernetes_version: str | None
    feature_gates: dict
    all_devices: bool
    exit_zero: bool
    no_color: bool
    verbose: bool
    chunk_size: int = 500
    alone: bool = False  # judge each pod as if it were the only one waiting (no queue)

    @classmethod
    def from_click(cls, params: dict) -> "Options":
        """Validate every flag up front, so that a bad one fails before any API call."""
        try:
            gates = parse_gates(params.get("feature_gates"))
            if params.get("kubernetes_version"):
                parse_version(params["kubernetes_version"])
        except FeatureGateError as e:
            raise DraError(str(e)) from None
        return cls(
            namespace=params.get("namespace"),
            all_namespaces=bool(params.get("all_namespaces")),
            kubeconfig=params.get("kubeconfig"),
            context=params.get("context"),
            timeout=parse_timeout(params.get("request_timeout")),
            output=params.get("output") or "text",
            from_files=tuple(params.get("from_files") or ()),
            kubernetes_version=params.get("kubernetes_version"),
            feature_gates=gates,
            all_devices=bool(params.get("all_devices")),
            exit_zero=bool(params.get("exit_zero")),
            no_color=bool(params.get("no_color")),
            verbose=bool(params.get("verbose")),
            chunk_size=int(params["chunk_size"] if params.get("chunk_size") is not None else 500),
            alone=bool(params.get("alone")),
        )

    def semantics(self, server_version: str | None) -> Semantics:
        """The flag wins; else the server's minor; a server newer than the newest supported minor is analysed with
        the newest minor's semantics, and the report says so; else the newest released minor (DEFAULT_VERSION). --feature-gates must be possible on
        that minor (check_gates)."""
        sem = self._semantics(server_version)
        try:
            check_gates(sem.version, self.feature_gates or {})
        except FeatureGateError as e:
            raise DraError(str(e)) from None
        return sem

    def _semantics(self, server_version: str | None) -> Semantics:
        if self.kubernetes_version:
            return Semantics.for_version(parse_version(self.kubernetes_version), self.feature_gates, "flag")
        if server_version:
            v = version_tuple(server_version)
            if v in SUPPORTED_VERSIONS:
                return Semantics.for_version(v, self.feature_gates, "server")
            if v is not None and v > NEWEST:
                return Semantics.for_version(NEWEST, self.feature_gates, "server", newer_server=server_version)
            try:
                parse_version(server_version)
            except FeatureGateError as e:
                raise DraError(str(e)) from None
        return Semantics.for_version(DEFAULT_VERSION, self.feature_gates, "default")
