"""Kubernetes' DRA CEL environment ("stored expressions") on cel-cpp (``cel-expr-python``).

See README.md next to this file for what is exact and what differs from cel-go.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from kubectl_dra import quantity as qlib

from . import _analysis
from . import _libs as L
from . import _semver as slib
from ._source import apply_edits, matching, tokenize
from ._unbind import has_bind, inline_binds, map_binds

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
_RENAMES = {"indexOf": "k8sIdxO", "lastIndexOf": "k8sLastIdxO", "charAt": "k8sCAt", "substring": "k8sSubstr"}
LISTS_RANGE = "k8sLstRange"  # same length as "lists.range"
K8S_STRING = "k8sStr"  # same length as "string"
# receiver-style calls of conversion functions (x.string()) are renamed to these same-length names,
# which only have hidden member overloads, so the error can name the receiver type like cel-go
_CONVERSION_STANDINS = {
    "string": K8S_STRING,
    "int": "k8i",
    "uint": "k8ui",
    "double": "k8sDbl",
    "bool": "k8sB",
    "bytes": "k8sBy",
}
HIDDEN_MEMBER = "k8s_hidden_member_"
QEQ = "k8sQuantityEq"
_UNRENAME = {v: k for k, v in _RENAMES.items()}
_UNRENAME[LISTS_RANGE] = "lists.range"
_UNRENAME.update({v: k for k, v in _CONVERSION_STANDINS.items()})


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

    @property
    def device_matches_error(self) -> str | None:
        """The error as cel.CompilationResult.DeviceMatches returns it: 1.37's optional-chaining
        hint is only added by the allocator (selectorsMatch), so per-device results omit it."""
        if self.error is None:
            return None
        return self.error.replace(NO_SUCH_KEY_HINT, "")


# ------------------------------------------------------------------------------ engine (lazy)
_ENGINES: dict[tuple, Any] = {}
_ENGINE_LOCK = threading.Lock()


# full names as in Kubernetes (net.IP / net.CIDR show up in cel-go error messages)
_MESSAGE_NAMES = (
    "kubernetes.Quantity",
    "kubernetes.Semver",
    "kubernetes.URL",
    "net.IP",
    "net.CIDR",
    "kubernetes.ImplDispatch",
)
_POOL: tuple | None = None


def _message_types():
    """One descriptor pool + message classes for the process (library code compares classes)."""
    global _POOL
    if _POOL is None:
        from google.protobuf import (
            descriptor_pb2,
            descriptor_pool,
            message_factory,
        )

        pool = descriptor_pool.DescriptorPool()
        for package in ("kubernetes", "net"):
            fdp = descriptor_pb2.FileDescriptorProto(
                name=f"kubectl_dra_cel_{package}.proto", package=package, syntax="proto3"
            )
            for full in _MESSAGE_NAMES:
                if full.split(".")[0] != package:
                    continue
                m = fdp.message_type.add(name=full.split(".")[1])
                m.field.add(
                    name="v",
                    number=1,
                    type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
                )
            pool.Add(fdp)
        classes = {
            n.split(".")[1]: message_factory.GetMessageClass(pool.FindMessageTypeByName(n)) for n in _MESSAGE_NAMES
        }
        L.Types.Q, L.Types.S = classes["Quantity"], classes["Semver"]
        L.Types.URL, L.Types.IP, L.Types.CIDR = classes["URL"], classes["IP"], classes["CIDR"]
        _POOL = (pool, classes)
    return _POOL


class _Engine:
    """One cel-cpp Env plus the protobuf message classes (built once per declaration set)."""

    def __init__(self, includes: bool, includes_limit: bool = False, new_celgo: bool = False):
        from cel_expr_python import (
            cel,  # lazy on purpose (CLI start-up time)
        )

        self.cel = cel
        pool, classes = _message_types()
        self.Q, self.S = classes["Quantity"], classes["Semver"]
        T = cel.Type
        Q, S, URL, IP, CIDR, X = (T(n) for n in _MESSAGE_NAMES)
        self.types = (Q, S)
        INT, BOOL, STR, DBL, DYN = T.INT, T.BOOL, T.STRING, T.DOUBLE, T.DYN
        # google.protobuf.Any params: the checker accepts any argument and the runtime matches any kind
        # (a DYN parameter on a Python implementation never matches at runtime in cel-expr-python 0.1.3).
        ANY = T("google.protobuf.Any")
        LX = T.List(X)

        def O(oid, ret, params, impl=None, member=False):  # noqa: E743
            if impl is None:
                return cel.Overload(oid, ret, params, is_member=member)
            return cel.Overload(oid, ret, params, is_member=member, impl=_wrap(impl))

        funcs_src: list = []

        class _Decl(tuple):
            pass

        def F(name, *ovs):
            d = _Decl((name, list(ovs)))
            funcs_src.append(d)
            return d

        comparable = [
            ("int", INT),
            ("uint", T.UINT),
            ("double", DBL),
            ("bool", BOOL),
            ("string", STR),
            ("bytes", T.BYTES),
            ("duration", T.DURATION),
            ("timestamp", T.TIMESTAMP),
        ]
        funcs: list = [
            # quantity library
            F("quantity", O("string_to_quantity", Q, [STR], L.f_quantity)),
            F("isQuantity", O("is_quantity_string", BOOL, [STR], L.f_is_quantity)),
            F("sign", O("quantity_sign", INT, [Q], L.f_sign)),
            F(QEQ, O("k8s_quantity_equal", BOOL, [Q, Q], L.f_quantity_equal)),
            F("isInteger", O("quantity_is_integer", BOOL, [Q], L.f_is_integer, True)),
            F("asInteger", O("quantity_as_integer", INT, [Q], L.f_as_integer, True)),
            F("asApproximateFloat", O("quantity_as_float", DBL, [Q], L.f_as_float, True)),
            F(
                "add",
                O("quantity_add", Q, [Q, Q], L.f_add_q, True),
                O("quantity_add_int", Q, [Q, INT], L.f_add_i, True),
            ),
            F(
                "sub",
                O("quantity_sub", Q, [Q, Q], L.f_sub_q, True),
                O("quantity_sub_int", Q, [Q, INT], L.f_sub_i, True),
            ),
            F(
                "compareTo",
                O("quantity_compare_to", INT, [Q, Q], member=True),
                O("semver_compare_to", INT, [S, S], member=True),
                O("impl_compare_to", INT, [X, X], L.f_compare_to, True),
            ),
            F(
                "isGreaterThan",
                O("quantity_is_greater_than", BOOL, [Q, Q], member=True),
                O("semver_is_greater_than", BOOL, [S, S], member=True),
                O("impl_is_greater_than", BOOL, [X, X], L.f_is_greater, True),
            ),
            F(
                "isLessThan",
                O("quantity_is_less_than", BOOL, [Q, Q], member=True),
                O("semver_is_less_than", BOOL, [S, S], member=True),
                O("impl_is_less_than", BOOL, [X, X], L.f_is_less, True),
            ),
            # semver library
            F(
                "semver",
                O("string_to_semver", S, [STR], L.f_semver),
                O("string_bool_to_semver", S, [STR, BOOL], L.f_semver),
            ),
            F(
                "isSemver",
                O("is_semver_string", BOOL, [STR], L.f_is_semver),
                O("is_semver_string_bool", BOOL, [STR, BOOL], L.f_is_semver),
            ),
            F("major", O("semver_major", INT, [S], L.f_major, True)),
            F("minor", O("semver_minor", INT, [S], L.f_minor, True)),
            F("patch", O("semver_patch", INT, [S], L.f_patch, True)),
            # k8s lists library (v0); type parameters are spelled out per comparable type
            F(
                "isSorted",
                *[O(f"list_{n}_is_sorted", BOOL, [T.List(t)], member=True) for n, t in comparable],
                O("impl_is_sorted", BOOL, [LX], L.f_is_sorted, True),
            ),
            F(
                "sum",
                *[
                    O(f"list_{n}_sum", t, [T.List(t)], member=True)
                    for n, t in comparable
                    if n in ("int", "uint", "double", "duration")
                ],
                O("impl_sum", DYN, [LX], L.f_sum, True),
            ),
            F(
                "min",
                *[O(f"list_{n}_min", t, [T.List(t)], member=True) for n, t in comparable],
                O("impl_min", DYN, [LX], L.f_min, True),
            ),
            F(
                "max",
                *[O(f"list_{n}_max", t, [T.List(t)], member=True) for n, t in comparable],
                O("impl_max", DYN, [LX], L.f_max, True),
            ),
            F(
                _RENAMES["indexOf"],
                O("string_index_of", INT, [STR, STR], L.make_index_of_str(new_celgo), True),
                O("string_index_of_int", INT, [STR, STR, INT], L.make_index_of_str(new_celgo), True),
                *[O(f"list_{n}_index_of", INT, [T.List(t), t], member=True) for n, t in comparable],
                O("impl_list_index_of", INT, [LX, ANY], L.f_index_of_list, True),
            ),
            F(_RENAMES["charAt"], O("string_char_at_int", STR, [STR, INT], L.f_char_at, True)),
            F(
                _RENAMES["substring"],
                O("string_substring_int", STR, [STR, INT], L.f_substring, True),
                O("string_substring_int_int", STR, [STR, INT, INT], L.f_substring, True),
            ),
            F(LISTS_RANGE, O("lists_range", T.List(INT), [INT], L.make_lists_range(new_celgo))),
            F(
                _RENAMES["lastIndexOf"],
                O("string_last_index_of", INT, [STR, STR], L.make_last_index_of_str(new_celgo), True),
                O("string_last_index_of_int", INT, [STR, STR, INT], L.make_last_index_of_str(new_celgo), True),
                *[O(f"list_{n}_last_index_of", INT, [T.List(t), t], member=True) for n, t in comparable],
                O("impl_list_last_index_of", INT, [LX, ANY], L.f_last_index_of_list, True),
            ),
            # k8s regex library
            F("find", O("string_find_string", STR, [STR, STR], L.f_find, True)),
            F(
                "findAll",
                O("string_find_all_string", T.List(STR), [STR, STR], L.f_find_all, True),
                O("string_find_all_string_int", T.List(STR), [STR, STR, INT], L.f_find_all, True),
            ),
            # k8s URL library
            F("url", O("string_to_url", URL, [STR], L.f_url)),
            F("isURL", O("is_url_string", BOOL, [STR], L.f_is_url)),
            F("getScheme", O("url_get_scheme", STR, [URL], L.f_get_scheme, True)),
            F("getHost", O("url_get_host", STR, [URL], L.f_get_host, True)),
            F("getHostname", O("url_get_hostname", STR, [URL], L.f_get_hostname, True)),
            F("getPort", O("url_get_port", STR, [URL], L.f_get_port, True)),
            F("getEscapedPath", O("url_get_escaped_path", STR, [URL], L.f_get_escaped_path, True)),
            F("getQuery", O("url_get_query", T.Map(STR, T.List(STR)), [URL], L.f_get_query, True)),
            # k8s IP / CIDR libraries
            F("ip", O("string_to_ip", IP, [STR], L.f_ip), O("cidr_ip", IP, [CIDR], L.f_cidr_ip, True)),
            F("isIP", O("is_ip", BOOL, [STR], L.f_is_ip)),
            F(
                K8S_STRING,
                O("ip_to_string", STR, [IP], member=False),
                O("cidr_to_string", STR, [CIDR], member=False),
                O("impl_to_string", STR, [X], L.f_string_of),
            ),
            F("ip.isCanonical", O("ip_is_canonical", BOOL, [STR], L.f_ip_is_canonical)),
            F("family", O("ip_family", INT, [IP], L.f_family, True)),
            F("isUnspecified", O("ip_is_unspecified", BOOL, [IP], L.f_ip_is_unspecified, True)),
            F("isLoopback", O("ip_is_loopback", BOOL, [IP], L.f_ip_is_loopback, True)),
            F(
                "isLinkLocalMulticast",
                O("ip_is_link_local_multicast", BOOL, [IP], L.f_ip_is_link_local_multicast, True),
            ),
            F("isLinkLocalUnicast", O("ip_is_link_local_unicast", BOOL, [IP], L.f_ip_is_link_local_unicast, True)),
            F("isGlobalUnicast", O("ip_is_global_unicast", BOOL, [IP], L.f_ip_is_global_unicast, True)),
            F("cidr", O("string_to_cidr", CIDR, [STR], L.f_cidr)),
            F("isCIDR", O("is_cidr", BOOL, [STR], L.f_is_cidr)),
            F(
                "containsIP",
                O("cidr_contains_ip_string", BOOL, [CIDR, STR], member=True),
                O("cidr_contains_ip_ip", BOOL, [CIDR, IP], member=True),
                O("impl_contains_ip", BOOL, [X, ANY], L.f_contains_ip, True),
            ),
            F(
                "containsCIDR",
                O("cidr_contains_cidr_string", BOOL, [CIDR, STR], member=True),
                O("cidr_contains_cidr", BOOL, [CIDR, CIDR], member=True),
                O("impl_contains_cidr", BOOL, [X, ANY], L.f_contains_cidr, True),
            ),
            F("masked", O("cidr_masked", CIDR, [CIDR], L.f_cidr_masked, True)),
            F("prefixLength", O("cidr_prefix_length", INT, [CIDR], L.f_prefix_length, True)),
        ]
        if includes:
            F(
                "includes",
                O(
                    "dra_includes_dyn_dyn",
                    BOOL,
                    [ANY, ANY],
                    L.f_includes_limited if includes_limit else L.f_includes,
                    True,
                ),
            )
        # cel-go rejects receiver-style calls of global-only functions ("found no matching overload for
        # 'sign' applied to 'kubernetes.Quantity.()'"); cel-cpp would say "undeclared reference".  Hidden
        # member overloads let the checker resolve such calls so that the adapter can report them with
        # the receiver/argument types in cel-go's wording (see _static_checks).
        hidden = {
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
        for conv, stand_in in _CONVERSION_STANDINS.items():
            hidden[stand_in] = (1, 2)
            if stand_in != K8S_STRING:
                F(stand_in)
        merged = []
        for decl_name, decl_ovs in [(d[0], d[1]) for d in funcs_src]:
            ovs = list(decl_ovs)
            for arity in hidden.get(decl_name, ()):
                ovs.append(O(f"{HIDDEN_MEMBER}{decl_name}_{arity}", DYN, [ANY] * arity, member=True))
            merged.append(cel.FunctionDecl(decl_name, ovs))
        funcs = merged
        config = cel.NewEnvConfigFromYaml(
            "name: kubernetes-dra\n"
            "extensions:\n"
            "  - name: strings\n    version: 2\n"
            "  - name: lists\n    version: 2\n"
            "  - name: sets\n"
            "  - name: bindings\n"
            "  - name: optional\n    version: 2\n"
            "  - name: two-var-comprehensions\n"
        )
        self.env = cel.NewEnv(
            descriptor_pool=pool,
            config=config,
            variables={
                "device.driver": STR,
                "device.attributes": T.Map(STR, T.Map(STR, DYN)),
                "device.capacity": T.Map(STR, T.Map(STR, Q)),
                "device.allowMultipleAllocations": BOOL,
            },
            functions=funcs,
        )
        self.BOOL = BOOL
        self.ERROR = T.ERROR


def _wrap(fn):
    """Python exceptions from library code become CEL error values carrying only our message."""

    def call(*args):
        try:
            return fn(*args)
        except L.CelFunctionError:
            raise
        except (ValueError, TypeError, OverflowError, ZeroDivisionError) as e:
            raise L.CelFunctionError(str(e)) from None

    return call


def _engine(includes: bool, includes_limit: bool = False, new_celgo: bool = False) -> _Engine:
    key = (includes, includes_limit, new_celgo)
    eng = _ENGINES.get(key)
    if eng is None:
        with _ENGINE_LOCK:
            eng = _ENGINES.get(key)
            if eng is None:
                eng = _Engine(includes, includes_limit, new_celgo)
                _ENGINES[key] = eng
    return eng


# ------------------------------------------------------------------------------ messages
_STATUS = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r"\s*\[[A-Z_]+\]\s*$")
_KEY_NOT_FOUND = re.compile(r'^Key not found in map : "?(.*?)"?$', re.S)
_CONVERT = re.compile(r"^cannot convert (string|int|uint|double) to (int|uint|double)$")
_INDEX_ERR = re.compile(r"^Index error: index=(-?\d+) size=(\d+)$")


def _clean_status(text: str) -> str:
    text = _STATUS_SUFFIX.sub("", text)
    return _STATUS.sub("", text, count=1)


def _runtime_message(raw: str, hint: bool) -> str:
    msg = _clean_status(raw)
    m = _KEY_NOT_FOUND.match(msg)
    if m:
        out = f"no such key: {m.group(1)}"
        return out + NO_SUCH_KEY_HINT if hint else out
    if msg.startswith("No matching overloads found") or msg.startswith("no matching overload"):
        return _no_such_overload(msg)
    m = _INDEX_ERR.match(msg)
    if m:
        return f"index out of bounds: {m.group(1)}"
    if msg.startswith("invalid regular expression: "):
        return L._go_regex_error(msg, "")
    if msg.startswith("error parsing regexp: "):
        return "Illegal regex: " + msg
    m = _CONVERT.match(msg)
    if m:
        return f"type conversion error from '{m.group(1)}' to '{m.group(2)}'"
    if msg.startswith("sort(): unsupported type") or msg == "sort(): list elements must be comparable":
        return "list elements must be comparable"
    if msg.startswith("sort(): list elements must have the same type"):
        return "list elements must have the same type"
    if msg == "double out of int64 range":
        return "integer overflow"
    if msg == "double out of uint64 range":
        return "unsigned integer overflow"
    if msg in ("divide by zero", "division by zero"):
        return "division by zero"
    if msg in ("modulus by zero", "modulo by zero"):
        return "modulus by zero"
    return msg


# cel-go dispatches operators through type traits: when the (left) operand lacks the trait and is not
# a receiver type (string, duration, timestamp) the error names the function ("no such overload: _>_");
# otherwise the type's own method rejects the call with a bare "no such overload".
_NUM = {"int64", "uint64", "double"}
_TRAITS = {
    "_<_": _NUM | {"string", "bytes", "bool", "google.protobuf.Duration", "google.protobuf.Timestamp"},
    "_+_": _NUM | {"string", "bytes", "list", "google.protobuf.Duration", "google.protobuf.Timestamp"},
    "_-_": _NUM | {"google.protobuf.Duration", "google.protobuf.Timestamp"},
    "_*_": _NUM,
    "_/_": _NUM,
    "_%_": {"int64", "uint64"},
    "size": {"string", "bytes", "list", "map"},
    "-_": {"int64", "double", "google.protobuf.Duration"},
}
# types implementing cel-go's traits.ReceiverType answer a missing operator with a bare error
_RECEIVERS = {"string", "google.protobuf.Duration", "google.protobuf.Timestamp"}
for _op in ("_<=_", "_>_", "_>=_"):
    _TRAITS[_op] = _TRAITS["_<_"]
_OVERLOAD_MSG = re.compile(r"^No matching overloads found : (?:\(([^)]*)\)\.)?([^(\s]+)(?:\(([^)]*)\))?")


def _no_such_overload(msg: str) -> str:
    m = _OVERLOAD_MSG.match(msg)
    if not m:
        return "no such overload"
    receiver, fn, args = m.group(1), m.group(2), m.group(3)
    first = receiver if receiver is not None else (args.split(",")[0].strip() if args else None)
    traits = _TRAITS.get(fn)
    if traits is None:
        return "no such overload"
    if first is None or first in traits or first in _RECEIVERS:
        return "no such overload"
    return f"no such overload: {fn}"


_EMPTY_SYNTAX_ERROR = (
    "ERROR: <input>:1:0: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', "
    "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"
)
_ISSUE = re.compile(r"^ERROR: <input>:(-?\d+):(-?\d+): (.*)$")
_UNDECLARED = re.compile(r"^undeclared reference to '([A-Za-z_][\w.]*)' \(in container ''\)$")
_NO_OVERLOAD = re.compile(r"^found no matching overload for '([^']+)' applied to '\((.*)\)'$")


def _split_types(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _offset(src: str, line: int, col: int) -> int:
    starts = [0] + [i + 1 for i, c in enumerate(src) if c == "\n"]
    if line < 1 or line > len(starts):
        return -1
    return starts[line - 1] + col - 1


def _apply_inserts(src: str, inserts: list[tuple[int, str]]) -> str:
    out, last = [], 0
    for pos, text in sorted(inserts, key=lambda x: x[0]):
        out.append(src[last:pos])
        out.append(text)
        last = pos
    out.append(src[last:])
    return "".join(out)


def _to_original(cur: int, inserts: list[tuple[int, str]]) -> int:
    """Offset in the rewritten source -> offset in the original (inside an insertion: its position)."""
    shift = 0
    for pos, text in sorted(inserts, key=lambda x: x[0]):
        start = pos + shift
        if cur >= start + len(text):
            shift += len(text)
        elif cur >= start:
            return pos
        else:
            break
    return cur - shift


def _remap_issues(text: str, cur_src: str, orig_src: str, inserts: list[tuple[int, str]]) -> str:
    from ._checks import format_issue

    out = []
    for block in re.split(r"\n(?=ERROR: )", text):
        m = _ISSUE.match(block.split("\n", 1)[0])
        if not m:
            out.append((-1, block))
            continue
        o = _to_original(_offset(cur_src, int(m.group(1)), int(m.group(2))), inserts)
        out.append((o, format_issue(orig_src, o, m.group(3))))
    out.sort(key=lambda x: x[0])
    return "\n".join(b for _, b in out)


def _parsed_attribute_value(n) -> bool:
    """On the *parsed* AST: device.attributes[d].x / [d][x] / [d].?x.orValue(..) (cel-go AnyType)."""

    def is_domain(d) -> bool:
        return (
            d is not None
            and d.kind == "call"
            and d.value in ("_[_]", "_[?_]")
            and d.args
            and d.args[0].kind == "select"
            and d.args[0].value == "attributes"
            and d.args[0].operand is not None
            and d.args[0].operand.kind == "ident"
            and d.args[0].operand.value == "device"
        )

    if n.kind == "select" and not n.test_only:
        return is_domain(n.operand)
    if n.kind == "call" and n.value == "_[_]" and n.args:
        return is_domain(n.args[0])
    if (
        n.kind == "call"
        and n.value == "orValue"
        and n.operand is not None
        and n.operand.kind == "call"
        and n.operand.value == "_?._"
        and n.operand.args
    ):
        return is_domain(n.operand.args[0])
    if n.kind == "call" and n.value == "_?_:_" and len(n.args) == 3:
        return _parsed_attribute_value(n.args[1]) or _parsed_attribute_value(n.args[2])
    return False


def _compile_message(
    raw: str,
    src: str | None = None,
    engine=None,
    any_attributes: bool = False,
    extra: list[tuple[int, str]] | None = None,
) -> str:
    """cel-cpp issues in cel-go's wording (receiver-style overload lists, `device` field errors,
    identifier positions, logical operators, null/any type names, issues sorted by position),
    with renamed stand-ins mapped back."""
    from ._checks import format_issue

    msg = _clean_status(raw).rstrip()
    for stand_in, name in _UNRENAME.items():
        msg = msg.replace(stand_in, name)
    if src is not None:
        for stand_in, name in _UNRENAME.items():
            src = src.replace(stand_in, name)
    blocks: list[list[str]] = []
    for line in msg.split("\n"):
        if line.startswith("ERROR: ") or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    calls = None
    if (
        src is not None
        and engine is not None
        and any(
            _NO_OVERLOAD.match((_ISSUE.match(b[0]) or [None, "", "", ""])[3] or "")
            for b in blocks
            if _ISSUE.match(b[0])
        )
    ):
        try:
            from ._ast import decode_serialized

            parsed = decode_serialized(engine.compile(src, disable_check=True).serialize())
            calls = {}
            stack = [parsed.expr]
            while stack:
                n = stack.pop()
                stack.extend(n.children())
                if n.kind == "call":
                    calls.setdefault(parsed.positions.get(n.id), n)
            positions = parsed.positions
        except Exception:  # best effort wording only
            calls = None
    out: list[tuple[int, str]] = []
    for block in blocks:
        m = _ISSUE.match(block[0])
        if not m or src is None:
            out.append((-1, "\n".join(block)))
            continue
        off = _offset(src, int(m.group(1)), int(m.group(2)))
        text = m.group(3)
        u = _UNDECLARED.match(text)
        o = _NO_OVERLOAD.match(text)
        if u and "." in u.group(1):
            # `device` is declared as qualified variables (device.driver, ...), so cel-cpp reports the
            # dotted name; cel-go reports the field of the object-typed variable / the first identifier.
            name = u.group(1)
            if name.startswith("device."):
                out.append((off, format_issue(src, off, f"undefined field '{name.split('.', 2)[1]}'")))
            else:
                start = off
                while start > 0 and (src[start - 1].isalnum() or src[start - 1] in "_."):
                    start -= 1
                out.append(
                    (
                        start,
                        format_issue(
                            src, start, f"undeclared reference to '{name.split('.', 1)[0]}' (in container '')"
                        ),
                    )
                )
            continue
        if o:
            fn, types = o.group(1), _split_types(o.group(2))
            node = calls.get(off) if calls is not None else None
            operands = ([node.operand] if node is not None and node.operand is not None else []) + (
                list(node.args) if node is not None else []
            )
            if fn in ("_&&_", "_||_") and node is not None and len(operands) == len(types):
                # cel-go checks logical operators operand by operand
                for t, operand in zip(types, operands):
                    if t not in ("bool", "dyn", "*error*"):
                        p = positions.get(operand.id, off)
                        out.append(
                            (
                                p,
                                format_issue(
                                    src, p, f"expected type 'bool' but found '{t.replace('null_type', 'null')}'"
                                ),
                            )
                        )
                continue
            if node is not None and len(operands) == len(types):
                types = [
                    ("any" if (t == "dyn" and any_attributes and _parsed_attribute_value(op)) else t)
                    for t, op in zip(types, operands)
                ]
            types = [
                re.sub(r"\b[A-Z]%\d+\b", "dyn", t.replace("null_type", "null").replace("*error*", "!error!"))
                for t in types
            ]
            member = False
            if 0 <= off < len(src) and src[off] == "(":
                k = off
                while k > 0 and (src[k - 1].isalnum() or src[k - 1] == "_"):
                    k -= 1
                j = k - 1
                while j >= 0 and src[j].isspace():
                    j -= 1
                member = j >= 0 and src[j] == "."
            if member and types:
                text = f"found no matching overload for '{fn}' applied to '{types[0]}.({', '.join(types[1:])})'"
            else:
                text = f"found no matching overload for '{fn}' applied to '({', '.join(types)})'"
            out.append((off, format_issue(src, off, text)))
            continue
        out.append((off, "\n".join(block)))
    seen = {off for off, _ in out}
    out += [(off, text) for off, text in extra or () if off not in seen]
    out.sort(key=lambda x: x[0])
    return "\n".join(text for _, text in out)


_CELGO_TYPE = {
    "BOOL": "bool",
    "INT": "int",
    "UINT": "uint",
    "DOUBLE": "double",
    "STRING": "string",
    "BYTES": "bytes",
    "NULL": "null_type",
    "DYN": "dyn",
    "TIMESTAMP": "google.protobuf.Timestamp",
    "DURATION": "google.protobuf.Duration",
    "TYPE": "type",
    "ERROR": "*error*",
}


def _celgo_type_name(name: str) -> str:
    """cel-expr-python type names (LIST<INT>, MAP<STRING, DYN>) in cel-go's spelling (list(int))."""
    out, word = [], ""
    for ch in name:
        if ch.isalnum() or ch in "._":
            word += ch
            continue
        if word:
            out.append(_word(word))
            word = ""
        out.append({"<": "(", ">": ")"}.get(ch, ch))
    if word:
        out.append(_word(word))
    return "".join(out)


def _word(w: str) -> str:
    if w in ("LIST", "MAP"):
        return w.lower()
    return _CELGO_TYPE.get(w, w)


def _bool_conversion_error(tn: str) -> str:
    """cel-go's ConvertToNative(bool) error per value type (checked against upstream)."""
    if tn == "string":
        return "unsupported native conversion from string to 'bool'"
    if tn in ("list", "map"):
        return f"type conversion error from {tn} to 'bool'"
    if tn.startswith("kubernetes."):
        return f"type conversion error from '{tn.split('.', 1)[1]}' to 'bool'"
    if tn in ("double", "bytes"):
        return f"type conversion error from {tn.capitalize()} to 'bool'"
    if tn == "null_type":
        return "type conversion error from 'null_type' to 'bool'"
    return f"unsupported type conversion from '{tn}' to bool"


def _result_type_name(value: Any) -> str:
    t = value.type().name()
    base = t.split("<", 1)[0]
    return {"LIST": "list", "MAP": "map"}.get(base, _CELGO_TYPE.get(base, base))


# ------------------------------------------------------------------------------ device conversion
class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()
_SCALARS = ("int", "bool", "string", "version")
_LISTS = ("ints", "bools", "strings", "versions")
_VERSION_OK: dict[str, str | None] = {}


