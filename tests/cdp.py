"""Headless Chromium driven over the Chrome DevTools Protocol, through a pipe.

No driver, no browser download, no port: Chromium's `--remote-debugging-pipe` reads
protocol messages (JSON, each ended by a NUL byte) on its file descriptor 3 and writes
replies and events on 4. Enough of the protocol for a page test: open a page, evaluate
JavaScript, type, click, take a screenshot, and list every request the page made.

    with Browser.start(tmp_path / "profile") as browser:
        page = browser.new_page()
        page.goto("http://127.0.0.1:7878/")
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The flags this machine's notes give for Chromium as root on a closed network; host names
# other than loopback resolve to nothing, so a request that would leave the machine fails
# at once (and is still listed by `Page.requests`).
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
    "--window-size=1280,900",
)


def chromium() -> str | None:
    """The Chromium executable (Debian's `chromium`), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class ProtocolError(RuntimeError):
    pass


class Browser:
    """One Chromium process and its protocol pipe."""

    def __init__(self, proc: subprocess.Popen, send_fd: int, recv_fd: int) -> None:
        self.proc, self._send_fd, self._recv_fd = proc, send_fd, recv_fd
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    @classmethod
    def start(cls, profile: Path, binary: str | None = None) -> Browser:
        binary = binary or chromium()
        if binary is None:
            raise FileNotFoundError("no chromium executable on PATH")
        to_browser_r, to_browser_w = (_high(fd) for fd in os.pipe())
        from_browser_r, from_browser_w = (_high(fd) for fd in os.pipe())

        def wire() -> None:  # in the child: the protocol's descriptors 3 and 4
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        proc = subprocess.Popen(
            [binary, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={profile}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,  # Python's own descriptors are close-on-exec; 3 and 4 stay open
            preexec_fn=wire,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        return cls(proc, to_browser_w, from_browser_r)

    def send(self, method: str, params: dict | None = None, *, session: str | None = None) -> dict:
        """Send a command and wait for its reply (events that arrive meanwhile are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._send_fd, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read(timeout=30)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise ProtocolError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def _read(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer within the time limit")
            chunk = os.read(self._recv_fd, 1 << 16)
            if not chunk:
                raise ProtocolError(f"Chromium exited (code {self.proc.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def new_page(self) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})
        page = Page(self, session["sessionId"])
        for domain in ("Page", "Network", "Runtime"):
            page.send(f"{domain}.enable")
        return page

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (ProtocolError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._send_fd, self._recv_fd):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    """One tab, attached to its own protocol session."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser, self.session = browser, session

    def send(self, method: str, params: dict | None = None) -> dict:
        return self.browser.send(method, params, session=self.session)

    def goto(self, url: str) -> None:
        self.send("Page.navigate", {"url": url})
        self.wait_for(
            f"location.href.startsWith({json.dumps(url)}) && document.readyState === 'complete'"
        )

    def evaluate(self, expression: str) -> Any:
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in reply:
            raise ProtocolError(f"{expression!r}: {reply['exceptionDetails'].get('text')}")
        return reply["result"].get("value")

    def wait_for(self, expression: str, *, timeout: float = 30) -> Any:
        """Poll until `expression` is truthy; its value."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.evaluate(expression)
            except ProtocolError:  # the page was navigating: its context went away
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"still false after {timeout:g} s: {expression}")
            time.sleep(0.1)

    def type(self, text: str) -> None:
        """Text typed at the focused element, as a keyboard would (IME-style insertion)."""
        self.send("Input.insertText", {"text": text})

    def key(self, key: str, code: str, key_code: int, *, modifiers: int = 0) -> None:
        for kind in ("rawKeyDown", "keyUp"):
            self.send(
                "Input.dispatchKeyEvent",
                {
                    "type": kind,
                    "key": key,
                    "code": code,
                    "windowsVirtualKeyCode": key_code,
                    "modifiers": modifiers,
                },
            )

    def click(self, selector: str) -> None:
        """A mouse click at the middle of the element `selector` picks."""
        box = self.wait_for(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return null; const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": box[0], "y": box[1], "button": "left", "clickCount": 1},
            )

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def requests(self, keep: Callable[[str], bool] = lambda url: True) -> list[str]:
        """The URL of every request this page sent, in order."""
        return [
            e["params"]["request"]["url"]
            for e in self.browser.events
            if e.get("sessionId") == self.session
            and e.get("method") == "Network.requestWillBeSent"
            and keep(e["params"]["request"]["url"])
        ]


def _high(fd: int) -> int:
    """`fd` moved to a number above 4 (close-on-exec), so wiring 3 and 4 cannot clobber it."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved
