"""The cel-cpp engine (cel-expr-python), created lazily per option set: the declarations of the Kubernetes
libraries, the message types, the function bindings."""

from __future__ import annotations

import threading
from typing import Any

from . import _lazy as lazy
from ._common import CONVERSION_STANDINS, GLOBAL_ONLY, HIDDEN_MEMBER, K8S_STRING, LISTS_RANGE, QEQ, RENAMES
from .library import cidr, ip, lists, quantity, regex, semverlib, strings, urls, values
from .library import includes as dra_includes
from .library.values import MESSAGE_NAMES, message_types

# ------------------------------------------------------------------------------ engine (lazy)
_ENGINES: dict[tuple, Any] = {}
_ENGINE_LOCK = threading.Lock()


class Engine:
    """One cel-cpp Env plus the protobuf message classes (built once per declaration set)."""

    # The overloads of one function come from several libraries (compareTo: quantity, semver and the hidden impl)
    # and are declared together, once; the implementations live in library/, one module per upstream file.
    # long: the one declaration table of every library function (see above)
    def __init__(self, includes: bool, includes_limit: bool = False, new_celgo: bool = False, v138: bool = False):
        from cel_expr_python import (
            cel,  # lazy on purpose (CLI start-up time)
        )

        self.cel = cel
        pool, classes = message_types()
        self.Q, self.S = classes["Quantity"], classes["Semver"]
        self.INVALID = classes["InvalidAttributeValue"]
        T = cel.Type
        Q, S, URL, IP, CIDR, X, INV = (T(n) for n in MESSAGE_NAMES)
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
            F("quantity", O("string_to_quantity", Q, [STR], quantity.f_quantity)),
            F("isQuantity", O("is_quantity_string", BOOL, [STR], quantity.f_is_quantity)),
            F("sign", O("quantity_sign", INT, [Q], quantity.f_sign)),
            F(QEQ, O("k8s_quantity_equal", BOOL, [Q, Q], quantity.f_quantity_equal)),
            F("isInteger", O("quantity_is_integer", BOOL, [Q], quantity.f_is_integer, True)),
            F("asInteger", O("quantity_as_integer", INT, [Q], quantity.f_as_integer, True)),
            F("asApproximateFloat", O("quantity_as_float", DBL, [Q], quantity.f_as_float, True)),
            F(
                "add",
                O("quantity_add", Q, [Q, Q], quantity.f_add_q, True),
                O("quantity_add_int", Q, [Q, INT], quantity.f_add_i, True),
            ),
            F(
                "sub",
                O("quantity_sub", Q, [Q, Q], quantity.f_sub_q, True),
                O("quantity_sub_int", Q, [Q, INT], quantity.f_sub_i, True),
            ),
            F(
                "compareTo",
                O("quantity_compare_to", INT, [Q, Q], member=True),
                O("semver_compare_to", INT, [S, S], member=True),
                O("impl_compare_to", INT, [X, X], quantity.f_compare_to, True),
            ),
            F(
                "isGreaterThan",
                O("quantity_is_greater_than", BOOL, [Q, Q], member=True),
                O("semver_is_greater_than", BOOL, [S, S], member=True),
                O("impl_is_greater_than", BOOL, [X, X], quantity.f_is_greater, True),
            ),
            F(
                "isLessThan",
                O("quantity_is_less_than", BOOL, [Q, Q], member=True),
                O("semver_is_less_than", BOOL, [S, S], member=True),
                O("impl_is_less_than", BOOL, [X, X], quantity.f_is_less, True),
            ),
            # semver library
            F(
                "semver",
                O("string_to_semver", S, [STR], semverlib.f_semver),
                O("string_bool_to_semver", S, [STR, BOOL], semverlib.f_semver),
            ),
            F(
                "isSemver",
                O("is_semver_string", BOOL, [STR], semverlib.f_is_semver),
                O("is_semver_string_bool", BOOL, [STR, BOOL], semverlib.f_is_semver),
            ),
            F("major", O("semver_major", INT, [S], semverlib.f_major, True)),
            F("minor", O("semver_minor", INT, [S], semverlib.f_minor, True)),
            F("patch", O("semver_patch", INT, [S], semverlib.f_patch, True)),
            # k8s lists library (v0); type parameters are spelled out per comparable type
            F(
                "isSorted",
                *[O(f"list_{n}_is_sorted", BOOL, [T.List(t)], member=True) for n, t in comparable],
                O("impl_is_sorted", BOOL, [LX], lists.f_is_sorted, True),
            ),
            F(
                "sum",
                *[
                    O(f"list_{n}_sum", t, [T.List(t)], member=True)
                    for n, t in comparable
                    if n in ("int", "uint", "double", "duration")
                ],
                O("impl_sum", DYN, [LX], lists.f_sum, True),
            ),
            F(
                "min",
                *[O(f"list_{n}_min", t, [T.List(t)], member=True) for n, t in comparable],
                O("impl_min", DYN, [LX], lists.f_min, True),
            ),
            F(
                "max",
                *[O(f"list_{n}_max", t, [T.List(t)], member=True) for n, t in comparable],
                O("impl_max", DYN, [LX], lists.f_max, True),
            ),
            F(
                RENAMES["indexOf"],
                O("string_index_of", INT, [STR, STR], strings.make_index_of_str(new_celgo), True),
                O("string_index_of_int", INT, [STR, STR, INT], strings.make_index_of_str(new_celgo), True),
                *[O(f"list_{n}_index_of", INT, [T.List(t), t], member=True) for n, t in comparable],
                O("impl_list_index_of", INT, [LX, ANY], lists.f_index_of_list, True),
            ),
            F(RENAMES["charAt"], O("string_char_at_int", STR, [STR, INT], strings.f_char_at, True)),
            F(
                RENAMES["substring"],
                O("string_substring_int", STR, [STR, INT], strings.f_substring, True),
                O("string_substring_int_int", STR, [STR, INT, INT], strings.f_substring, True),
            ),
            F(LISTS_RANGE, O("lists_range", T.List(INT), [INT], lists.make_lists_range(new_celgo))),
            F(
                RENAMES["lastIndexOf"],
                O("string_last_index_of", INT, [STR, STR], strings.make_last_index_of_str(new_celgo), True),
                O("string_last_index_of_int", INT, [STR, STR, INT], strings.make_last_index_of_str(new_celgo), True),
                *[O(f"list_{n}_last_index_of", INT, [T.List(t), t], member=True) for n, t in comparable],
                O("impl_list_last_index_of", INT, [LX, ANY], lists.f_last_index_of_list, True),
            ),
            # k8s regex library
            F("find", O("string_find_string", STR, [STR, STR], regex.f_find, True)),
            F(
                "findAll",
                O("string_find_all_string", T.List(STR), [STR, STR], regex.f_find_all, True),
                O("string_find_all_string_int", T.List(STR), [STR, STR, INT], regex.f_find_all, True),
            ),
            # k8s URL library
            F("url", O("string_to_url", URL, [STR], urls.f_url)),
            F("isURL", O("is_url_string", BOOL, [STR], urls.f_is_url)),
            F("getScheme", O("url_get_scheme", STR, [URL], urls.f_get_scheme, True)),
            F("getHost", O("url_get_host", STR, [URL], urls.f_get_host, True)),
            F("getHostname", O("url_get_hostname", STR, [URL], urls.f_get_hostname, True)),
            F("getPort", O("url_get_port", STR, [URL], urls.f_get_port, True)),
            F("getEscapedPath", O("url_get_escaped_path", STR, [URL], urls.f_get_escaped_path, True)),
            F("getQuery", O("url_get_query", T.Map(STR, T.List(STR)), [URL], urls.f_get_query, True)),
            # k8s IP / CIDR libraries
            F("ip", O("string_to_ip", IP, [STR], ip.f_ip), O("cidr_ip", IP, [CIDR], cidr.f_cidr_ip, True)),
            F("isIP", O("is_ip", BOOL, [STR], ip.f_is_ip)),
            F(
                K8S_STRING,
                O("ip_to_string", STR, [IP], member=False),
                O("cidr_to_string", STR, [CIDR], member=False),
                O("impl_to_string", STR, [X], ip.f_string_of),
            ),
            F("ip.isCanonical", O("ip_is_canonical", BOOL, [STR], ip.f_ip_is_canonical)),
            F("family", O("ip_family", INT, [IP], ip.f_family, True)),
            F("isUnspecified", O("ip_is_unspecified", BOOL, [IP], ip.f_ip_is_unspecified, True)),
            F("isLoopback", O("ip_is_loopback", BOOL, [IP], ip.f_ip_is_loopback, True)),
            F(
                "isLinkLocalMulticast",
                O("ip_is_link_local_multicast", BOOL, [IP], ip.f_ip_is_link_local_multicast, True),
            ),
            F("isLinkLocalUnicast", O("ip_is_link_local_unicast", BOOL, [IP], ip.f_ip_is_link_local_unicast, True)),
            F("isGlobalUnicast", O("ip_is_global_unicast", BOOL, [IP], ip.f_ip_is_global_unicast, True)),
            F("cidr", O("string_to_cidr", CIDR, [STR], cidr.f_cidr)),
            F("isCIDR", O("is_cidr", BOOL, [STR], cidr.f_is_cidr)),
            F(
                "containsIP",
                O("cidr_contains_ip_string", BOOL, [CIDR, STR], member=True),
                O("cidr_contains_ip_ip", BOOL, [CIDR, IP], member=True),
                O("impl_contains_ip", BOOL, [X, ANY], cidr.f_contains_ip, True),
            ),
            F(
                "containsCIDR",
                O("cidr_contains_cidr_string", BOOL, [CIDR, STR], member=True),
                O("cidr_contains_cidr", BOOL, [CIDR, CIDR], member=True),
                O("impl_contains_cidr", BOOL, [X, ANY], cidr.f_contains_cidr, True),
            ),
            F("masked", O("cidr_masked", CIDR, [CIDR], cidr.f_cidr_masked, True)),
            F("prefixLength", O("cidr_prefix_length", INT, [CIDR], cidr.f_prefix_length, True)),
        ]
        if v138:
            # CIDR library v1 (Kubernetes 1.38)
            F("isMask", O("cidr_is_mask", BOOL, [CIDR], cidr.f_cidr_is_mask, True))
            # checks of the guarded program for devices with invalid attribute values and of the
            # attribute/capacity map equality (_lazy.py)
            F(lazy.F_INVALID, O("k8s_invalid_attr", DYN, [INV], lazy.f_invalid))
            F(lazy.F_EQ_CHECK, O("k8s_proxy_eq_check", BOOL, [ANY, ANY], lazy.f_eq_check))
            F(lazy.F_EQ_OK, O("k8s_proxy_eq_ok", BOOL, [ANY, ANY], lazy.f_eq_ok))
            F(lazy.F_FMT_CHECK, O("k8s_invalid_fmt_check", BOOL, [ANY], lazy.f_fmt_check))
        if includes:
            F(
                "includes",
                O(
                    "dra_includes_dyn_dyn",
                    BOOL,
                    [ANY, ANY],
                    dra_includes.f_includes_limited if includes_limit else dra_includes.f_includes,
                    True,
                ),
            )
        # cel-go rejects receiver-style calls of global-only functions ("found no matching overload for
        # 'sign' applied to 'kubernetes.Quantity.()'"); cel-cpp would say "undeclared reference".  Hidden
        # member overloads let the checker resolve such calls so that the adapter can report them with
        # the receiver/argument types in cel-go's wording (_checks.hidden_member_calls).
        hidden = dict(GLOBAL_ONLY)
        for conv, stand_in in CONVERSION_STANDINS.items():
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
        except values.CelFunctionError:
            raise
        except (ValueError, TypeError, OverflowError, ZeroDivisionError) as e:
            raise values.CelFunctionError(str(e)) from None

    return call


def engine_for(includes: bool, includes_limit: bool = False, new_celgo: bool = False, v138: bool = False) -> Engine:
    key = (includes, includes_limit, new_celgo, v138)
    eng = _ENGINES.get(key)
    if eng is None:
        with _ENGINE_LOCK:
            eng = _ENGINES.get(key)
            if eng is None:
                eng = Engine(includes, includes_limit, new_celgo, v138)
                _ENGINES[key] = eng
    return eng
