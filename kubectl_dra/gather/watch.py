"""-w/--watch: after the gather's lists, one watch per list from its resourceVersion (with bookmarks), applied to an
in-memory copy of each list; a 410 Gone (the resourceVersion is too old) relists that one resource. The command
re-evaluates a fresh snapshot of the copies when something changed, never by re-listing the world on a timer.

Reads only: GET with watch=1, as `kubectl get -w` does."""

from __future__ import annotations

import random
import sys
import threading
import time
from urllib.parse import urlencode

from kubectl_dra import jsonio
from kubectl_dra.errors import DraError
from kubectl_dra.gather.assemble import live_snapshot
from kubectl_dra.gather.client import Unauthorized, _api_message

WATCH_SECONDS = (240, 480)  # the server ends each watch after a random time in this range, as client-go asks
MAX_BACKOFF = 30.0


def _key(obj: dict) -> tuple:
    m = obj.get("metadata") or {}
    return (m.get("namespace") or "", m.get("name") or "", m.get("uid") or "")


class _Source:
    """One watched list: the current objects by key and the resourceVersion the next watch starts from."""

    def __init__(self, record):
        self.path, self.kind, self.api_version = record.path, record.kind, record.api_version
        self.query = dict(record.query)
        self.rv = record.rv
        self.objects = {_key(o): o for o in record.items}
        self.relists = 0


