"""The kubeconfig read as kubectl reads it, without the kubernetes package (whose import costs 0.15-0.25 s before
the first request): client-go's tools/clientcmd (loader.go: files, merging, relative paths; client_config.go and
validation.go: the context, its cluster and user, what makes them unusable), ending in the user's Credentials
(gather/credentials.py: exec plugins and token files, kept current as client-go keeps them); with no kubeconfig (or
an empty one) inside a pod, the ServiceAccount's in-cluster configuration (gather/incluster.py). Only the legacy
`auth-provider` user field falls back to the kubernetes client."""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from kubectl_dra.errors import DraError
from kubectl_dra.gather import incluster
from kubectl_dra.gather.credentials import (
    Credentials,
    Creds,
    ExecCredentials,
    ReloadingCredentials,
    StaticCredentials,
    TokenFileCredentials,
    exec_plugin,
)


@dataclass(frozen=True)
class Connection:
    server: str  # "https://host:port[/prefix]" with no trailing slash
    namespace: str  # the context's namespace, else "default"
    ca_pem: bytes | None  # certificate-authority(-data) contents (PEM); None: system trust store
    insecure: bool  # insecure-skip-tls-verify
    tls_server_name: str | None  # cluster tls-server-name
    credentials: Credentials  # what authenticates a request, current when it is sent (gather/credentials.py)
    impersonation: tuple[tuple[str, str], ...]  # Impersonate-* (a name repeated for several values)
    proxy_url: str | None  # cluster proxy-url
    context: str  # the context's name

    @property
    def headers(self) -> tuple[tuple[str, str], ...]:
        """The credentials' Authorization (as they are now), then the Impersonate-* headers."""
        auth = self.credentials.current().authorization
        return ((("Authorization", auth),) if auth else ()) + self.impersonation

    @property
    def client_cert_pem(self) -> bytes | None:  # client-certificate(-data) (PEM), from the user or an exec plugin
        return self.credentials.current().cert_pem

    @property
    def client_key_pem(self) -> bytes | None:
        return self.credentials.current().key_pem


# The fields of clientcmd/api/v1 types.go that matter here, as encoding/json decodes them: `bytes` is a []byte
# (base64), a list is a slice of its one element, {str: X} a map, any other dict a struct (unknown keys ignored).
_EXEC = {"command": str, "args": [str], "env": [{"name": str, "value": str}], "apiVersion": str,
         "installHint": str, "provideClusterInfo": bool, "interactiveMode": str}  # fmt: skip
