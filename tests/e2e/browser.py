"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: the browser reads commands
on fd 3 and writes answers and events on fd 4, each a JSON message ended by a NUL byte), with the standard library
only: no WebDriver, no network port.

Why the protocol and not --dump-dom or --screenshot alone: the report's Content-Security-Policy forbids every script,
so a page cannot measure itself; Runtime.evaluate runs in the page from outside it (DevTools is not bound by the
page's CSP), which lets the test ask the layout engine for the elements wider than the viewport, read the DOM's
text and its <script> elements, and see every request the page made (Network.requestWillBeSent)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--remote-debugging-pipe",
)

# the elements wider than the viewport, as the layout engine places them (a scroll box's content is clipped by it:
# only what makes the page itself scroll sideways counts), and the page's own scroll width
OVERFLOW = """(() => {
  const vw = document.documentElement.clientWidth;
  const wide = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    let clipped = false;
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.overflowX !== 'visible' || s.display === 'none') { clipped = true; break; }
      if (p.tagName === 'DETAILS' && !p.open && el.tagName !== 'SUMMARY' && !el.closest('summary')) { clipped = true; break; }
    }
    if (!clipped && (r.right > vw + 1 || r.left < -1)) wide.push(el.tagName + ' ' + Math.round(r.left) + '..' + Math.round(r.right));
  }
  return JSON.stringify({viewport: vw, scrollWidth: document.documentElement.scrollWidth, wide: wide.slice(0, 20)});
})()"""


class Browser:
    """One headless Chromium with a fresh profile; page(url, width, height) opens a tab at that size."""

    def __init__(self, binary: str = "chromium"):
        self.profile = tempfile.mkdtemp(prefix="kubectl-dra-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def fds():  # in the child: fd 3 reads our commands, fd 4 writes the answers (dup'd first: a pipe may be 3)
            r, w = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        # close_fds=False: subprocess would close fds 3 and 4 after preexec_fn; every other descriptor of this
        # process is non-inheritable (closed at exec), as Python opens them
        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            preexec_fn=fds,
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError(f"chromium closed the pipe (exit {self.proc.poll()})")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            got = self._read(deadline)
            if got.get("id") == self._id:
                if "error" in got:
                    raise RuntimeError(f"{method}: {got['error']}")
                return got.get("result", {})
            self.events.append(got)

    def wait_event(self, method: str, session: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method and e.get("sessionId") == session:
                return self.events.pop(i)
        while True:
            got = self._read(deadline)
            if got.get("method") == method and got.get("sessionId") == session:
                return got
            self.events.append(got)

    def page(self, url: str, width: int, height: int, mobile: bool = False) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for m in ("Page.enable", "Network.enable", "Runtime.enable"):
            self.send(m, session=session)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
            session=session,
        )
        started = time.monotonic()
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session)
        return Page(self, session, time.monotonic() - started)

    def paint(self, url: str, width: int, height: int, timeout: float = 120) -> dict:
        """Open url in a new tab and return, in seconds from the navigation's start, when the page reached each of
        Chromium's lifecycle events (DOMContentLoaded, load, firstPaint, firstContentfulPaint, ...). The report's CSP
        forbids scripts and headless Chromium fills no PerformancePaintTiming entries, so the times come from
        Page.lifecycleEvent (the navigation's own, by its loaderId), whose timestamps share one clock with its "init"
        (the navigation's start)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        try:
            self.send("Page.enable", session=session)
            self.send("Page.setLifecycleEventsEnabled", {"enabled": True}, session=session)
            self.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                session=session,
            )
            loader = self.send("Page.navigate", {"url": url}, session=session)["loaderId"]
            seen: dict[str, float] = {}
            deadline = time.monotonic() + timeout
            while "firstContentfulPaint" not in seen or "load" not in seen:
                e = self.wait_event("Page.lifecycleEvent", session, timeout=max(0.1, deadline - time.monotonic()))
                if e["params"]["loaderId"] == loader:  # not about:blank's, which the tab opened with
                    seen.setdefault(e["params"]["name"], e["params"]["timestamp"])
            base = seen.get("init", min(seen.values()))
            return {name: t - base for name, t in seen.items()}
        finally:
            self.send("Target.closeTarget", {"targetId": target})


class Page:
    def __init__(self, browser: Browser, session: str, load_seconds: float):
        self.b, self.session, self.load_seconds = browser, session, load_seconds

    def eval(self, expression: str):
        got = self.b.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=self.session)
        return (got.get("result") or {}).get("value")

    def text(self) -> str:
        return self.eval("document.body.innerText")

    def overflow(self) -> dict:
        return json.loads(self.eval(OVERFLOW))

    def requests(self) -> list[str]:
        """Every URL the page asked for (its own file included)."""
        return [
            e["params"]["request"]["url"]
            for e in self.b.events
            if e.get("method") == "Network.requestWillBeSent" and e.get("sessionId") == self.session
        ]

    def console(self) -> list[str]:
        """What reached the console (a CSP violation report, a script that ran)."""
        return [
            json.dumps(e["params"])[:300]
            for e in self.b.events
            if e.get("sessionId") == self.session and e.get("method") in ("Runtime.consoleAPICalled",)
        ]

    def screenshot(self, path) -> bytes:
        data = base64.b64decode(self.b.send("Page.captureScreenshot", {"format": "png"}, session=self.session)["data"])
        with open(path, "wb") as fh:
            fh.write(data)
        return data


def ensure_chromium() -> str:
    """The chromium binary; installed with apt-get (Debian's package) when missing, as root or through sudo -n:
    CI's stage starts from a clean machine. A failure is the test's error, not a skip."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run([*sudo, "apt-get", "update"], check=True, env=env, capture_output=True)
    subprocess.run([*sudo, "apt-get", "install", "-y", "--no-install-recommends", "chromium"], check=True, env=env,
                   capture_output=True)  # fmt: skip
    found = shutil.which("chromium")
    if not found:
        raise RuntimeError("apt-get installed chromium, but no chromium binary is on PATH")
    return found


def png_size(data: bytes) -> tuple[int, int]:
    """A PNG's width and height (its IHDR chunk)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