def _version_error(text: Any) -> str | None:
    if not isinstance(text, str):
        return "parse semantic version: Version string empty"
    err = _VERSION_OK.get(text, "")
    if err == "":
        try:
            slib.parse(text)
            err = None
        except slib.SemverError as e:
            err = f"parse semantic version: {e}"
        if len(_VERSION_OK) < 100_000:
            _VERSION_OK[text] = err
    return err


_SEMVER_CANON: dict[str, str] = {}
_QUANTITY_ENC: dict[str, str] = {}


def _semver_canonical(text: str) -> str:
    out = _SEMVER_CANON.get(text)
    if out is None:
        out = slib.canonical(slib.parse(text))
        if len(_SEMVER_CANON) < 100_000:
            _SEMVER_CANON[text] = out
    return out


def _quantity_encoded(text: str) -> str:
    out = _QUANTITY_ENC.get(text)
    if out is None:
        out = qlib.encode(qlib.parse(text))
        if len(_QUANTITY_ENC) < 100_000:
            _QUANTITY_ENC[text] = out
    return out


def _split(name: str, driver: str) -> tuple[str, str]:
    i = name.find("/")
    if i < 0:
        return driver, name
    return name[:i], name[i + 1 :]


# ------------------------------------------------------------------------------ environment
class CelEnvironment:
    """The DRA selector environment of one Kubernetes minor version.

    version: (1, 34) .. (1, 37).  list_attributes: the DRAListTypeAttributes gate (only matters for
    1.36; 1.37 always converts list attributes, 1.34/1.35 never do).
    """

    def __init__(self, version: tuple[int, int] | str = (1, 36), list_attributes: bool = False):
        if isinstance(version, str):
            version = tuple(int(p) for p in version.lstrip("v").split(".")[:2])
        version = tuple(int(p) for p in version)[:2]
        if version < (1, 34) or version > (1, 37):
            raise ValueError(f"unsupported Kubernetes version {version}; expected 1.34..1.37")
        self.version = version
        self.list_attributes = version >= (1, 37) or (version == (1, 36) and bool(list_attributes))
        self.includes = version >= (1, 36)
        self.no_such_key_hint = version >= (1, 37)
        self._selectors: dict[str, CompiledSelector] = {}
        self._lock = threading.Lock()
        self._engine: _Engine | None = None
        self._act_cache: dict[int, tuple[Any, Any]] = {}
        self._conv_cache: dict[int, tuple[Any, str | None]] = {}
        self.activations_built = 0

    @property
    def engine(self) -> _Engine:
        if self._engine is None:
            # 1.37 vendors a newer cel-go (string/list extension edge cases differ)
            self._engine = _engine(self.includes, self.version == (1, 36), self.version >= (1, 37))
        return self._engine

    def compile(self, expression: str) -> "CompiledSelector":
        sel = self._selectors.get(expression)
        if sel is None:
            sel = CompiledSelector(self, expression)  # raises CelCompileError
            with self._lock:
                self._selectors.setdefault(expression, sel)
                sel = self._selectors[expression]
        return sel

    # -- device -> engine activation (cached per device object; at most once per device)
    def _conversion_error(self, device: dict) -> str | None:
        """Whether converting the device's attributes fails (then every selector fails on it).  The
        verdict is cached per attributes object; the entry holds that object, so a recycled id()
        can never match a different one."""
        attrs = device.get("attributes")
        if not attrs:
            return None
        hit = self._conv_cache.get(id(attrs))
        if hit is not None and hit[0] is attrs:
            return hit[1]
        verdict = self._attributes_error(attrs)
        cache = self._conv_cache
        if len(cache) >= 65536:
            cache.pop(next(iter(cache)), None)
        cache[id(attrs)] = (attrs, verdict)
        return verdict

    def _attributes_error(self, attrs: dict) -> str | None:
        lists = self.list_attributes
        for name, attr in attrs.items():
            if not isinstance(attr, dict):
                return f"attribute {name}: unsupported attribute value"
            if lists:
                for k in _LISTS:
                    if attr.get(k) is not None:
                        if k == "versions":
                            for v in attr[k]:
                                err = _version_error(v)
                                if err:
                                    return f"attribute {name}: {err}"
                        break
                if any(attr.get(k) is not None for k in _LISTS):
                    continue
            for k in _SCALARS:
                if attr.get(k) is not None:
                    if k == "version":
                        err = _version_error(attr[k])
                        if err:
                            return f"attribute {name}: {err}"
                    break
            else:
                return f"attribute {name}: unsupported attribute value"
        return None

    def attribute_value(self, attr: dict) -> Any:
        eng = self.engine
        if self.list_attributes:
            for k in _LISTS:
                v = attr.get(k)
                if v is not None:
                    if k == "versions":
                        return [eng.S(v=_semver_canonical(x)) for x in v]
                    if k == "ints":
                        return [int(x) for x in v]
                    if k == "bools":
                        return [bool(x) for x in v]
                    return [str(x) for x in v]
        for k in _SCALARS:
            v = attr.get(k)
            if v is not None:
                if k == "version":
                    return eng.S(v=_semver_canonical(v))
                if k == "int":
                    return int(v)
                if k == "bool":
                    return bool(v)
                return str(v)
        raise ValueError("unsupported attribute value")

    def _activation(self, device: dict) -> Any:
        key = id(device)
        hit = self._act_cache.get(key)
        if hit is not None and hit[0] is device:
            return hit[1]
        eng = self.engine
        driver = device.get("driver") or ""
        attributes: dict[str, dict[str, Any]] = {}
        for name, attr in (device.get("attributes") or {}).items():
            domain, ident = _split(name, driver)
            attributes.setdefault(domain, {})[ident] = self.attribute_value(attr)
        capacity: dict[str, dict[str, Any]] = {}
        for name, cap in (device.get("capacity") or {}).items():
            domain, ident = _split(name, driver)
            raw = cap.get("value") if isinstance(cap, dict) else cap
            capacity.setdefault(domain, {})[ident] = eng.Q(v=_quantity_encoded(str(raw)))
        act = eng.env.Activation(
            {
                "device.driver": driver,
                "device.attributes": attributes,
                "device.capacity": capacity,
                "device.allowMultipleAllocations": bool(device.get("allowMultipleAllocations") or False),
            }
        )
        self.activations_built += 1
        if len(self._act_cache) >= 4096:
            self._act_cache.pop(next(iter(self._act_cache)))
        self._act_cache[key] = (device, act)
        return act