class LiveSession:
    """The watched state of a live gather. snapshot() is the current state as a Snapshot; start() begins the
    watches; wait_for_change() blocks until an object changed (or a relist happened), and raises the Unauthorized
    that ends the session: the server refused the credentials even after they were refreshed (each request
    carries the credentials current when it is sent, gather/credentials.py), and retrying could only freeze the
    view."""

    def __init__(self, client, records, static: list[dict], meta: dict):
        self.client = client
        self.sources = [_Source(r) for r in records]
        if client is not None:
            client.record = None  # the lists' records are the sources now (kept, they would hold what is replaced)
        self.static = static
        self.meta = meta
        self.lock = threading.Lock()
        self.changed = threading.Event()
        self.warned: set = set()
        self.stopped = False
        self.failed: DraError | None = None
        self.checked: dict = {}  # id -> object whose shape the last snapshot checked
        self.interruptions = 0  # watches and relists that failed and were retried (the exporter counts them)
        self.down: dict = {}  # path -> monotonic time its watch first failed, while it has not watched again

    def snapshot(self):
        with self.lock:
            objs = list(self.static) + [o for s in self.sources for o in s.objects.values()]
        # the objects the last snapshot checked that are still here are not checked again (only what changed)
        checked = {id(o): o for o in objs if self.checked.get(id(o)) is o}
        snap = live_snapshot(objs, self.meta, checked)
        self.checked = checked
        return snap

    def start(self) -> None:
        for s in self.sources:
            threading.Thread(target=self._run, args=(s,), daemon=True, name=f"watch {s.kind}").start()

    def wait_for_change(self, settle: float = 0.3, poll: float = 0.5) -> None:
        """Until a change, then until changes have been quiet for `settle` seconds (a burst is one update)."""
        while not self.changed.wait(poll):
            pass
        while True:
            self.changed.clear()
            if self.failed is not None:
                raise self.failed
            if not self.changed.wait(settle):
                return

    def _fail(self, e: DraError) -> None:
        self.failed = self.failed or e
        self.stopped = True
        self.changed.set()

    # -- one watch per source ------------------------------------------------------------------
    def _run(self, s: _Source) -> None:
        backoff = 1.0
        while not self.stopped:
            try:
                self._watch_once(s)
                backoff = 1.0
            except _Gone:
                self._relist(s)
            except Unauthorized as e:
                self._fail(e)
            except Exception as e:  # connection reset, timeout, a 5xx: retry from the last resourceVersion
                self._interrupted(s)
                self._warn(s, f"watch of {s.kind} interrupted ({_one_line(e)}); retrying")
                time.sleep(backoff * (0.5 + random.random() / 2))
                backoff = min(MAX_BACKOFF, backoff * 2)

    def _watch_once(self, s: _Source) -> None:
        q = dict(s.query, watch="1", allowWatchBookmarks="true", timeoutSeconds=str(random.randint(*WATCH_SECONDS)))
        if s.rv:
            q["resourceVersion"] = s.rv
        raw = self.client.request(s.path + "?" + urlencode(q), 10, WATCH_SECONDS[1] + 60)
        try:
            status = int(raw.status or 200)
            if status == 410:
                raise _Gone()
            if status == 401:
                raise Unauthorized(_api_message(raw.read(4096), raw.reason))
            if status >= 400:
                body = raw.read(300)
                raise DraError(f"the server answered {status}: {body!r}")
            self.warned.discard(s.path)  # watching again: the next interruption is worth a warning too
            self.down.pop(s.path, None)
            buf = b""
            for chunk in raw.stream(65536, decode_content=True):
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        self._apply(s, jsonio.loads(line))
        finally:
            raw.release_conn()

    def _apply(self, s: _Source, ev: dict) -> None:
        typ, obj = ev.get("type"), ev.get("object") or {}
        if typ == "ERROR":
            if obj.get("code") == 410:
                raise _Gone()
            raise DraError(f"watch error: {obj.get('message') or obj}")
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if typ == "BOOKMARK":
            s.rv = rv or s.rv
            return
        obj.setdefault("kind", s.kind)
        obj.setdefault("apiVersion", s.api_version)
        with self.lock:
            if typ == "DELETED":
                s.objects.pop(_key(obj), None)
            elif typ in ("ADDED", "MODIFIED"):
                s.objects[_key(obj)] = obj
            s.rv = rv or s.rv
        self.changed.set()

    def _relist(self, s: _Source) -> None:
        """410 Gone: the resourceVersion is older than the server keeps; list again (without recording). Events
        have no watch cache in the API server (so no bookmarks): their watch is relisted after each etcd
        compaction. An object the list gives at the resourceVersion held already is the one held (page by page):
        the copy just decoded goes at once, so a relist costs a page, not a second copy of the list, and what
        the answers remember of the objects (runtime.IdMemo) stays valid."""
        rv: list = []
        held = s.objects  # (this thread is the only one that replaces or changes it)

        def keep(page: list) -> None:
            for i, o in enumerate(page):
                prev = held.get(_key(o))
                if prev is not None and _version(prev) and _version(prev) == _version(o):
                    page[i] = prev

        try:
            items = self.client.list(s.path, s.kind, s.api_version, s.query or None, rv_out=rv, each_page=keep)
        except Unauthorized as e:
            self._fail(e)
            return
        except Exception as e:
            self._interrupted(s)
            self._warn(s, f"relist of {s.kind} failed ({_one_line(e)}); retrying")
            time.sleep(1.0)
            return
        with self.lock:
            s.objects = {_key(o): o for o in items}
            s.rv = rv[0] if rv else ""
            s.relists += 1
        self.changed.set()

    def _interrupted(self, s: _Source) -> None:
        self.interruptions += 1
        self.down.setdefault(s.path, time.monotonic())

    def behind_since(self) -> float | None:
        """The monotonic time since which some watch has not been streaming (the view may be behind the
        cluster), None while every one is."""
        return min(list(self.down.values()), default=None)

    def _warn(self, s: _Source, text: str) -> None:
        if s.path not in self.warned:  # once per source until it works again
            self.warned.add(s.path)
            sys.stderr.write(f"warning: {text}\n")
            sys.stderr.flush()


def _version(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("resourceVersion") or ""


class _Gone(Exception):
    pass


def _one_line(e: Exception) -> str:
    text = getattr(e, "message", None) or str(e) or type(e).__name__
    return " ".join(str(text).split())[:200]