_SECTIONS = (
    ("clusters", "cluster", {"server": str, "tls-server-name": str, "insecure-skip-tls-verify": bool,
                             "certificate-authority": str, "certificate-authority-data": bytes, "proxy-url": str,
                             "disable-compression": bool, "extensions": [{"name": str, "extension": object}]}),
    ("users", "user", {"client-certificate": str, "client-certificate-data": bytes, "client-key": str,
                       "client-key-data": bytes, "token": str, "tokenFile": str, "as": str, "as-uid": str,
                       "as-groups": [str], "as-user-extra": {str: [str]}, "username": str, "password": str,
                       "auth-provider": {"name": str, "config": {str: str}}, "exec": _EXEC}),
    ("contexts", "context", {"cluster": str, "user": str, "namespace": str}),
)  # fmt: skip
_EXEC_EXTENSION = "client.authentication.k8s.io/exec"  # client_config.go clusterExtensionKey
_TOKEN_CHARS = frozenset("!#$&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def load_connection(kubeconfig: str | None, context: str | None) -> Connection:
    """How to reach the API server of the context (`context`, else current-context) of the kubeconfig (`kubeconfig`,
    else $KUBECONFIG, else ~/.kube/config); a one-line DraError for anything that stops kubectl (and for a user
    or cluster name the context names but no file defines)."""
    try:
        return _load_connection(kubeconfig, context)
    except DraError as e:
        raise DraError(" ".join(e.message.splitlines())) from None
    except Exception as e:
        raise DraError(f"cannot load kubeconfig: {type(e).__name__}: {_first_line(e)}") from None


def _q(s) -> str:
    return json.dumps(s, ensure_ascii=False, default=str)  # Go's %q, closely enough: one line, double quotes


def _first_line(e: BaseException) -> str:
    return (str(e).splitlines() or [""])[0]


def _invalid(message: str) -> DraError:
    return DraError(f"invalid configuration: {message}")


def _conform(v, spec, where: str):
    """`v` decoded into `spec` as encoding/json would: null is the zero value, a wrong type an error."""
    if v is None or spec is object:
        return v
    if isinstance(spec, dict):
        if not isinstance(v, dict):
            raise ValueError(f"{where}: expected a mapping")
        if str in spec:
            return {k: _conform(x, spec[str], f"{where}.{k}") for k, x in v.items()}
        return {k: _conform(v.get(k), s, f"{where}.{k}") for k, s in spec.items()}
    if isinstance(spec, list):
        if not isinstance(v, list):
            raise ValueError(f"{where}: expected a list")
        return [_conform(x, spec[0], where) for x in v]
    if spec is bytes:  # Go's base64.StdEncoding: padding required, CR and LF skipped
        if isinstance(v, str):
            try:
                return base64.b64decode(v.replace("\r", "").replace("\n", ""), validate=True)
            except ValueError:
                raise ValueError(f"{where}: illegal base64 data") from None
    elif isinstance(v, spec):
        return v
    raise ValueError(f"{where}: expected {'a boolean' if spec is bool else 'a string'}")


def _files(kubeconfig: str | None) -> list[str]:
    """loader.go NewDefaultClientConfigLoadingRules and Load: the explicit file, else $KUBECONFIG's (empty entries
    and repeats dropped), else ~/.kube/config (its migration from ~/.kube/.kubeconfig is not done here)."""
    if kubeconfig:
        try:
            os.stat(kubeconfig)
        except (FileNotFoundError, NotADirectoryError):
            raise DraError(f"kubeconfig not found: {kubeconfig}") from None
        return [kubeconfig]
    env = os.environ.get("KUBECONFIG", "")
    if env:
        return list(dict.fromkeys(p for p in env.split(os.pathsep) if p))
    return [os.path.join(os.path.expanduser("~"), ".kube", "config")]


def _read(path: str) -> dict | None:
    """One file's entries by name, each with the file it came from (loader.go LoadFromFile); None if missing."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        raise DraError(f"error loading config file {_q(path)}: {e.strerror or e}") from None
    from kubectl_dra.yamlio import load_all

    try:
        docs = load_all(data.decode("utf-8"), refuse_joined=False) if data else []
        doc = docs[0] if docs else {}
        if not isinstance(doc, dict):
            raise ValueError("a kubeconfig is a YAML mapping")
        version, kind = doc.get("apiVersion") or "v1", doc.get("kind") or "Config"
        if (version, kind) != ("v1", "Config"):
            raise ValueError(f"no kind {_q(kind)} is registered for version {_q(version)}")
        out = {"current": _conform(doc.get("current-context"), str, "current-context") or "", "data": bool(doc)}
        for section, key, spec in _SECTIONS:
            out[section] = {}
            for entry in _conform(doc.get(section), [{"name": str, key: spec}], section) or []:
                name = (entry or {}).get("name") or ""
                if name in out[section]:  # api/v1 conversion.go
                    raise ValueError(f"duplicate name {_q(name)} in {section}")
                out[section][name] = ((entry or {}).get(key) or {}, path)
        return out
    except Exception as e:
        mark, problem = getattr(e, "problem_mark", None), getattr(e, "problem", None)
        why = (f"yaml: line {mark.line + 1}: {problem}" if mark else f"yaml: {problem}") if problem else _first_line(e)
        raise DraError(f"error loading config file {_q(path)}: {why}") from None


def _merged(kubeconfig: str | None) -> dict:
    """loader.go Load: for each cluster, user and context name the first file that defines it wins, and so does the
    first file that sets current-context; a missing file is skipped, an unreadable or invalid one is an error."""
    merged = {"current": "", "clusters": {}, "users": {}, "contexts": {}, "files": [], "found": False}
    for path in _files(kubeconfig):
        one = _read(path)
        if one is None:
            continue
        merged["found"] = True
        merged["current"] = merged["current"] or one["current"]
        if one["data"]:
            merged["files"].append(path)
        for section, _, _ in _SECTIONS:
            for name, entry in one[section].items():
                merged[section].setdefault(name, entry)
    return merged


def _path(ref: str | None, origin: str) -> str | None:
    """A file named by an entry, relative to the directory of the file that defined the entry (ResolvePaths)."""
    if not ref or os.path.isabs(ref):
        return ref or None
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(origin)), ref))


def _file(path: str, field: str, owner: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise _invalid(f"unable to read {field} {_q(path)} for {_q(owner)}: {e.strerror or e}") from None


def _server(raw: str) -> tuple[str, str, str]:
    """(scheme, base URL, client-go's Host) as ClientConfig and rest.DefaultServerURL read a cluster's server: one
    without a scheme is http (client-go's choice when it decides whether to send credentials)."""
    try:
        u = urlsplit(raw)
        host = urlunsplit(u._replace(query="", fragment="")) if u.scheme and u.netloc and len(u.path) > 1 else raw
        if not (u.scheme and u.netloc):
            u = urlsplit("http://" + raw)
            if u.path not in ("", "/"):
                raise ValueError
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError
        u.port  # raises ValueError for a port that is not one
    except ValueError:
        raise _invalid(f"host must be a URL or a host:port pair: {_q(raw)}") from None
    return u.scheme, f"{u.scheme}://{u.netloc}{u.path.rstrip('/')}", host


def _extra_header(key: str) -> str:
    """Impersonate-Extra-KEY as client-go sends it: headerKeyEscape, then Go's header-name canonicalization."""
    escaped = "".join(chr(b) if chr(b) in _TOKEN_CHARS else f"%{b:02X}" for b in key.encode())
    return "-".join(p[:1].upper() + p[1:].lower() for p in f"Impersonate-Extra-{escaped}".split("-"))


def _check_exec(ex: dict, provider: dict | None, user: str) -> None:
    """validation.go validateAuthInfo, the exec part, after api/v1 defaults.go (interactiveMode IfAvailable for the
    older apiVersions only)."""
    old = ex.get("apiVersion") in ("client.authentication.k8s.io/v1beta1", "client.authentication.k8s.io/v1alpha1")
    mode = ex["interactiveMode"] = ex.get("interactiveMode") or ("IfAvailable" if old else "")
    for bad, why in (
        (provider is not None, "authProvider cannot be provided in combination with an exec plugin"),
        (not ex.get("command"), "command must be specified"),
        (not ex.get("apiVersion"), "apiVersion must be specified"),
        (any(not (e or {}).get("name") for e in ex.get("env") or []), "env variable name must be specified"),
        (not mode, "interactiveMode must be specified"),
        (mode not in ("Never", "IfAvailable", "Always"), f"invalid interactiveMode {_q(mode)}"),
    ):
        if bad:
            raise _invalid(f"{why} for {_q(user)} to use exec authentication plugin")


def _load_connection(kubeconfig: str | None, context: str | None) -> Connection:
    merged = _merged(kubeconfig)
    if not merged["files"] and incluster.possible():  # merged_client_builder.go: an empty config, in a pod
        ic = incluster.load()
        return Connection(ic.server, ic.namespace, ic.ca_pem, False, None, ic.credentials, (), None, incluster.CONTEXT)
    if not merged["found"]:
        raise DraError("no configuration has been provided: no kubeconfig file found (see --kubeconfig, KUBECONFIG)")
    name = context or merged["current"]
    if not name:
        raise DraError("no context chosen: set current-context in the kubeconfig or pass --context")
    if name not in merged["contexts"]:
        raise DraError(f"context {_q(name)} does not exist")
    ctx = merged["contexts"][name][0]
    cname, uname = ctx.get("cluster") or "", ctx.get("user") or ""
    if not cname:
        raise _invalid(f"cluster was not specified for context {_q(name)}")
    for kind, ref, section in (("cluster", cname, "clusters"), ("user", uname, "users")):
        if ref and ref not in merged[section]:  # validation.go validateContext
            raise _invalid(f"{kind} {_q(ref)} was not found for context {_q(name)}")
    cluster, corigin = merged["clusters"][cname]
    user, uorigin = merged["users"].get(uname, ({}, ""))

    # validation.go validateClusterInfo
    if not cluster.get("server"):
        raise _invalid(f"no server found for cluster {_q(cname)}")
    proxy = cluster.get("proxy-url") or None
    if proxy:
        try:
            scheme = urlsplit(proxy).scheme
        except ValueError:
            scheme = None
        if scheme not in ("http", "https", "socks5"):
            raise _invalid(f"invalid 'proxy-url' {_q(proxy)} for cluster {_q(cname)}: must be http, https or socks5")
    ca, ca_file = cluster.get("certificate-authority-data"), _path(cluster.get("certificate-authority"), corigin)
    if ca and ca_file:
        raise _invalid(f"certificate-authority-data and certificate-authority are both specified for {_q(cname)}")
    ca = ca or (_file(ca_file, "certificate-authority", cname) if ca_file else None)

    # validation.go validateAuthInfo
    token, username, password = user.get("token") or "", user.get("username") or "", user.get("password") or ""
    if token and (username or password):
        raise _invalid(f"more than one authentication method found for {_q(uname)}; found [token basicAuth]")
    cert, key = user.get("client-certificate-data") or None, user.get("client-key-data") or None
    cert_file, key_file = _path(user.get("client-certificate"), uorigin), _path(user.get("client-key"), uorigin)
    if cert or cert_file:
        for field, data, file in (("client-cert", cert, cert_file), ("client-key", key, key_file)):
            if data and file:
                raise _invalid(f"{field}-data and {field} are both specified for {_q(uname)}")
        if not (key or key_file):
            raise _invalid(f"client-key-data or client-key must be specified for {_q(uname)} to use the clientCert")
        cert = cert or _file(cert_file, "client-cert", uname)
        key = key or _file(key_file, "client-key", uname)
    else:
        key = None  # a key without a certificate is not used
    ex, provider = user.get("exec"), user.get("auth-provider")
    if ex is not None:
        _check_exec(ex, provider, uname)
    if (user.get("as-uid") or user.get("as-groups") or user.get("as-user-extra")) and not user.get("as"):
        raise _invalid(f"requesting uid, groups or user-extra for {_q(uname)} without impersonating a user")

    scheme, server, host = _server(cluster["server"])
    if scheme != "https":  # client_config.go: "only try to read the auth information if we are secure"
        ca = None
        credentials: Credentials = StaticCredentials()
    else:
        credentials = _credentials(merged["files"], name, cluster, user, uname, ca, (token, cert, key), host, uorigin)
    headers: list[tuple[str, str]] = []
    if user.get("as"):  # transport/round_trippers.go NewImpersonatingRoundTripper
        headers.append(("Impersonate-User", user["as"]))
        if user.get("as-uid"):
            headers.append(("Impersonate-Uid", user["as-uid"]))
        headers += [("Impersonate-Group", g or "") for g in user.get("as-groups") or []]
        for k, values in (user.get("as-user-extra") or {}).items():
            headers += [(_extra_header(k), v or "") for v in values or []]
    insecure, sni = bool(cluster.get("insecure-skip-tls-verify")), cluster.get("tls-server-name") or None
    return Connection(
        server, ctx.get("namespace") or "default", ca, insecure, sni, credentials, tuple(headers), proxy, name
    )


def _credentials(
    files: list[str],
    context: str,
    cluster: dict,
    user: dict,
    uname: str,
    ca: bytes | None,
    static: tuple[str, bytes | None, bytes | None],  # the user's token, client certificate and key
    host: str,
    origin: str,
) -> Credentials:
    """The user's credentials (transport/round_trippers.go HTTPWrappersForConfig, exec.go UpdateTransportConfig):
    a tokenFile (read now, and again as it ages), else a token or basic auth, else an exec plugin (run now, and
    again as its credentials expire), else an auth-provider; a client certificate beside any but the exec plugin,
    which runs only when the user has none of the others."""
    token, cert, key = static
    username, password = user.get("username") or "", user.get("password") or ""
    token_file = _path(user.get("tokenFile"), origin)
    if token_file and username:
        raise DraError("username/password or bearer token may be set, but not both")
    if token_file:  # transport's file token source wins over `token`, which it falls back to
        return TokenFileCredentials(token_file, token, cert, key)
    ex, provider = user.get("exec"), user.get("auth-provider")
    if not (token or username or cert) and ex is not None:
        extensions = {(e or {}).get("name"): (e or {}).get("extension") for e in cluster.get("extensions") or []}
        info = {  # rest/exec.go ConfigToExecCluster, as clientauthentication/v1 types.go writes it (omitempty)
            "server": host,
            "tls-server-name": cluster.get("tls-server-name"),
            "insecure-skip-tls-verify": cluster.get("insecure-skip-tls-verify") or None,
            "certificate-authority-data": base64.b64encode(ca).decode() if ca else None,
            "proxy-url": cluster.get("proxy-url") or None,
            "disable-compression": cluster.get("disable-compression") or None,
            "config": extensions.get(_EXEC_EXTENSION),
        }
        info = {k: v for k, v in info.items() if v not in (None, "")}
        command = os.path.normpath(_path(ex["command"], origin) if os.sep in ex["command"] else ex["command"])
        creds = ExecCredentials(lambda: exec_plugin(ex, command, info))
        creds.current()  # run now: a plugin that fails stops the command before any request, as before
        return creds
    if token:
        return StaticCredentials(Creds(f"Bearer {token}", cert, key))
    if username:
        basic = base64.b64encode(f"{username}:{password}".encode()).decode()
        return StaticCredentials(Creds(f"Basic {basic}", cert, key))
    if provider is not None:
        return ReloadingCredentials(lambda: Creds(_auth_provider(files, context, provider, uname), cert, key))
    return StaticCredentials(Creds(None, cert, key))


def _auth_provider(files: list[str], context: str, provider: dict, user: str) -> str:
    """The Authorization value the kubernetes client makes of a legacy auth-provider (oidc, gcp with cmd-path);
    it reads the same files (first file wins per name there too) and writes back what it refreshes."""
    try:
        from kubernetes import config
        from kubernetes.config.config_exception import ConfigException
    except ImportError as e:  # pragma: no cover - packaging error
        raise DraError(f"the kubernetes client is not installed: {e}") from None
    try:
        api = config.new_client_from_config(config_file=os.pathsep.join(files), context=context)
    except ConfigException as e:
        raise DraError(f"invalid kubeconfig: {_first_line(e) or type(e).__name__}") from None
    try:
        value = api.configuration.api_key.get("BearerToken") or api.configuration.api_key.get("authorization")
    finally:
        api.close()
    if not value:
        raise DraError(f"the auth-provider {_q(provider.get('name') or '')} of user {_q(user)} gave no credentials")
    return value


def context_names(kubeconfig: str | None) -> list[str]:
    """Every context of the merged kubeconfig (--all-contexts), in name order; none is an error, as kubectl's
    `config get-contexts` on an empty config says nothing to use."""
    merged = _merged(kubeconfig)
    if not merged["contexts"]:
        raise DraError("the kubeconfig has no contexts (--all-contexts)")
    return sorted(merged["contexts"])