def _raw_attr(attrs: dict, driver: str, domain: str, ident: str) -> Any:
    v = attrs.get(f"{domain}/{ident}")
    if v is None and domain == driver:
        v = attrs.get(ident)
    return v


def _attr_key(attr: Any) -> Any:
    """Hashable, cheap representation of one raw attribute value."""
    if attr is None:
        return MISSING
    if isinstance(attr, dict):
        for k, v in attr.items():
            if v is not None:
                return (k, tuple(v) if isinstance(v, list) else v)
    return repr(attr)


def _plain(attr: Any) -> Any:
    if attr is None:
        return None
    if isinstance(attr, dict):
        for v in attr.values():
            if v is not None:
                return v
    return attr


def _cap_raw(cap: Any) -> Any:
    if cap is None:
        return None
    if isinstance(cap, dict):
        v = cap.get("value")
        return None if v is None else str(v)
    return str(cap)


class CompiledSelector:
    """One compiled selector; ``evaluate(device)`` memoises on the values the expression reads."""

    def __init__(self, env: CelEnvironment, expression: str):
        self.env = env
        self.expression = expression
        self.evaluations = 0  # real engine evaluations (for tests / measurements)
        self._memo: dict[Any, EvalResult] = {}
        if len(expression.encode("utf-8")) > MAX_EXPRESSION_BYTES:
            raise CelCompileError(f"Too long: may not be more than {MAX_EXPRESSION_BYTES} bytes")
        if expression == "":
            # cel-go's parser reports the end of an empty input at column 0, with no source line.
            raise CelCompileError("compilation failed: " + _EMPTY_SYNTAX_ERROR)
        eng = env.engine
        toks = tokenize(expression)
        edits = []
        for k, t in enumerate(toks):
            if (
                t.kind == "ident"
                and t.text in _RENAMES
                and k > 0
                and toks[k - 1].text in (".", ".?")
                and k + 1 < len(toks)
                and toks[k + 1].text == "("
            ):
                edits.append((t.start, t.end, _RENAMES[t.text]))
            # lists.range(<non-negative literal>) stays native; anything else may be negative, which
            # cel-cpp rejects ("vector::reserve") while cel-go returns []
            if (
                t.text == "lists"
                and k + 3 < len(toks)
                and toks[k + 1].text == "."
                and toks[k + 2].text == "range"
                and toks[k + 3].text == "("
                and toks[k + 2].end - t.start == len("lists.range")
                and (k == 0 or toks[k - 1].text != ".")
            ):
                literal = (
                    k + 5 < len(toks)
                    and toks[k + 4].kind == "number"
                    and toks[k + 5].text == ")"
                    and toks[k + 4].text.isdigit()
                )
                if not literal:
                    edits.append((t.start, toks[k + 2].end, LISTS_RANGE))
        checked_src = apply_edits(expression, edits) if edits else expression
        try:
            checked = eng.env.compile(checked_src)
        except RuntimeError as e:
            checked, checked_src = self._repair(eng, checked_src, toks, str(e))
            edits = edits or [None]  # force re-tokenising the repaired source
        rt = checked.return_type()
        from ._ast import decode_serialized

        try:
            ast = decode_serialized(checked.serialize())
        except Exception as e:  # pragma: no cover - defensive
            raise CelCompileError(f"compilation failed: cannot analyse expression: {e}") from None
        self._static_checks(ast, checked_src)
        if not rt == eng.BOOL:
            from ._checks import attribute_derived

            # attribute values are cel-go's AnyType (accepted); other dyn results are accepted only
            # when list attributes make the attribute type DynType (1.36 with the gate, 1.37)
            ok = rt.name() == "DYN" and (env.list_attributes or attribute_derived(ast.expr))
            if not ok:
                raise CelCompileError(f"must evaluate to bool or the unknown type, not {_celgo_type_name(rt.name())}")
        plan = _analysis.plan_reads(ast.expr)
        from ._checks import range_attributes

        self._range_attrs = range_attributes(ast)
        self.plan = plan
        pessimistic = _analysis.CostEstimator(env.list_attributes)
        self.estimated_cost = pessimistic.estimate(ast.expr)
        self.optimistic_cost = _analysis.CostEstimator(env.list_attributes, optimistic=True).estimate(ast.expr)
        self.max_size = pessimistic.max_size
        # Refuse up front what Kubernetes would cancel anyway and what could exhaust memory here;
        # everything else runs natively, where cel-cpp's iteration budget bounds the time.
        self.over_budget = self.optimistic_cost > COST_LIMIT or self.max_size > MAX_VALUE_SIZE
        # unknown domain -> empty map: device.attributes["d"] -> device.attributes[?"d"].orValue({})
        # and `<Semver attribute> == <non-Semver>` must fail with "no such overload" as in cel-go.
        toks2 = tokenize(checked_src) if edits else toks
        match = matching(toks2)
        by_start = {t.start: k for k, t in enumerate(toks2)}
        attr_edits = []
        for nid in plan.rewrite_index_ids:
            k = by_start.get(ast.positions.get(nid))
            if k is None or toks2[k].text != "[" or k not in match:
                continue
            close = toks2[match[k]]
            attr_edits.append((toks2[k].start, toks2[k].end, "[?"))
            attr_edits.append((close.end, close.end, ".orValue({})"))
        attr_edits += self._outer_map_edits(ast, toks2, match, by_start)
        eq_edits = self._semver_equality_edits(ast, toks2, match, by_start)
        self.run_source = checked_src
        self._program = checked
        self._lazy_program = None
        binds = has_bind(checked_src)
        for candidate in (eq_edits + attr_edits, attr_edits, []):
            if not candidate and not binds:
                continue
            run_src = apply_edits(checked_src, candidate) if candidate else checked_src
            # cel-cpp's cel.bind is unreliable after an early-exiting comprehension (_unbind.py)
            mapped = map_binds(run_src) if binds else run_src
            try:
                self._program = eng.env.compile(mapped)
                self.run_source = mapped
            except RuntimeError:
                continue
            if binds:
                lazy = inline_binds(run_src)
                if lazy is not None:
                    try:
                        self._lazy_program = eng.env.compile(lazy)
                        self.lazy_source = lazy
                    except RuntimeError:
                        pass
            break
        self._key_fn = self._make_key_fn()

    def _repair(self, eng: _Engine, src: str, toks, err: str):
        if "No overload found in reference resolve step" in err:
            fn = err.rsplit(" for ", 1)[-1].split(" ")[0]
            what = "transformMap()/transformMapEntry()" if "mapInsert" in fn else fn
            raise CelCompileError(
                f"kubectl-dra: {what} is not supported by the local CEL engine (cel-cpp); "
                "Kubernetes accepts this expression",
                exact=False,
            )
        if "'unwrap'" in err and "optional" in src:
            raise CelCompileError(
                "kubectl-dra: optional.unwrap() is not supported by the local CEL engine (cel-cpp); "
                "Kubernetes accepts this expression",
                exact=False,
            )
        if re.search(r"undeclared reference to '(format|format\.[A-Za-z0-9]+)'", err):
            raise CelCompileError(
                "kubectl-dra: the Kubernetes format library (format.named(), "
                "format.dns1123Label(), ...) is not available in the local CEL engine; "
                "Kubernetes accepts this expression",
                exact=False,
            )
        u = re.search(r"<input>:(\d+):(\d+): undeclared reference to '(string|int|uint|double|bool|bytes)'", err)
        if u:
            off = _offset(src, int(u.group(1)), int(u.group(2)))
            name = u.group(3)
            k = off - len(name)
            if k > 0 and src[k:off] == name and src[off : off + 1] == "(" and src[:k].rstrip().endswith("."):
                fixed = src[:k] + _CONVERSION_STANDINS[name] + src[off:]
                try:
                    return eng.env.compile(fixed), fixed
                except RuntimeError as e:
                    return self._repair(eng, fixed, tokenize(fixed), str(e))
        m = re.search(
            r"<input>:(\d+):(\d+): found no matching overload for 'string' applied to '\((net\.IP|net\.CIDR)\)'", err
        )
        if m:
            # string(<IP|CIDR>) exists in Kubernetes; cel-cpp's string() cannot be extended, so the call
            # is renamed (same length) to a library function
            off = _offset(src, int(m.group(1)), int(m.group(2)))
            k = off
            while k > 0 and (src[k - 1].isalnum() or src[k - 1] == "_"):
                k -= 1
            if src[k:off] == "string":
                fixed = src[:k] + K8S_STRING + src[off:]
                try:
                    return eng.env.compile(fixed), fixed
                except RuntimeError as e:
                    return self._repair(eng, fixed, tokenize(fixed), str(e))
        return self._repair_numeric(eng, src, toks, err)

    def _repair_numeric(self, eng: _Engine, src: str, toks, err: str):
        """cel-cpp has no CrossTypeNumericComparisons checker option: retry with dyn() on the left
        operand of int/uint/double ordering comparisons that cel-go accepts.  If other errors remain,
        they are reported at their positions in the original source."""
        pattern = re.compile(
            r"<input>:(\d+):(\d+): found no matching overload for '_(?:<|<=|>|>=)_' "
            r"applied to '\((int|uint|double), (int|uint|double)\)'"
        )
        inserts: list[tuple[int, str]] = []  # (offset in the original source, inserted text)
        current, last_err = src, err
        for _ in range(16):
            hits = pattern.findall(last_err)
            if not hits:
                break
            line_starts = [0] + [i + 1 for i, c in enumerate(current) if c == "\n"]
            ctoks = tokenize(current)
            match = matching(ctoks)
            new = []
            for line, col, _a, _b in hits:
                op = line_starts[int(line) - 1] + int(col) - 1
                start = self._left_operand_start(ctoks, match, op)
                if start is None:
                    new = []
                    break
                new.append((_to_original(start, inserts), "dyn("))
                new.append((_to_original(op, inserts), ")"))
            if not new:
                break
            inserts = sorted(inserts + new, key=lambda x: x[0])
            current = _apply_inserts(src, inserts)
            try:
                return eng.env.compile(current), current
            except RuntimeError as e:
                last_err = str(e)
        if inserts and last_err != err:
            text = _compile_message(last_err, current, eng.env, any_attributes=not self.env.list_attributes)
            raise CelCompileError("compilation failed: " + _remap_issues(text, current, src, inserts)) from None
        raise CelCompileError(
            "compilation failed: "
            + _compile_message(
                err,
                src,
                eng.env,
                any_attributes=not self.env.list_attributes,
                extra=self._hidden_member_issues(eng, src),
            )
        ) from None

    # Global-only functions that cel-go refuses receiver-style; the hidden member overloads (see
    # CelEnvironment) let _static_checks word that, but only on an expression cel-cpp type-checked.
    _GLOBAL_ONLY = frozenset(
        {"sign", "quantity", "isQuantity", "semver", "isSemver", "url", "isURL", "isIP", "cidr", "isCIDR"}
    )

    def _hidden_member_issues(self, eng: _Engine, src: str) -> list[tuple[int, str]]:
        """cel-go reports every checker error: next to cel-cpp's, add the receiver-style calls of
        global-only functions (`x.sign()`, `x.string()`), typing the receiver by compiling it on its own.
        src may hold same-length stand-in names (x.k8sStr()); issues are worded with the real ones."""
        from . import _checks
        from ._ast import decode_serialized, format_type

        try:
            eng.env.compile(src, disable_check=True)
        except RuntimeError:
            return []  # cel-go type-checks only what parsed: no checker errors next to a syntax error
        display = src
        for stand_in, name in _UNRENAME.items():
            display = display.replace(stand_in, name)
        out: list[tuple[int, str]] = []
        toks = tokenize(src)
        match = matching(toks)
        rev = {v: k for k, v in match.items()}
        for k, t in enumerate(toks):
            name = _UNRENAME.get(t.text, t.text)
            if not (
                t.kind == "ident"
                and (name in self._GLOBAL_ONLY or name in _CONVERSION_STANDINS)
                and 0 < k
                and toks[k - 1].text == "."
                and k + 2 < len(toks)
                and toks[k + 1].text == "("
                and toks[k + 2].text == ")"
            ):
                continue
            j = k - 2
            while j >= 0:
                u = toks[j]
                if u.text in (")", "]") and j in rev:
                    j = rev[j] - 1
                elif (u.kind in ("ident", "number", "string") and u.text != "in") or u.text in (".", "?."):
                    j -= 1
                else:
                    break
            if j + 1 > k - 2:
                continue
            receiver = src[toks[j + 1].start : toks[k - 1].start]
            try:
                ast = decode_serialized(eng.env.compile(receiver).serialize())
            except Exception:  # the receiver alone does not compile: nothing to add
                continue
            any_attrs = not self.env.list_attributes
            recv = (
                "any"
                if any_attrs and _checks.attribute_derived(ast.expr)
                else format_type(_checks._type(ast, ast.expr))
            )
            off = toks[k + 1].start
            out.append(
                (
                    off,
                    _checks.format_issue(
                        display, off, f"found no matching overload for '{name}' applied to '{recv}.()'"
                    ),
                )
            )
        return out

    def _static_checks(self, ast, src: str) -> None:
        from . import _checks

        for n in _checks._walk(ast.expr):
            if n.kind == "call" and n.value == "cel.@mapInsert":
                raise CelCompileError(
                    "kubectl-dra: transformMap()/transformMapEntry() is not supported by the local "
                    "CEL engine (cel-cpp); Kubernetes accepts this expression",
                    exact=False,
                )
        any_attrs = not self.env.list_attributes
        # Type-checker errors of cel-go first; its AST validators (homogeneous literals, format strings,
        # regex literals) only run on an expression that type-checked, so their errors are reported
        # only when there is no checker error.
        problems = (
            _checks.hidden_member_calls(ast, any_attrs)
            + _checks.type_identifiers(ast, src)
            + _checks.flatten_calls(ast)
        )
        if not self.env.list_attributes:
            problems += _checks.any_typed_ranges(ast)
        regex_issues, instantiation = _checks.constant_regexes(ast, L.validate_re2)
        if not problems:
            problems = (
                _checks.homogeneous_literals(ast, any_attrs) + _checks.format_literals(ast, any_attrs) + regex_issues
            )
        if problems:
            problems.sort()
            text = "\n".join(_checks.format_issue(src, off, msg) for off, msg in problems)
            for stand_in, name in _UNRENAME.items():
                text = text.replace(stand_in, name)
            raise CelCompileError("compilation failed: " + text)
        instantiation += _checks.constant_conversions(ast)
        if instantiation:
            raise CelCompileError(instantiation[0])

    @staticmethod
    def _outer_map_edits(ast, toks, match, by_start) -> list:
        """device.attributes / device.capacity return an empty map for any missing domain in
        Kubernetes, also through `[?d]` (always present), `.d` and `has(device.attributes.d)`
        (always true)."""
        out = []
        outer = ("device.attributes", "device.capacity")
        skip: set[int] = set()
        for k in range(len(toks) - 7):
            seq = [t.text for t in toks[k : k + 8]]
            if (
                seq[0] == "has"
                and seq[1] == "("
                and seq[2] == "device"
                and seq[3] == "."
                and seq[4] in ("attributes", "capacity")
                and seq[5] == "."
                and toks[k + 6].kind == "ident"
                and seq[7] == ")"
            ):
                out.append((toks[k].start, toks[k + 7].end, "true"))
                skip.add(toks[k + 5].start)
        stack = [ast.expr]
        while stack:
            n = stack.pop()
            stack.extend(n.children())
            if (
                n.kind == "call"
                and n.value == "_[?_]"
                and n.args
                and n.args[0].kind == "ident"
                and n.args[0].value in outer
            ):
                k = by_start.get(ast.positions.get(n.id))
                if k is None or k < 3 or toks[k].text != "[?" or k not in match or toks[k - 3].text != "device":
                    continue
                out.append((toks[k - 3].start, toks[k - 3].start, "optional.of("))
                out.append((toks[match[k]].end, toks[match[k]].end, ".orValue({}))"))
            elif (
                n.kind == "select"
                and not n.test_only
                and n.operand is not None
                and n.operand.kind == "ident"
                and n.operand.value in outer
            ):
                pos = ast.positions.get(n.id)
                k = by_start.get(pos)
                if k is None or pos in skip or toks[k].text != "." or k + 1 >= len(toks):
                    continue
                out.append((toks[k].start, toks[k + 1].end, f'[?"{n.value}"].orValue({{}})'))
        return out

    def _semver_equality_edits(self, ast, toks, match, by_start) -> list:
        """Equality differences between cel-go and cel-cpp, fixed by rewriting the operator:

        * cel-go's `==` calls lhs.Equal(rhs); Semver.Equal(non-Semver) is a "no such overload"
          error while cel-cpp's message equality says false: dyn left operands compared with a
          statically non-Semver right operand get a guard.
        * Quantity == Quantity is numeric (Cmp) in Kubernetes, but the message carries the
          representation (it decides isInteger/asInteger): statically Quantity-typed ==/!= becomes
          a library call."""
        from ._ast import decode_type

        out = []
        stack = [ast.expr]
        while stack:
            n = stack.pop()
            stack.extend(n.children())
            if n.kind != "call" or n.value not in ("_==_", "_!=_") or len(n.args) != 2:
                continue
            left, right = n.args
            lt = ast.types.get(left.id)
            rt = ast.types.get(right.id)
            if lt is None or rt is None:
                continue
            lt, rt = decode_type(lt), decode_type(rt)
            op = ast.positions.get(n.id)
            if op is None or op not in by_start:
                continue
            start = self._left_operand_start(toks, match, op)
            if start is None:
                continue
            quantity = ("msg", "kubernetes.Quantity")
            if lt == quantity and rt == quantity:
                end = self._right_operand_end(toks, match, by_start[op])
                if end is None:
                    continue
                prefix = QEQ + "(" if n.value == "_==_" else "!" + QEQ + "("
                out.append((start, start, prefix))
                out.append((op, op + 2, ","))
                out.append((end, end, ")"))
                continue
            if n.value != "_==_":
                continue
            objects = (("msg", "kubernetes.Semver"), quantity)
            right_null = rt[0] == "null" or (right.kind == "const" and right.const_type == "null")
            if not ((lt[0] == "dyn" and not right_null and rt not in objects) or (lt in objects and rt[0] == "dyn")):
                continue
            end = self._right_operand_end(toks, match, by_start[op])
            if end is None:
                continue
            # both operands are evaluated (left first) exactly once, as cel-go's `==` does; no cel.bind
            # (see _unbind.py) and one comprehension iteration
            out.append((start, start, "[["))
            out.append((op, op + 2, ", "))
            out.append(
                (
                    end,
                    end,
                    "]].map(k8sEqP, (type(k8sEqP[0]) in [kubernetes.Semver, kubernetes.Quantity] && "
                    'k8sEqP[1] != null && type(k8sEqP[1]) != type(k8sEqP[0])) ? dyn(0) + dyn("") : '
                    "k8sEqP[0] == k8sEqP[1])[0]",
                )
            )
        return out

    @staticmethod
    def _right_operand_end(toks, match, op_idx: int) -> int | None:
        stop = {"&&", "||", "?", ":", ",", ")", "]", "}", "==", "!=", "<", "<=", ">", ">="}
        k = op_idx + 1
        last = None
        while k < len(toks):
            t = toks[k]
            if t.text in stop or (t.kind == "ident" and t.text == "in"):
                break
            if k in match:
                last = toks[match[k]].end
                k = match[k] + 1
                continue
            last = t.end
            k += 1
        return last

    @staticmethod
    def _left_operand_start(toks, match, op: int) -> int | None:
        """Start offset of the left operand of the relational operator at offset ``op``."""
        idx = next((k for k, t in enumerate(toks) if t.start == op), None)
        if idx is None:
            return None
        rev = {v: k for k, v in match.items()}
        k = idx - 1
        stop = {"&&", "||", "?", ":", ",", "==", "!=", "<", "<=", ">", ">=", "in", "(", "[", "{", "[?", "{?"}
        while k >= 0:
            t = toks[k]
            if t.text in (")", "]", "}"):
                k = rev.get(k, k) - 1
                continue
            if t.text in stop or (t.kind == "ident" and t.text == "in"):
                break
            k -= 1
        return toks[k + 1].start if k + 1 < idx else None

    # -- memo key: the values the expression reads, from the raw device dict
    def _make_key_fn(self):
        plan = self.plan
        env = self.env
        attr_keys = tuple(plan.attr_keys)
        cap_keys = tuple(plan.cap_keys)
        attr_domains = tuple(sorted(plan.attr_domains))
        cap_domains = tuple(sorted(plan.cap_domains))
        need_driver = plan.driver
        need_multi = plan.multi
        attr_all, cap_all = plan.attr_all, plan.cap_all
        self._env_conv = env._conversion_error
        if not (attr_all or cap_all or attr_domains or cap_domains):
            return self._simple_key_fn(need_driver, need_multi, attr_keys, cap_keys)

        def key(device: dict) -> tuple:
            driver = device.get("driver") or ""
            attrs = device.get("attributes") or {}
            caps = device.get("capacity") or {}
            parts: list = [
                driver if need_driver else None,
                bool(device.get("allowMultipleAllocations")) if need_multi else None,
            ]
            if attr_all:
                parts.append(tuple((_split(n, driver), _attr_key(a)) for n, a in attrs.items()))
            else:
                for d, i in attr_keys:
                    parts.append(_attr_key(_raw_attr(attrs, driver, d, i)))
                for d in attr_domains:
                    parts.append(
                        tuple(
                            sorted(
                                (i2, _attr_key(a))
                                for n, a in attrs.items()
                                for dd, i2 in (_split(n, driver),)
                                if dd == d
                            )
                        )
                    )
            if cap_all:
                parts.append(tuple((_split(n, driver), _cap_raw(c)) for n, c in caps.items()))
            else:
                for d, i in cap_keys:
                    c = caps.get(f"{d}/{i}")
                    if c is None and d == driver:
                        c = caps.get(i)
                    parts.append(_cap_raw(c))
                for d in cap_domains:
                    parts.append(
                        tuple(
                            sorted(
                                (i2, _cap_raw(c)) for n, c in caps.items() for dd, i2 in (_split(n, driver),) if dd == d
                            )
                        )
                    )
            return tuple(parts)

        return key

    @staticmethod
    def _simple_key_fn(need_driver: bool, need_multi: bool, attr_keys: tuple, cap_keys: tuple):
        """The memo key when only literal keys are read (the common case), without per-call loops
        over empty read sets; same values as the general key function."""
        attrs_q = tuple((f"{d}/{i}", d, i) for d, i in attr_keys)
        caps_q = tuple((f"{d}/{i}", d, i) for d, i in cap_keys)
        empty: dict = {}

        def key(device: dict) -> tuple:
            driver = device.get("driver") or ""
            parts: list = [
                driver if need_driver else None,
                bool(device.get("allowMultipleAllocations")) if need_multi else None,
            ]
            if attrs_q:
                attrs = device.get("attributes") or empty
                for full, d, i in attrs_q:
                    a = attrs.get(full)
                    if a is None and d == driver:
                        a = attrs.get(i)
                    parts.append(_attr_key(a))
            if caps_q:
                caps = device.get("capacity") or empty
                for full, d, i in caps_q:
                    c = caps.get(full)
                    if c is None and d == driver:
                        c = caps.get(i)
                    parts.append(_cap_raw(c))
            return tuple(parts)

        return key

    def _iterable_error(self, device: dict) -> str:
        """cel-go: "got '<Go type>', expected iterable type" (the type is found from the attribute
        being iterated when that is statically known)."""
        gotype = "unknown"
        driver = device.get("driver") or ""
        attrs = device.get("attributes") or {}
        for d, i in self._range_attrs:
            raw = _raw_attr(attrs, driver, d, i)
            if isinstance(raw, dict):
                for k, name in (
                    ("string", "types.String"),
                    ("int", "types.Int"),
                    ("bool", "types.Bool"),
                    ("version", "cel.Semver"),
                ):
                    if raw.get(k) is not None:
                        gotype = name
                        break
                if gotype != "unknown":
                    break
        return f"got '{gotype}', expected iterable type"

    def reads(self, device: dict) -> tuple:
        plan = self.plan
        driver = device.get("driver") or ""
        attrs = device.get("attributes") or {}
        caps = device.get("capacity") or {}
        out = []
        if plan.driver:
            out.append((("driver",), driver))
        if plan.multi:
            out.append((("allowMultipleAllocations",), bool(device.get("allowMultipleAllocations") or False)))
        for d, i in plan.attr_keys:
            out.append((("attributes", d, i), _plain(_raw_attr(attrs, driver, d, i))))
        for d in sorted(plan.attr_domains):
            dom = {i2: _plain(a) for n, a in attrs.items() for dd, i2 in (_split(n, driver),) if dd == d}
            out.append((("attributes", d), dom or None))
        if plan.attr_all:
            out.append((("attributes",), {n: _plain(a) for n, a in attrs.items()}))
        for d, i in plan.cap_keys:
            c = caps.get(f"{d}/{i}")
            if c is None and d == driver:
                c = caps.get(i)
            out.append((("capacity", d, i), _cap_raw(c)))
        for d in sorted(plan.cap_domains):
            dom = {i2: _cap_raw(c) for n, c in caps.items() for dd, i2 in (_split(n, driver),) if dd == d}
            out.append((("capacity", d), dom or None))
        if plan.cap_all:
            out.append((("capacity",), {n: _cap_raw(c) for n, c in caps.items()}))
        return tuple(out)

    def evaluate(self, device: dict) -> EvalResult:
        conv = self._env_conv(device)
        if conv is not None:
            return EvalResult(None, conv, ())
        key = self._key_fn(device)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        res = self._evaluate(device)
        if len(self._memo) < 65536:
            self._memo[key] = res
        return res

    def _evaluate(self, device: dict) -> EvalResult:
        reads = self.reads(device)
        if self.over_budget:
            return EvalResult(None, COST_EXCEEDED, reads)
        env = self.env
        try:
            act = env._activation(device)
        except (qlib.QuantityError, slib.SemverError, ValueError, TypeError) as e:
            return EvalResult(None, f"invalid device: {e}", reads)
        self.evaluations += 1
        res = self._run(self._program, act, device, reads)
        if res.error is not None and self._lazy_program is not None:
            # cel.bind initialisers were evaluated eagerly by the map form; Kubernetes evaluates them
            # only where used, so an error is re-checked with the inlined (lazy) form
            res = self._run(self._lazy_program, act, device, reads)
        return res

    def _run(self, program, act, device: dict, reads: tuple) -> EvalResult:
        env = self.env
        try:
            value = program.eval(act)
        except Exception as e:  # engine conversion failures become runtime errors
            if "Iteration budget exceeded" in str(e):
                # the abort is global like Kubernetes' cancellation; which one applies depends on
                # whether Kubernetes' cost could stay within its limit
                if self.estimated_cost > COST_LIMIT:
                    return EvalResult(None, COST_EXCEEDED, reads)
                return EvalResult(None, ENGINE_LIMIT, reads, exact=False)
            return EvalResult(None, _runtime_message(str(e), env.no_such_key_hint), reads)
        t = value.type()
        eng = env.engine
        if t == eng.BOOL:
            return EvalResult(bool(value.value()), None, reads)
        if t == eng.ERROR:
            raw = str(value.value())
            if raw.endswith("No matching overloads found : <iter_range>"):
                return EvalResult(None, self._iterable_error(device), reads)
            return EvalResult(None, _runtime_message(raw, env.no_such_key_hint), reads)
        tn = _result_type_name(value)
        return EvalResult(
            None, f"CEL result of type {tn} could not be converted to bool: {_bool_conversion_error(tn)}", reads
        )
