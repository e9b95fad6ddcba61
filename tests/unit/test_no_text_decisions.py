"""No behaviour is decided from our own message text: a decision reads a kind, a stage or a flag (ErrorKind,
Stage, InvalidPool, Place.by_group, ...), and the text is only shown. The test reads kubectl_dra/ (ast) for the
tests a decision made from text would use (`x.startswith("...")`, `x.endswith("...")`, `"..." in x`,
`x == "some words"`) on a value that holds a message of ours: a finding's message, an error's message, a reason, a
pool's state or invalid reason, a verdict's summary.

Parsing text that others write is what some modules are for: the scheduler's and the kubelet's event messages
(analyze/pod/scheduler.py, analyze/pod/kubelet.py and the binding path's PreBind messages), cel-cpp's errors turned into
cel-go's words (cel/_messages.py, cel/_catalog.py). Those modules are exempt. A Kubernetes `reason` compared for
equality with one word ("FailedScheduling", "Infeasible") is a machine-readable value, not text: only a literal
with a space counts for ==."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "kubectl_dra"

# Names that hold a message of ours wherever they appear (a variable or an attribute).
MESSAGE_NAMES = {
    "message",
    "msg",
    "reason",
    "invalid_reason",
    "pool_state",
    "pool_states",
    "summary",
    "why",
    "detail",
}

# Modules that parse the text of the scheduler, the kubelet or other components (events, conditions): the text
# is what they read, by design.
PARSERS = {
    "analyze/pod/scheduler.py",
    "analyze/pod/kubelet.py",
    "analyze/pod/binding.py",
    "cel/_messages.py",
    "cel/_catalog.py",
}

# Decisions still made from text, each with why it is left as it is. Shrink this list; never grow it.
KNOWN = {
    # the scheduler's own words on a gang's failed cycle, carried in the finding that quotes them
    ("analyze/queue/report.py", "message"),
    # the CEL engine's "no such key" (cel-go's wording, which the local engine reproduces): the hint differs
    ("analyze/pod/verdicts.py", "message"),
    # DRA604's node condition (NotReady) read back from the finding
    ("analyze/reports/explain.py", "message"),
    # the text renderer finds the finding a summary repeats, to print it once (the Verdict line's lookup, and the
    # findings list's "(see Summary)": one decision, in the two modules the renderer was split into)
    ("render/text.py", "summary"),
    ("render/verdict.py", "summary"),
    # the text renderer drops the words a device's group already says from its reason
    ("render/text.py", "reason"),
}


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "strip"):
        # x.get("message") / x.strip(): the value it reads
        if node.func.attr == "get" and node.args and isinstance(node.args[0], ast.Constant):
            return str(node.args[0].value)
        return _name(node.func.value)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)  # x["message"]
    return None


def _text_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    if isinstance(node, ast.Name) and node.id.isupper():
        return True  # a module's text constant (GANG_WORD)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Tuple):
        return bool(node.elts) and all(_text_literal(e) for e in node.elts)
    return False


def _words(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and " " in node.value


def text_decisions(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of every test of a message-like value against literal text."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            arg = node.args[0] if node.args else None
            if node.func.attr in ("startswith", "endswith") and arg is not None:
                name = _name(node.func.value)
                if (name in MESSAGE_NAMES or name == "ok") and (_text_literal(arg) or _name(arg) in MESSAGE_NAMES):
                    out.append((node.lineno, name))
        elif isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators):
                if isinstance(op, (ast.In, ast.NotIn)) and _text_literal(left):
                    name = _name(right)
                elif isinstance(op, (ast.Eq, ast.NotEq)) and _words(right):
                    name = _name(left)
                else:
                    name = None
                if name in MESSAGE_NAMES:
                    out.append((node.lineno, name))
                left = right
    return out


def test_no_decision_from_our_message_text():
    bad = []
    for f in sorted(PKG.rglob("*.py")):
        rel = f.relative_to(PKG).as_posix()
        if rel in PARSERS:
            continue
        for line, name in text_decisions(ast.parse(f.read_text())):
            if (rel, name) not in KNOWN:
                bad.append(f"{rel}:{line}: decides from the text of {name!r}")
    assert not bad, "decide from a kind, a stage or a flag, not from message text:\n" + "\n".join(bad)


def test_the_check_sees_a_text_decision():
    src = 'if pool.invalid_reason.startswith("duplicate device"):\n    pass\nif "is NotReady" in f.message:\n    pass\n'
    assert [n for _, n in text_decisions(ast.parse(src))] == ["invalid_reason", "message"]
    assert text_decisions(ast.parse('if name.startswith("hugepages-"):\n    pass\n')) == []
    assert text_decisions(ast.parse('if e.get("reason") == "FailedScheduling":\n    pass\n')) == []
