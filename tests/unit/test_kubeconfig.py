"""kubectl_dra.gather.kubeconfig: the kubeconfig read as client-go's clientcmd reads it, checked against the
kubernetes Python client where the two agree."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time

import pytest
from loopback import kubeconfig

from kubectl_dra.errors import DraError
from kubectl_dra.gather.credentials import Creds, StaticCredentials
from kubectl_dra.gather.kubeconfig import Connection, load_connection

CA = b"-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"
CERT = b"-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n"
KEY = b"-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n"
V1, V1BETA1 = "client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"

# The plugin prints, as its token, what it received: KUBERNETES_EXEC_INFO, the env entry FOO and its arguments.
PLUGIN = """#!{python}
import json, os, sys
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
mode = os.environ.get("MODE", "echo")
if mode == "fail":
    sys.exit(3)
status = {{"token": json.dumps({{"info": info, "foo": os.environ.get("FOO"), "argv": sys.argv[1:]}})}}
if mode == "token":
    status = {{"token": "exec-" + os.environ.get("FOO", "")}}
if mode == "cert":
    status = {{"clientCertificateData": {cert!r}, "clientKeyData": {key!r}}}
version = os.environ.get("OUT_VERSION", info["apiVersion"])
print(json.dumps({{"apiVersion": version, "kind": "ExecCredential", "status": status}}))
"""


@pytest.fixture(autouse=True)
def no_ambient_config(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def plugin(tmp_path, name="plugin.py"):
    path = tmp_path / name
    path.write_text(PLUGIN.format(python=sys.executable, cert=CERT.decode(), key=KEY.decode()))
    path.chmod(0o755)
    return path


def exec_user(version=V1, mode="IfAvailable", env=(), **more):
    ex = {"apiVersion": version, "command": "./plugin.py", "args": ["a1", "a 2"]}
    ex["env"] = [{"name": k, "value": v} for k, v in (("FOO", "bar"), *env)]
    if mode:
        ex["interactiveMode"] = mode
    return {"exec": {**ex, **more}}


def authorization(conn: Connection) -> str | None:
    return dict(conn.headers).get("Authorization")


def via_kubernetes_client(path, context=None):
    """(host, Authorization, CA, client cert, client key) as the kubernetes Python client loads the file."""
    from kubernetes import config

    c = config.new_client_from_config(config_file=path, context=context, persist_config=False).configuration

    def read(p):
        with open(p, "rb") as f:
            return f.read()

    files = [read(p) if p else None for p in (c.ssl_ca_cert, c.cert_file, c.key_file)]
    return (c.host, c.api_key.get("BearerToken"), *files)


def ours(conn: Connection):
    return conn.server, authorization(conn), conn.ca_pem, conn.client_cert_pem, conn.client_key_pem


def test_embedded_data_token_and_cluster_fields(tmp_path):
    cluster = {"server": "https://10.0.0.1:6443/", "certificate-authority-data": b64(CA), "tls-server-name": "api"}
    cluster["proxy-url"] = "http://proxy:3128"
    user = {"client-certificate-data": b64(CERT), "client-key-data": b64(KEY), "token": "abc"}
    path = kubeconfig(tmp_path / "config", cluster, user, {"namespace": "team"})
    conn = load_connection(path, None)
    creds = StaticCredentials(Creds("Bearer abc", CERT, KEY))
    assert conn == Connection(
        "https://10.0.0.1:6443", "team", CA, False, "api", creds, (), "http://proxy:3128", "c",
    )  # fmt: skip
    assert ours(conn) == via_kubernetes_client(path)


def test_paths_relative_to_the_kubeconfig_directory(tmp_path, monkeypatch):
    (tmp_path / "kube" / "pki").mkdir(parents=True)
    for name, data in (("ca.crt", CA), ("client.crt", CERT), ("client.key", KEY)):
        (tmp_path / "kube" / "pki" / name).write_bytes(data)
    cluster = {"certificate-authority": "pki/ca.crt"}
    user = {"client-certificate": "pki/client.crt", "client-key": "./pki/../pki/client.key"}
    path = kubeconfig(tmp_path / "kube" / "config", cluster, user)
    monkeypatch.chdir(tmp_path)  # not the kubeconfig's directory
    conn = load_connection(path, None)
    assert (conn.ca_pem, conn.client_cert_pem, conn.client_key_pem, conn.headers) == (CA, CERT, KEY, ())
    assert ours(conn) == via_kubernetes_client(path)
    (tmp_path / "kube" / "pki" / "client.key").unlink()
    with pytest.raises(DraError, match=r'unable to read client-key ".*/kube/pki/client.key" for "u"'):
        load_connection(path, None)


def test_token_file_wins_over_token(tmp_path):
    (tmp_path / "token").write_text("from-file\n")
    path = kubeconfig(tmp_path / "config", user={"token": "inline", "tokenFile": "token"})
    # client-go's transport reads tokenFile (trimmed) even when token is set; the kubernetes client prefers `token`.
    assert authorization(load_connection(path, None)) == "Bearer from-file"
    (tmp_path / "token").unlink()  # unreadable: client-go's file token source falls back to `token`
    assert authorization(load_connection(path, None)) == "Bearer inline"
    path = kubeconfig(tmp_path / "config", user={"tokenFile": "token"})
    with pytest.raises(DraError, match='failed to read token file ".*token"'):
        load_connection(path, None)


def test_basic_auth_and_impersonation(tmp_path):
    user = {"username": "admin", "password": "s3cret", "as": "jane", "as-groups": ["dev", "ops"], "as-uid": "42"}
    user["as-user-extra"] = {"scopes": ["a", "b"], "my key%": ["v"]}
    conn = load_connection(kubeconfig(tmp_path / "config", user=user), None)
    assert conn.headers == (
        ("Authorization", "Basic " + b64(b"admin:s3cret")),
        ("Impersonate-User", "jane"),
        ("Impersonate-Uid", "42"),
        ("Impersonate-Group", "dev"),
        ("Impersonate-Group", "ops"),
        ("Impersonate-Extra-Scopes", "a"),
        ("Impersonate-Extra-Scopes", "b"),
        ("Impersonate-Extra-My%20key%25", "v"),  # headerKeyEscape, then Go's canonical header name
    )
    bad = {"token": "t", "username": "admin"}
    with pytest.raises(DraError, match=r'more than one authentication method found for "u"'):
        load_connection(kubeconfig(tmp_path / "config", user=bad), None)
    with pytest.raises(DraError, match="without impersonating a user"):
        load_connection(kubeconfig(tmp_path / "config", user={"as-groups": ["dev"]}), None)


def test_plain_http_server_gets_no_credentials(tmp_path):
    # client_config.go reads the auth information only for https; impersonation is set regardless.
    path = kubeconfig(tmp_path / "config", {"server": "http://127.0.0.1:8080"}, {"token": "t", "as": "jane"})
    conn = load_connection(path, None)
    assert (conn.server, conn.headers) == ("http://127.0.0.1:8080", (("Impersonate-User", "jane"),))


def test_context_selection(tmp_path):
    path = kubeconfig(
        tmp_path / "config",
        user={"token": "t1"},
        extra={
            "contexts": [
                {"name": "c", "context": {"cluster": "k", "user": "u"}},
                {"name": "other", "context": {"cluster": "k", "user": "u2", "namespace": "ns2"}},
            ],
            "users": [{"name": "u", "user": {"token": "t1"}}, {"name": "u2", "user": {"token": "t2"}}],
        },
    )
    assert (load_connection(path, None).context, load_connection(path, None).namespace) == ("c", "default")
    conn = load_connection(path, "other")
    assert (conn.context, conn.namespace, authorization(conn)) == ("other", "ns2", "Bearer t2")
    with pytest.raises(DraError, match='^context "nope" does not exist$'):
        load_connection(path, "nope")
    no_current = kubeconfig(tmp_path / "none", extra={"current-context": ""})
    with pytest.raises(DraError, match="no context chosen.*--context"):
        load_connection(no_current, None)


@pytest.mark.parametrize(
    ("context", "cluster", "message"),
    [
        ({"cluster": "ghost"}, {}, 'cluster "ghost" was not found for context "c"'),
        ({"user": "ghost"}, {}, 'user "ghost" was not found for context "c"'),
        ({}, {"server": ""}, 'no server found for cluster "k"'),
        ({}, {"certificate-authority-data": b64(CA), "certificate-authority": "ca.pem"}, "both specified for"),
        ({}, {"proxy-url": "ftp://proxy"}, "invalid 'proxy-url'"),
    ],
)
def test_unusable_context(tmp_path, context, cluster, message):
    with pytest.raises(DraError, match=message):
        load_connection(kubeconfig(tmp_path / "config", cluster, {"token": "t"}, context), None)


def test_context_without_user_is_anonymous(tmp_path):
    path = kubeconfig(tmp_path / "config", context={"user": ""})
    assert load_connection(path, None).headers == ()


def test_no_configuration(tmp_path, monkeypatch):
    with pytest.raises(DraError, match="no configuration has been provided.*--kubeconfig"):
        load_connection(None, None)
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'}")
    with pytest.raises(DraError, match="no configuration has been provided"):
        load_connection(None, None)
    missing = str(tmp_path / "missing")
    with pytest.raises(DraError, match=f"^kubeconfig not found: {missing}$"):
        load_connection(missing, None)
    home = kubeconfig(tmp_path / "home" / ".kube" / "config", user={"token": "home"})
    monkeypatch.delenv("KUBECONFIG")
    assert authorization(load_connection(None, None)) == "Bearer home"
    assert load_connection(home, None).server == "https://10.0.0.1:6443"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("clusters: [\n  - name: k\n    cluster: {server: x\n", "yaml: line"),
        ("clusters: 5\n", "clusters: expected a list"),
        ("clusters: [{name: k, cluster: {server: 12}}]\n", "clusters.cluster.server: expected a string"),
        ("clusters: [{name: k, cluster: {certificate-authority-data: 'Q0E'}}]\n", "illegal base64"),
        ("- a\n- b\n", "a kubeconfig is a YAML mapping"),
        ("users: [{name: u}, {name: u}]\n", 'duplicate name "u" in users'),
        ("kind: Pod\n", 'no kind "Pod"'),
    ],
)
def test_invalid_file_is_a_one_line_error(tmp_path, text, message):
    (tmp_path / "config").write_text(text)
    with pytest.raises(DraError) as e:
        load_connection(str(tmp_path / "config"), None)
    assert e.value.message.startswith(f'error loading config file "{tmp_path / "config"}": ')
    assert message in e.value.message and "\n" not in e.value.message


def test_kubeconfig_list_merges_first_wins(tmp_path, monkeypatch):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    (tmp_path / "one" / "ca.pem").write_bytes(b"ONE")
    (tmp_path / "two" / "ca.pem").write_bytes(b"TWO")
    first = kubeconfig(
        tmp_path / "one" / "config", {"server": "https://one", "certificate-authority": "ca.pem"},
        {"token": "t-one"}, {"namespace": "from-one"}, {"current-context": ""},
    )  # fmt: skip
    second = kubeconfig(
        tmp_path / "two" / "config", {"server": "https://two"}, {"token": "t-two"}, None,
        {
            "current-context": "d",
            "contexts": [
                {"name": "c", "context": {"cluster": "k", "user": "u", "namespace": "from-two"}},
                {"name": "d", "context": {"cluster": "k2", "user": "u"}},
            ],
            "clusters": [
                {"name": "k", "cluster": {"server": "https://two"}},
                {"name": "k2", "cluster": {"server": "https://two-b", "certificate-authority": "ca.pem"}},
            ],
        },
    )  # fmt: skip
    third = tmp_path / "third"
    third.write_text("current-context: c\n")
    empty = tmp_path / "empty"
    empty.write_text("")
    files = [str(tmp_path / "missing"), "", str(empty), first, second, str(third)]
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join(files))
    conn = load_connection(None, None)  # current-context "d": the second file is the first to set it
    assert (conn.context, conn.server, conn.ca_pem) == ("d", "https://two-b", b"TWO")
    assert authorization(conn) == "Bearer t-one"
    conn = load_connection(None, "c")  # the first file's "c", "k" and "u"
    assert (conn.server, conn.ca_pem, conn.namespace) == ("https://one", b"ONE", "from-one")
    assert authorization(conn) == "Bearer t-one"


def test_exec_v1_receives_env_args_and_cluster_info(tmp_path, monkeypatch):
    plugin(tmp_path)
    monkeypatch.setattr(os, "isatty", lambda fd: False)
    ext = [{"name": "client.authentication.k8s.io/exec", "extension": {"audience": "api"}}]
    cluster = {"server": "https://10.0.0.1:6443/base", "certificate-authority-data": b64(CA), "tls-server-name": "api"}
    user = exec_user(provideClusterInfo=True)
    conn = load_connection(kubeconfig(tmp_path / "config", {**cluster, "extensions": ext}, user), None)
    got = json.loads(authorization(conn).removeprefix("Bearer "))
    assert (got["foo"], got["argv"]) == ("bar", ["a1", "a 2"])
    assert got["info"] == {
        "kind": "ExecCredential",
        "apiVersion": V1,
        "spec": {
            "cluster": {
                "server": "https://10.0.0.1:6443/base",
                "tls-server-name": "api",
                "certificate-authority-data": b64(CA),
                "config": {"audience": "api"},
            },
            "interactive": False,
        },
    }
    assert (conn.server, conn.ca_pem, conn.client_cert_pem) == ("https://10.0.0.1:6443/base", CA, None)


def test_exec_v1beta1_defaults_interactive_mode_and_returns_certificates(tmp_path, monkeypatch):
    plugin(tmp_path)
    monkeypatch.setattr(os, "isatty", lambda fd: False)
    conn = load_connection(kubeconfig(tmp_path / "config", user=exec_user(V1BETA1, mode=None)), None)
    got = json.loads(authorization(conn).removeprefix("Bearer "))
    assert got["info"] == {"kind": "ExecCredential", "apiVersion": V1BETA1, "spec": {"interactive": False}}
    conn = load_connection(kubeconfig(tmp_path / "config", user=exec_user(env=[("MODE", "cert")])), None)
    assert (conn.client_cert_pem, conn.client_key_pem, authorization(conn)) == (CERT, KEY, None)
    with pytest.raises(DraError, match='interactiveMode must be specified for "u"'):  # v1 has no default
        load_connection(kubeconfig(tmp_path / "config", user=exec_user(mode=None)), None)


def test_exec_token_same_as_kubernetes_client(tmp_path, monkeypatch):
    plugin(tmp_path)
    monkeypatch.chdir("/")
    path = kubeconfig(tmp_path / "config", {"certificate-authority-data": b64(CA)}, exec_user(env=[("MODE", "token")]))
    conn = load_connection(path, None)
    assert authorization(conn) == "Bearer exec-bar"
    assert ours(conn) == via_kubernetes_client(path)


def test_exec_not_run_when_the_user_has_a_token(tmp_path):
    plugin(tmp_path)  # exec.go UpdateTransportConfig: a token, basic auth or a client certificate comes first
    user = {**exec_user(env=[("MODE", "fail")]), "token": "static"}
    assert authorization(load_connection(kubeconfig(tmp_path / "config", user=user), None)) == "Bearer static"


@pytest.mark.parametrize(
    ("user", "message"),
    [
        (exec_user(env=[("MODE", "fail")]), r'executable ".*/plugin.py" failed with exit code 3'),
        (exec_user(env=[("OUT_VERSION", V1BETA1)]), f"configured to use API version {V1}, plugin returned version"),
        (exec_user(V1.replace("v1", "v1alpha1")), f'invalid apiVersion "{V1}alpha1"'),
        (exec_user(mode="Always"), "cannot support interactive mode"),
        (
            exec_user(command="kubectl-dra-no-such-plugin", installHint="Install it with:\n  brew install x"),
            r'executable "kubectl-dra-no-such-plugin" not found \(Install it with:\)$',
        ),
        (exec_user(command=""), 'command must be specified for "u"'),
    ],
)
def test_exec_failures(tmp_path, monkeypatch, user, message):
    plugin(tmp_path)
    monkeypatch.setattr(os, "isatty", lambda fd: False)
    with pytest.raises(DraError, match=message) as e:
        load_connection(kubeconfig(tmp_path / "config", user=user), None)
    assert "\n" not in e.value.message


def test_oidc_auth_provider_through_the_kubernetes_client(tmp_path):
    def part(d):
        return base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()

    # unexpired: the kubernetes client uses the id-token as it is and asks the issuer nothing
    token = f"{part({'alg': 'none'})}.{part({'exp': int(time.time()) + 3600, 'sub': 'jane'})}.c2ln"
    config = {"client-id": "kubectl", "idp-issuer-url": "https://issuer.invalid", "id-token": token}
    user = {"auth-provider": {"name": "oidc", "config": config}, "as": "bob"}
    path = kubeconfig(tmp_path / "config", {"certificate-authority-data": b64(CA)}, user)
    conn = load_connection(path, None)
    assert conn.headers == (("Authorization", f"Bearer {token}"), ("Impersonate-User", "bob"))
    assert conn.ca_pem == CA


def test_kubernetes_package_not_imported(tmp_path):
    path = kubeconfig(tmp_path / "config", user={"token": "t"})
    code = (
        "import sys; from kubectl_dra.gather.kubeconfig import load_connection; "
        f"c = load_connection({path!r}, None); print(c.headers[0][1], 'kubernetes' in sys.modules)"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root).stdout
    assert out.split() == ["Bearer", "t", "False"]


def test_a_repeated_top_level_key_is_read_as_kubectl_reads_it(tmp_path):
    """Input dumps refuse a repeated root key (outputs joined without `---`, yamlio/joined.py); a kubeconfig keeps
    the last as clientcmd does, so a hand-merged file that kubectl accepts works here too."""
    path = tmp_path / "config"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: old\ncurrent-context: c\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
        "clusters: [{name: k, cluster: {server: 'https://10.0.0.9:6443'}}]\nusers: [{name: u, user: {}}]\n"
    )
    assert load_connection(str(path), None).server == "https://10.0.0.9:6443"
