"""The stages at which a device is rejected for a request: the one owner of each stage's name (the `"stage"` of a
device in the JSON), its finding code, its label in the text output, its class and its place in the order of
findings. The per-device checks (analyze/devices/checks.py) yield them, the verdicts turn them into findings, the renderers
read them back from the JSON by name.

Modelled on kube-scheduler's framework.Code: the codes, their names and their classes live together."""

from __future__ import annotations

from enum import Enum


class StageClass(Enum):
    """What a stage says about a device: what it is (it does not match the request at all), where it is (on no node
    the pod may use), or what holds it (a matching device taken, tainted, short of counters or capacity, or behind a
    feature gate)."""

    SELECTS = "selects"
    PLACE = "place"
    HOLDS = "holds"


class Stage(Enum):
    """A rejection stage; the value is the name the JSON shows. Members are listed in the order device_checks runs
    the checks (what the device is, where it is, what holds it); Stage.ordered() is the order of findings."""

    POOL = "pool"
    BINDING = "binding"
    CLASS = "class"
    REQUEST = "request"
    CEL_ERROR = "cel-error"
    NODE = "node"
    IN_USE = "in-use"
    FEATURE = "feature"
    TAINT = "taint"
    COMPATIBILITY = "compatibility"
    COUNTERS = "counters"
    CAPACITY = "capacity"

    @property
    def code(self) -> str:
        """The finding reported when this stage rejects the devices of a request."""
        return _ROWS[self][0]

    @property
    def label(self) -> str:
        """How the text output names the devices rejected at this stage (grouped by selector where it has one)."""
        return _ROWS[self][1]

    @property
    def stage_class(self) -> StageClass:
        return _ROWS[self][2]

    @property
    def selects(self) -> bool:
        """Whether the stage decides if the device matches the request at all (what it is), rather than rejecting a
        matching device (where it is, what holds it)."""
        return self.stage_class is StageClass.SELECTS

    @property
    def holds(self) -> bool:
        """Whether something holds a matching device back: in use, tainted, short of counters or capacity, or behind
        a feature gate. An allocationMode All request fails on any such device."""
        return self.stage_class is StageClass.HOLDS

    @property
    def repairable(self) -> bool:
        """What holds a matching device that the cluster's state can change (free it, tolerate the taint, free
        counters or capacity): reported beside a count shortfall. A feature gate is not."""
        return self.holds and self is not Stage.FEATURE

    @property
    def per_selector(self) -> bool:
        """Whether one selector of the class or the request rejects the device (its index is the evidence's
        "selector"): the text output groups such devices by selector."""
        return self in (Stage.CLASS, Stage.REQUEST, Stage.CEL_ERROR)

    @property
    def rank(self) -> int:
        """The place in the order of findings: the first stage present among a request's devices is the primary
        reason. A CEL error comes first (the attempt errors); then what holds matching devices, where they are, and
        what the devices are last (the broadest reason)."""
        return _ROWS[self][3]

    @classmethod
    def ordered(cls) -> list[Stage]:
        return sorted(cls, key=lambda s: s.rank)

    @classmethod
    def named(cls, name: str) -> Stage | None:
        """The stage a JSON `"stage"` names, or None (no stage: a candidate, or a name this version does not know)."""
        return _BY_NAME.get(name)


# stage: (code, label, class, rank)
_ROWS: dict[Stage, tuple[str, str, StageClass, int]] = {
    Stage.CEL_ERROR: ("DRA301", "cel-error", StageClass.SELECTS, 0),
    Stage.TAINT: ("DRA405", "untolerated taint", StageClass.HOLDS, 1),
    Stage.COMPATIBILITY: ("DRA418", "incompatible counter groups", StageClass.HOLDS, 2),
    Stage.COUNTERS: ("DRA406", "shared counters exhausted", StageClass.HOLDS, 3),
    Stage.CAPACITY: ("DRA407", "not enough capacity", StageClass.HOLDS, 4),
    Stage.IN_USE: ("DRA404", "already allocated", StageClass.HOLDS, 5),
    Stage.FEATURE: ("DRA212", "feature disabled", StageClass.HOLDS, 6),
    Stage.NODE: ("DRA501", "not on a usable node", StageClass.PLACE, 7),
    Stage.REQUEST: ("DRA403", "request", StageClass.SELECTS, 8),
    Stage.CLASS: ("DRA402", "class", StageClass.SELECTS, 9),
    Stage.BINDING: ("DRA412", "binding conditions unsupported", StageClass.SELECTS, 10),
    Stage.POOL: ("DRA401", "pool unusable", StageClass.SELECTS, 11),
}
_BY_NAME = {s.value: s for s in Stage}
