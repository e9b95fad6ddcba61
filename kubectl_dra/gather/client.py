"""The read-only REST client of a live gather: GETs to the server a kubeconfig names, retried as client-go retries a
read, each bounded by --request-timeout as a whole; lists paginated, the next page asked for as soon as the current
one's continue token has arrived (it leads the answer), so the server prepares it while the current page is still
being read and decoded."""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from kubectl_dra import jsonio
from kubectl_dra.errors import DraError

PAGE = 500


class _Forbidden(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class Unauthorized(DraError):
    """A 401 that refreshing the credentials did not cure."""

    def __init__(self, message: str):
        super().__init__(f"Unauthorized: the server rejected the credentials of this kubeconfig ({message})")


@dataclass
class ListRecord:
    """One list the gather made: where, and the resourceVersion its watch starts from."""

    path: str
    kind: str
    api_version: str
    query: dict
    rv: str
    items: list


class Client:
    """A minimal read-only REST client: GET only, JSON in, dicts out."""

    def __init__(self, kubeconfig: str | None, context: str | None, timeout: float | None, chunk_size: int = PAGE):
        from kubectl_dra.gather.kubeconfig import load_connection
        from kubectl_dra.gather.transport import request_headers

        self.conn = load_connection(kubeconfig, context)
        self.credentials = self.conn.credentials
        self.timeout = timeout
        self.chunk_size = chunk_size  # --chunk-size: a list's page (0: the whole list in one answer)
        self.host = self.conn.server
        self.headers = request_headers(self.conn)  # all but the Authorization, which each request adds
        self.pool = None
        self._pool_cert: tuple | None = None  # the client certificate (and key) the pool's connections present
        self._pool_lock = threading.Lock()
        self._pool_for(self.credentials.current())
        self.record: list | None = None  # with -w: every list made, for the watches that follow it (gather/watch.py)
        # on_page(kind, items): called with each page of a list as it is decoded, in the thread that lists
        self.on_page = None
        self.retries = 0  # GETs sent again (a 429/5xx with Retry-After, a connection closed): the exporter counts them
        self._retries_lock = threading.Lock()  # (pages are fetched in several threads)

    def request(self, url_path: str, connect: float | None, read: float | None):
        """One GET with the credentials current now, its answer unread (a urllib3 response: status, headers,
        stream, release_conn). A 401 refreshes them (an exec plugin runs again, a token file is read again) and,
        when that brings others, the GET goes once more with those: client-go's exec round-tripper refreshes
        after a 401 (maybeRefreshCreds) and the retry spares the command the failure."""
        creds = self.credentials.current()
        raw = self._send(url_path, connect, read, creds)
        if raw.status == 401 and self.credentials.refresh(creds):
            raw.drain_conn()
            raw.release_conn()
            raw = self._send(url_path, connect, read, self.credentials.current())
        return raw

    def _send(self, url_path: str, connect: float | None, read: float | None, creds):
        import urllib3

        headers = self.headers
        if creds.authorization:
            headers = self.headers.copy()
            headers["Authorization"] = creds.authorization
        return self._pool_for(creds).request(
            "GET",
            self.host + url_path,
            headers=headers,
            timeout=urllib3.Timeout(connect=connect, read=read),
            preload_content=False,
            redirect=False,
        )

    def _pool_for(self, creds):
        """The pool whose connections present creds' client certificate: a new one when an exec plugin has given
        another (client-go closes every connection when the certificate rotates; the ones still streaming a watch
        here end with it, authenticated already)."""
        cert = (creds.cert_pem, creds.key_pem)
        if cert != self._pool_cert:
            from kubectl_dra.gather.transport import open_pool

            with self._pool_lock:
                if cert != self._pool_cert:
                    old, self.pool = self.pool, open_pool(self.conn, creds)
                    self._pool_cert = cert
                    if old is not None:
                        old.clear()
        return self.pool

    def get(self, path: str, query: dict | None = None, gone_ok: bool = False, on_head=None, text: bool = False):
        """One GET, retried as client-go retries a read: a 429 or 5xx answer that says when to come back
        (Retry-After), and a connection reset or closed before the answer, up to MAX_RETRIES times within
        --request-timeout per attempt; anything else ends in one DraError naming the request. on_head(token), for a
        list page: called once the answer's continue token (None: none) has arrived, before the rest of it. text: the
        answer is text (pods/log), returned as a str, not JSON."""
        url_path = path + (("?" + urlencode(query)) if query else "")
        attempt = 0
        while True:
            try:
                return self._get_once(path, url_path, on_head, text)
            except _Gone as g:
                if gone_ok:
                    raise
                raise DraError(f"the server answered 410 Gone for GET {path}: {g}") from None
            except _Retry as r:
                attempt += 1
                with self._retries_lock:
                    self.retries += 1
                if attempt > MAX_RETRIES:
                    raise DraError(f"GET {path}: {r.why}; gave up after {attempt} attempts") from None
                time.sleep(min(r.wait, MAX_RETRY_WAIT))

    def _get_once(self, path: str, url_path: str, on_head=None, text: bool = False):
        deadline = time.monotonic() + self.timeout if self.timeout else None
        try:
            raw = self.request(url_path, self.timeout, self.timeout)
            status = int(raw.status or 200)
            data = _read_body(raw, deadline, path, self.timeout, on_head if status == 200 else None)
        except DraError:
            raise
        except Exception as e:  # urllib3 connection and timeout errors
            if _is_timeout(e):
                raise _timed_out(path, self.timeout) from None
            if _is_reset(e):
                raise _Retry(0.5, f"the connection was closed before the answer ({_first_line(e)})") from None
            raise DraError(f"unable to connect to the server at {self.host}: {_reason(e)}") from None
        if status >= 400:
            wait = _retry_after(raw, status)
            if wait is not None:
                raise _Retry(wait, f"the server answered {status}")
            msg = _api_message(data, raw.reason)
            if status in (403, 404):
                raise _Forbidden(status, msg)
            if status == 410:
                raise _Gone(msg)
            if status == 401:
                raise Unauthorized(msg)
            raise DraError(f"the server answered {status} for GET {path}: {msg}")
        if text:
            return data.decode("utf-8", "replace")
        try:
            return jsonio.loads(data)
        except (ValueError, TypeError):
            raise DraError(f"the server's answer to GET {path} is not JSON") from None

    def list(
        self,
        path: str,
        kind: str,
        api_version: str,
        query: dict | None = None,
        rv_out: list | None = None,
        each_page=None,
    ) -> list[dict]:
        """Every item of a (paginated) list; rv_out, when given, gets the list's resourceVersion. Pages are asked
        for in order, each as soon as its continue token is known (up to AHEAD in flight), and read in order.
        each_page(items): called with each page's items as it is decoded, which it may replace in place."""
        items: list[dict] = []
        rv = None
        limit = self.chunk_size
        with ThreadPoolExecutor(max_workers=AHEAD, thread_name_prefix="page") as pages:
            ahead = _Pages(self, pages, path, query, limit)
            while True:
                try:
                    page = ahead.next_page()
                except _Gone:
                    if ahead.index == 0 or not limit:
                        raise DraError(f"GET {path}: 410 Gone") from None
                    # The continue token expired (its resourceVersion was compacted): list again from the start,
                    # in one answer, as client-go's pager does (FullListIfExpired).
                    items, rv, limit = [], None, 0
                    ahead.abandon()
                    ahead = _Pages(self, pages, path, query, 0)
                    continue
                got = page.get("items") or []
                for it in got:
                    it.setdefault("kind", kind)
                    it.setdefault("apiVersion", api_version)
                if each_page is not None:
                    each_page(got)
                items.extend(got)
                if self.on_page is not None and got:
                    self.on_page(kind, got)
                if rv is None:
                    rv = (page.get("metadata") or {}).get("resourceVersion")  # every page: the first's snapshot
                if not ahead.follow((page.get("metadata") or {}).get("continue")):
                    break
        if rv_out is not None:
            rv_out.append(rv or "")
        if self.record is not None and kind != "Namespace":
            self.record.append(ListRecord(path, kind, api_version, dict(query or {}), rv or "", items))
        return items


AHEAD = 3  # pages of one list in flight at once


class _Pages:
    """The pages of one list: page i+1 is asked for once page i's continue token has arrived (its head), while page
    i is still being read; next_page() returns them in order. A token the decoded page does not confirm (never seen:
    the server writes the list's metadata before its items) is asked for again, in order."""

    def __init__(self, client: "Client", pool: ThreadPoolExecutor, path: str, query: dict | None, limit: int):
        self.client, self.pool, self.path, self.query, self.limit = client, pool, path, query, limit
        self.index = 0
        self.asked: dict[int, tuple[str | None, object]] = {}  # page index -> (its continue token, future)
        self.abandoned = False
        self._ask(0, None)

    def _ask(self, i: int, token: str | None) -> None:
        q = dict(self.query or {}, limit=self.limit) if self.limit else dict(self.query or {})
        if token:
            q["continue"] = token

        def on_head(next_token: str | None) -> None:
            if next_token and not self.abandoned and i + 1 not in self.asked:
                self._ask(i + 1, next_token)

        self.asked[i] = (token, self.pool.submit(self.client.get, self.path, q, True, on_head if self.limit else None))

    def next_page(self) -> dict:
        return self.asked[self.index][1].result()

    def follow(self, token: str | None) -> bool:
        """After page index: False at the end of the list; else page index+1 (asked for with this token)."""
        if not token:
            return False
        self.index += 1
        got = self.asked.get(self.index)
        if got is None or got[0] != token:
            self._ask(self.index, token)
        return True

    def abandon(self) -> None:
        self.abandoned = True


MAX_RETRIES = 10  # client-go's default for a request the server asked to retry
MAX_RETRY_WAIT = 10.0  # seconds; a Retry-After beyond it is shortened (the total stays bounded)


class _Retry(Exception):
    def __init__(self, wait: float, why: str):
        super().__init__(why)
        self.wait = wait
        self.why = why


class _Gone(Exception):
    pass


def _retry_after(raw, status: int) -> float | None:
    """client-go's checkWait: a 429 or 5xx with a Retry-After of whole seconds is retried after that long."""
    if status != 429 and not 500 <= status <= 599:
        return None
    value = (getattr(raw, "headers", None) or {}).get("Retry-After")
    try:
        return max(0.0, float(int(str(value).strip())))
    except (TypeError, ValueError):
        return None


def _read_body(raw, deadline: float | None, path: str, timeout: float | None, on_head=None) -> bytes:
    """The whole body, or a DraError once --request-timeout has passed since the request began (a body that
    trickles in never resets the clock: each read may wait only for what is left of it). on_head: see Client.get.

    The body is read from urllib3's http.client response underneath: the API server streams a list item by item,
    one HTTP chunk each, and urllib3's own read1 around it costs about as much again per chunk (0.14 s of CPU over
    the lists of the 5,000-node benchmark). A body with a Content-Encoding (none is asked for) goes through urllib3, which decodes it."""
    fp = getattr(raw, "_fp", None)
    sock = getattr(getattr(raw, "_connection", None), "sock", None)
    encoded = (raw.headers.get("Content-Encoding") or "identity").lower() != "identity"
    direct = fp is not None and sock is not None and not encoded and hasattr(fp, "read1")
    chunks = []
    head = b""
    done = False
    try:
        while True:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _timed_out(path, timeout)
                if direct:
                    sock.settimeout(left)
            # what has arrived, at most one HTTP chunk (each read waits at most once for the socket)
            chunk = fp.read1(1 << 16) if direct else raw.read1(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            if on_head is not None:
                head += chunk
                found, token = list_continue(head)
                if found or len(head) > HEAD_LIMIT:
                    on_head(token if found else None)
                    on_head, head = None, b""
        if direct:
            short = getattr(fp, "length", None)
            if short:  # the server closed the connection before the Content-Length it announced (urllib3: retried)
                raise http.client.IncompleteRead(b"", short)
            # A Content-Length body read to its end leaves http.client's response open (it closes a chunked one
            # itself); the connection can only serve the next request once it is closed.
            fp.close()
        done = True
    finally:
        if not done and direct:
            raw.close()  # a connection with part of an answer unread is never used again
        raw.release_conn()
    return b"".join(chunks)


HEAD_LIMIT = 1 << 16  # a list's metadata is at its start: past this many bytes, its continue token waits for the rest
_DECODER = json.JSONDecoder()


def list_continue(head: bytes) -> tuple[bool, str | None]:
    """From the first bytes of a list answer (`{"kind":..,"apiVersion":..,"metadata":{..},"items":[`, as the API
    server writes it), whether its metadata is complete, and its continue token. Only a metadata object that comes
    before any other field but kind and apiVersion, and is followed by "items" or the end, counts."""
    m = _LIST_HEAD.match(head)
    if m is None:
        return False, None
    text = head[m.end() :].decode("utf-8", "ignore")
    start = len(text) - len(text.lstrip())
    try:
        meta, end = _DECODER.raw_decode(text, start)
    except ValueError:
        return False, None
    if not isinstance(meta, dict) or not _AFTER_META.match(text, end):
        return False, None
    token = meta.get("continue")
    return True, token if isinstance(token, str) and token else None


_LIST_HEAD = re.compile(rb'\s*\{\s*(?:"(?:kind|apiVersion)"\s*:\s*"[^"\\]*"\s*,\s*)*"metadata"\s*:')
_AFTER_META = re.compile(r'\s*(?:,\s*"items"\s*:|\})')


def _is_timeout(e: Exception) -> bool:
    names = {type(x).__name__ for x in _chain(e)}
    return bool(names & {"ReadTimeoutError", "ConnectTimeoutError", "TimeoutError", "timeout", "SSLTimeoutError"})


def _is_reset(e: Exception) -> bool:
    names = {type(x).__name__ for x in _chain(e)}
    return bool(
        names & {"ProtocolError", "ConnectionResetError", "RemoteDisconnected", "IncompleteRead", "BrokenPipeError"}
    )


def _chain(e: BaseException):
    """The exception and what it wraps (urllib3's MaxRetryError.reason, causes, contexts)."""
    todo, seen = [e], set()
    while todo and len(seen) < 20:
        x = todo.pop()
        if x is None or id(x) in seen or not isinstance(x, BaseException):
            continue
        seen.add(id(x))
        yield x
        todo += [getattr(x, "reason", None), x.__cause__, x.__context__]
        todo += [a for a in getattr(x, "args", ()) if isinstance(a, BaseException)]


def _reason(e: Exception) -> str:
    """What failed under urllib3's wrappers: the TLS error, else the socket's ("Connection refused"), else the
    first line of the exception."""
    chain = list(_chain(e))
    for x in chain:
        if type(x).__name__.startswith("SSL") and isinstance(x, OSError):
            return _first_line(x)
    for x in chain:
        if isinstance(x, OSError) and type(x).__module__ in ("builtins", "socket") and x.strerror:
            return x.strerror
    return _first_line(e)


def _first_line(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def _timed_out(path: str, timeout: float | None) -> DraError:
    return DraError(f"GET {path}: no complete answer from the server within {_seconds(timeout)} (--request-timeout)")


def _seconds(t: float | None) -> str:
    return "forever" if not t else (f"{t:g}s" if t >= 1 else f"{t * 1000:g}ms")


def _api_message(body: bytes, reason: str | None) -> str:
    """The Status message of an error answer, else the HTTP reason."""
    if body:
        try:
            return str(json.loads(body).get("message") or reason or "").strip()
        except (ValueError, AttributeError, TypeError):
            pass
    return str(reason or "").strip()


# Only the names are read: the API server answers with each object's metadata alone (kubectl's own completion
# reads whole objects; an older server that does not know the form answers with the full list, read the same way)
_METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


def list_names(
    paths: tuple[str, ...],
    *,
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None = None,
    timeout: float,
) -> list[str]:
    """The names of one resource's objects, for shell completion (kubectl __complete lists them the same way).
    paths: the list's path, alternatives tried in order while the server answers 404 (a group version it does not
    serve), each with {ns} for the namespace: -n, else the kubeconfig context's. Sorted, unique. Never fails and never
    waits more than timeout seconds in all: no kubeconfig, a refusal, a server down or slow is no names (a shell
    completing a word shows nothing rather than an error)."""
    done: list[list[str]] = []

    def run() -> None:
        try:
            c = Client(kubeconfig, context, timeout, chunk_size=0)
            c.headers = c.headers.copy()
            c.headers["Accept"] = _METADATA_ONLY
            ns = namespace or c.conn.namespace
            for path in paths:
                try:
                    got = c.get(path.format(ns=quote(ns, safe="")))
                except _Forbidden as e:
                    if e.status == 404:
                        continue
                    break
                names = {((it.get("metadata") or {}).get("name")) for it in got.get("items") or []}
                done.append(sorted(n for n in names if isinstance(n, str) and n))
                break
        except Exception:  # a completion has no error to report: no kubeconfig, refused, down, garbage
            pass

    worker = threading.Thread(target=run, name="complete", daemon=True)
    worker.start()
    worker.join(timeout)
    return done[0] if done else []
