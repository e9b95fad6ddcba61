"""`status -A -w --metrics-bind-address HOST:PORT`: Prometheus metrics of the watched answer over HTTP, written by
prometheus-client (imported here only, so no other command pays for it). /metrics the metrics, /healthz the process
(200 while it serves), /readyz the answer (200 once the first answer is done, while the last one did not fail and
the watched view is not behind the cluster for more than STALE_AFTER seconds; 503 with the reason otherwise), as Kubernetes probes expect.

The values are analyze/reports/metrics.py's, from the answer's reports; this module adds the process's own: when
the last answer was made and how long it took, how long the view has been behind, the errors and the API retries."""

from __future__ import annotations

import socket
import sys
import threading
import time
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from kubectl_dra import __version__
from kubectl_dra.errors import DraError

STALE_AFTER = 120.0  # seconds a watch may be down before /readyz says the answer is stale
ERROR_KINDS = ("answer", "watch")  # an answer that could not be made; a watch or relist that failed (retried)


def parse_bind_address(text: str) -> tuple[str, int]:
    """HOST:PORT as Kubernetes components take --metrics-bind-address: [::1]:8080 for IPv6, :8080 (or
    0.0.0.0:8080) every IPv4 interface, [::]:8080 every interface; port 0 picks a free one."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise DraError(f"invalid --metrics-bind-address {text!r}: use HOST:PORT, e.g. 0.0.0.0:8080 or [::]:8080")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise DraError(f"invalid --metrics-bind-address {text!r}: an IPv6 address goes in brackets ([::1]:8080)")
    return host or "0.0.0.0", int(port)


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args) -> None:  # a scrape every 30 s is not worth a log line
        pass


class Exporter:
    """The metrics of the answers status -w makes (observe() after each), served until the process ends."""

    def __init__(self, address: str, cluster: str | None, session):
        self.host, self.port = parse_bind_address(address)
        self.cluster = cluster or None
        self.session = session
        self.families: tuple = ()
        self.answered_at: float | None = None  # wall time of the last answer
        self.took = 0.0
        self.answer_errors = 0
        self.last_failed = False  # the last answer could not be made: the metrics are an older answer's
        self.server = None
        self._latest: tuple | None = None  # (families, answered_at) of the last answer, set at once
        # The answer's families as exposition text, (families, text, answered_at): at 5,000 nodes they are 60,000
        # series, a second or more to write while the answers go on beside it. Writing them at every scrape took up
        # to Prometheus' default 10 s scrape timeout; writing them in the first scrape after each answer still did
        # under churn, where nearly every scrape finds a new answer (docs/performance.md). So a scrape serves the
        # text last written, at once, and a newer answer's text is written in the background for the next scrapes;
        # only the first scrape of all waits for one.
        # One writer thread, for the life of the process, writes the newest answer's text once a scrape has found
        # the text behind: with a thread per text (and a scrape's copy of text and own families joined), the
        # resident memory rose in steps over an hour's soak; with one, it is flat (docs/performance.md).
        self._rendered: tuple | None = None
        self._render_lock = threading.Lock()
        self._newer = threading.Condition(self._render_lock)  # a scrape found an answer newer than the text
        self._writer: threading.Thread | None = None
        self._served = threading.local()  # answered_at of the text this scrape serves (the Live collector's)

    # -- the answers ----------------------------------------------------------------------------
    def observe(self, snap, scan, sem, analysis=None) -> None:
        """The metrics of one answer: scan (the status report of every namespace) and the device inventory of
        the same snapshot (what `devices` computes; analysis: a fork of the scan's Analysis, to reuse)."""
        from kubectl_dra.analyze.reports.inventory import inventory
        from kubectl_dra.analyze.reports.metrics import answer_families

        start = time.monotonic()
        families = answer_families(scan, inventory(snap, sem, base=analysis))
        at = time.time()
        self.families, self._latest = families, (families, at)
        self.took, self.answered_at = time.monotonic() - start, at
        self.last_failed = False

    def failed(self) -> None:
        self.answer_errors += 1
        self.last_failed = True

    def readiness(self) -> str | None:
        """None when ready, else why not."""
        if self.answered_at is None:
            return "no answer yet" if not self.last_failed else "no answer yet: the first one failed"
        if self.last_failed:
            return 'stale: the last answer failed (kubectl_dra_errors_total{kind="answer"})'
        since = self.session.behind_since() if self.session is not None else None
        if since is not None and time.monotonic() - since > STALE_AFTER:
            return f"stale: a watch has been down for {time.monotonic() - since:.0f}s"
        return None

    # -- prometheus-client --------------------------------------------------------------------------
    def collect(self):
        """The Collector protocol: every family, with the constant cluster label when one is set."""
        yield from self._answer_metrics(self.families)
        yield from self._own_metrics()

    def _answer_metrics(self, families):
        yield from self._families((f.name, f.kind, f.help, f.labels, f.samples) for f in families)

    def _own_metrics(self):
        """The process's own families: read at each scrape (the staleness, the errors and retries so far)."""
        since = self.session.behind_since() if self.session is not None else None
        served = getattr(self._served, "at", self.answered_at)
        client = getattr(self.session, "client", None)
        own = (
            ("build_info", "gauge", "1, with the tool's version.", ("version",), (((__version__,), 1.0),)),
            ("last_answer_timestamp_seconds", "gauge", "Unix time of the answer whose series this scrape serves "
             "(absent before the first).", (), (((), served),) if served is not None else ()),
            ("answer_duration_seconds", "gauge", "Seconds the last answer's metrics took to compute.", (),
             (((), self.took),)),
            ("answer_stale_seconds", "gauge", "Seconds some watch has been down (the answer may be behind the "
             "cluster); 0 while every watch streams.", (), (((), time.monotonic() - since if since else 0.0),)),
            ("errors", "counter", "The tool's own errors: answer (an answer that could not be made), watch (a "
             "watch or relist that failed and was retried).", ("kind",),
             ((("answer",), self.answer_errors), (("watch",), getattr(self.session, "interruptions", 0)))),
            ("api_retries", "counter", "API requests sent again (429 or 5xx with Retry-After, a connection "
             "closed before the answer).", (), (((), getattr(client, "retries", 0)),)),
        )  # fmt: skip
        yield from self._families(own)

    def _families(self, rows):
        """rows: (name, kind, help, labels, samples: ((label values), value) ...) -> metric families, each with the
        cluster label first where one is set."""
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        from kubectl_dra.analyze.reports.metrics import PREFIX

        const = ("cluster",) if self.cluster else ()
        cv = (self.cluster,) if self.cluster else ()
        kinds = {"gauge": GaugeMetricFamily, "counter": CounterMetricFamily}
        for name, kind, text, labels, samples in rows:
            fam = kinds[kind](PREFIX + name, text, labels=[*const, *labels])
            for values, value in samples:
                fam.add_metric([*cv, *values], value)
            yield fam

    def _answer_text(self, write) -> tuple[bytes, float | None]:
        """The text of the last answer written (write(families) -> bytes), and when that answer was made; a newer
        answer is written by the writer thread meanwhile, for the next scrapes."""
        latest = self._latest
        if latest is None:
            return b"", None
        with self._render_lock:
            done = self._rendered
            if done is None:  # the first scrape: nothing written yet, it waits
                done = self._rendered = (latest[0], write(latest[0]), latest[1])
            elif done[0] is not latest[0]:
                if self._writer is None:
                    self._writer = threading.Thread(target=self._write_newer, args=(write,), daemon=True,
                                                    name="metrics-writer")  # fmt: skip
                    self._writer.start()
                self._newer.notify()
        return done[1], done[2]

    def _write_newer(self, write) -> None:
        """The writer thread: once a scrape has found the text behind the answers, write the newest answer's, and
        again while newer ones arrive meanwhile."""
        while True:
            with self._render_lock:
                while self._rendered[0] is self._latest[0]:
                    self._newer.wait()
                families, at = self._latest
            try:
                text = write(families)
            except Exception:  # never seen; the next scrape that finds a newer answer starts another writer
                with self._render_lock:
                    self._writer = None
                raise
            with self._render_lock:
                self._rendered = (families, text, at)

    # -- HTTP -------------------------------------------------------------------------------------
    def start(self) -> None:
        """Bind and serve in a daemon thread; a one-line DraError when the address cannot be bound."""
        from prometheus_client import CollectorRegistry
        from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
        from prometheus_client.gc_collector import GCCollector
        from prometheus_client.platform_collector import PlatformCollector
        from prometheus_client.process_collector import ProcessCollector

        exporter = self

        class Live:  # read at each scrape: the process's own families and prometheus-client's
            def collect(self):
                return exporter._own_metrics()

        class Answer:  # written once per answer (answer_text)
            def __init__(self, families):
                self.families = families

            def collect(self):
                return exporter._answer_metrics(self.families)

        live = CollectorRegistry(auto_describe=False)
        live.register(Live())
        for collector in (ProcessCollector, PlatformCollector, GCCollector):
            collector(registry=live)

        def write(families) -> bytes:
            one = CollectorRegistry(auto_describe=False)
            one.register(Answer(families))
            return generate_latest(one)

        def app(environ, start_response):
            path = environ.get("PATH_INFO") or "/"
            if path == "/metrics":  # the text format 0.0.4, which every Prometheus reads
                text, self._served.at = self._answer_text(write)
                own = generate_latest(live)  # sent after the answer's text, never joined to it (megabytes copied)
                start_response("200 OK", [("Content-Type", CONTENT_TYPE_PLAIN_0_0_4),
                                          ("Content-Length", str(len(text) + len(own)))])  # fmt: skip
                return [text, own]
            if path in ("/healthz", "/livez"):
                status, body = "200 OK", "ok"
            elif path == "/readyz":
                why = self.readiness()
                status, body = ("200 OK", "ok") if why is None else ("503 Service Unavailable", why)
            else:
                status, body = "404 Not Found", "not found: /metrics, /healthz, /readyz"
            start_response(status, [("Content-Type", "text/plain; charset=utf-8")])
            return [body.encode() + b"\n"]

        try:
            family = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
            server_class = type("_Bound", (_Server,), {"address_family": family})
            self.server = server_class((self.host, self.port), _Quiet)
        except (OSError, UnicodeError) as e:
            raise DraError(f"cannot serve metrics on {self.host}:{self.port}: {e.strerror or e}") from None
        self.server.set_app(app)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True, name="metrics").start()
        host = f"[{self.host}]" if ":" in self.host else self.host
        sys.stderr.write(f"serving metrics on http://{host}:{self.port}/metrics\n")
        sys.stderr.flush()
