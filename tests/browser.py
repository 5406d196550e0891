"""Headless Chromium for the page tests, driven through the Chrome DevTools Protocol over a pipe.

The browser is the system's (Debian's ``chromium``, else ``chromium-browser`` or
``google-chrome`` on the PATH, or the file named by ``SYNDICATOR_CHROMIUM``),
started with ``--remote-debugging-pipe``: it reads commands on its file
descriptor 3 and writes replies and events on 4, each a JSON object ended by
a NUL byte (https://chromedevtools.github.io/devtools-protocol/). No
library, no port: nothing but the test process can talk to it.

Nothing reaches the internet. Pages are served by :func:`serve` on
127.0.0.1 (or opened as ``file:`` URLs); every request to any other place
is paused (the Fetch domain), recorded and refused, and the browser
resolves no host name (``--host-resolver-rules``), its background services
switched off. Pages keep their Content-Security-Policy: what it blocks
shows as a console error. Scripts run through ``Runtime.evaluate`` are the
test's own; the policy does not apply to them.
"""

from __future__ import annotations

import base64
import fcntl
import functools
import http.server
import json
import os
import select
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

#: Names of a Chromium on the PATH, tried in order (Debian, Ubuntu, Google's build).
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Seconds any one command or event may take before the test fails.
TIMEOUT = 30.0
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
    # No name resolves: should a request slip past the Fetch domain, it fails here instead of leaving.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)


def find_chromium() -> str | None:
    """The path of a Chromium to run (``SYNDICATOR_CHROMIUM``, else the first of :data:`NAMES` on the PATH)."""
    chosen = os.environ.get("SYNDICATOR_CHROMIUM")
    if chosen:
        return chosen
    return next(filter(None, map(shutil.which, NAMES)), None)


class BrowserError(Exception):
    """The browser answered a command with an error, or did not answer in time."""


@dataclass
class Page:
    """One tab: what its page printed and requested, and commands sent to it."""

    browser: Browser
    session: str
    target: str
    console: list[str] = field(default_factory=list)  # console errors, uncaught exceptions, policy violations
    requests: list[tuple[str, str]] = field(default_factory=list)  # (resource type, URL), every request
    refused: list[tuple[str, str]] = field(default_factory=list)  # (resource type, URL) elsewhere: never sent
    loaded: bool = False

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        return self.browser.send(method, params, self.session)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (a promise is awaited); its exception fails."""
        reply = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            raise BrowserError(details.get("exception", {}).get("description") or details.get("text"))
        return reply["result"].get("value")

    def goto(self, url: str) -> None:
        """Open ``url`` and wait until the page and its subresources (images, style sheets) loaded."""
        self.loaded = False
        reply = self.send("Page.navigate", url=url)
        if reply.get("errorText"):
            raise BrowserError(f"{url}: {reply['errorText']}")
        self.browser.wait(lambda: self.loaded)
        self.evaluate("document.fonts.ready.then(() => true)")

    def emulate(self, width: int, height: int = 800, dark: bool = False) -> None:
        """A viewport ``width`` x ``height`` CSS px (a phone's, with the viewport meta tag honoured, below
        600 px) and the colour scheme the page's ``prefers-color-scheme`` sees."""
        self.send(
            "Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=width < 600
        )
        self.send(
            "Emulation.setEmulatedMedia",
            media="screen",
            features=[{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}],
        )

    def screenshot(self, path: Path, width: int, dark: bool = False) -> Path:
        """Save the whole page as a PNG at ``path``: the viewport is made as tall as the page first, so
        that lazy images load, and put back to ``width`` x 800 after."""
        height = min(self.evaluate("document.documentElement.scrollHeight"), 16000)
        self.emulate(width, height, dark)
        self.evaluate(_IMAGES_LOADED)
        data = self.send(
            "Page.captureScreenshot", format="png", clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1}
        )["data"]
        path.write_bytes(base64.b64decode(data))
        self.emulate(width, dark=dark)
        return path

    def check(self, name: str) -> Any:
        """Run the function ``name`` of tests/page_checks.js in the page and return what it returns."""
        return self.evaluate(f"({CHECKS}).{name}()")

    def axe(self, source: str) -> list[dict[str, Any]]:
        """axe-core's violations on the page: each rule's id, impact, help and the elements it found."""
        if not self.evaluate("typeof axe !== 'undefined'"):
            self.evaluate(source + "\n;true")
        found = self.evaluate(
            "axe.run(document, {resultTypes: ['violations']}).then(result => result.violations"
            ".map(v => ({id: v.id, impact: v.impact, help: v.help,"
            " nodes: v.nodes.map(node => node.target.join(' '))})))"
        )
        return list(found)

    def press(self, key: str, code: str, key_code: int) -> None:
        """Press and release one key, as a keyboard would (``Tab``, ``Tab``, 9)."""
        for kind in ("rawKeyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", type=kind, key=key, code=code, windowsVirtualKeyCode=key_code)

    def event(self, method: str, params: dict[str, Any]) -> None:
        """Record an event of this page's session."""
        if method == "Page.loadEventFired":
            self.loaded = True
        elif method == "Network.requestWillBeSent":
            self.requests.append((params.get("type", ""), params["request"]["url"]))
        elif method == "Fetch.requestPaused":
            url, request = params["request"]["url"], {"requestId": params["requestId"]}
            if url.startswith(self.browser.allowed):
                self.browser.post("Fetch.continueRequest", request, self.session, reply=False)
            else:
                self.refused.append((params.get("resourceType", ""), url))
                self.browser.post(
                    "Fetch.failRequest", {**request, "errorReason": "BlockedByClient"}, self.session, reply=False
                )
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.console.append("exception: " + (details.get("exception", {}).get("description") or details["text"]))
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            words = (str(argument.get("value", argument.get("description"))) for argument in params["args"])
            self.console.append("console: " + " ".join(words))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            self.console.append(f"{entry['source']}: {entry['text']} {entry.get('url', '')}".rstrip())


#: A promise that settles when every image of the page has loaded or failed (after 10 s at most).
_IMAGES_LOADED = """Promise.race([new Promise(done => setTimeout(done, 10000)), Promise.all([...document.images]
    .map(image => image.decode().catch(() => null)))]).then(() => true)"""


def _without_faketime(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without libfaketime's preload: under a shifted clock (``.ci/run``) Chromium's many
    threads run some forty times slower through it, and the pages read no clock of their own."""
    env = {name: value for name, value in environ.items() if not name.startswith("FAKETIME")}
    preload = [lib for lib in env.get("LD_PRELOAD", "").split() if "faketime" not in lib]
    if preload:
        env["LD_PRELOAD"] = " ".join(preload)
    else:
        env.pop("LD_PRELOAD", None)
    return env


class Browser:
    """A headless Chromium process and the pipe to it; :func:`launch` starts and stops one."""

    def __init__(self, binary: str, profile: Path) -> None:
        #: URL prefixes pages may load from: file: URLs and the servers :func:`serve` started.
        self.allowed: tuple[str, ...] = ("file:",)
        commands_read, self._commands = os.pipe()
        self._replies, replies_write = os.pipe()
        # bash puts the browser's two pipe ends on the descriptors 3 and 4 the protocol expects, then becomes
        # the browser; from 10 up first, so that neither end already is 3 or 4.
        commands_read, replies_write = (_above_ten(fd) for fd in (commands_read, replies_write))
        script = f'exec "$0" "$@" 3<&{commands_read} 4>&{replies_write} {commands_read}<&- {replies_write}>&-'
        self.process = subprocess.Popen(
            ["bash", "-c", script, binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(commands_read, replies_write),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=_without_faketime(os.environ),
        )
        os.close(commands_read)
        os.close(replies_write)
        self._next = 0
        self._buffer = b""
        self._replies_by_id: dict[int, dict[str, Any]] = {}
        self._unwanted: set[int] = set()  # ids of commands whose replies nobody waits for
        self.pages: dict[str, Page] = {}
        try:
            self.version = self.send("Browser.getVersion", {})["product"]
        except BrowserError:
            self.close()
            raise

    def post(self, method: str, params: dict[str, Any], session: str | None = None, reply: bool = True) -> int:
        """Send a command without waiting for its reply (dropped when ``reply`` is False); returns its id."""
        self._next += 1
        if not reply:
            self._unwanted.add(self._next)
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._commands, data) :]
        return self._next

    def send(self, method: str, params: dict[str, Any], session: str | None = None) -> dict[str, Any]:
        """Send a command and return its result; an error reply raises :class:`BrowserError`."""
        number = self.post(method, params, session)
        self.wait(lambda: number in self._replies_by_id)
        reply = self._replies_by_id.pop(number)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error'].get('message')}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def wait(self, done: Callable[[], bool], timeout: float = TIMEOUT) -> None:
        """Read messages (recording events as they come) until ``done()`` is true."""
        deadline = time.monotonic() + timeout
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"no answer from the browser within {timeout} s")
            self._read(left)

    def _read(self, timeout: float) -> None:
        if b"\0" not in self._buffer:
            ready, _, _ = select.select([self._replies], [], [], timeout)
            if not ready:
                return
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise BrowserError(f"the browser exited (status {self.process.poll()})")
            self._buffer += chunk
        while b"\0" in self._buffer:
            raw, self._buffer = self._buffer.split(b"\0", 1)
            message = json.loads(raw)
            if message.get("id") in self._unwanted:
                self._unwanted.discard(message["id"])
            elif "id" in message:
                self._replies_by_id[message["id"]] = message
            elif message.get("sessionId") in self.pages:
                self.pages[message["sessionId"]].event(message["method"], message.get("params", {}))

    def new_page(self) -> Page:
        """A new tab that records console errors and requests, and refuses any request outside :attr:`allowed`."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = self.pages[session] = Page(self, session, target)
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.send(f"{domain}.enable")
        page.send("Fetch.enable", patterns=[{"urlPattern": "*"}])
        return page

    def close_page(self, page: Page) -> None:
        self.send("Target.closeTarget", {"targetId": page.target})
        self.pages.pop(page.session, None)

    def close(self) -> None:
        try:
            self.post("Browser.close", {})
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        finally:
            os.close(self._commands)
            os.close(self._replies)


def _above_ten(fd: int) -> int:
    """``fd`` moved to the lowest free descriptor from 10 up (the old one is closed)."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


#: Why the browser tests skip where no browser can be had.
NO_BROWSER = (
    "no headless Chromium: install one (apt-get install chromium) or name a Chrome or Chromium "
    "binary in SYNDICATOR_CHROMIUM"
)
#: The checks page_checks.js defines, one JavaScript expression; ``Page.check(name)`` runs one.
CHECKS = (Path(__file__).parent / "page_checks.js").read_text(encoding="utf-8")


def axe_source() -> str:
    """axe-core's axe.min.js: the file ``SYNDICATOR_AXE`` names, else the one the test extras install."""
    chosen = os.environ.get("SYNDICATOR_AXE")
    if chosen:
        return Path(chosen).read_text(encoding="utf-8")
    return (resources.files("axe_core_python") / "axe.min.js").read_text(encoding="utf-8")


@contextmanager
def launch(binary: str, profile: Path) -> Iterator[Browser]:
    """A running headless Chromium (``binary``) with its profile in ``profile``; stopped on exit."""
    browser = Browser(binary, profile)
    try:
        yield browser
    finally:
        browser.close()


class _Files(http.server.SimpleHTTPRequestHandler):
    """Serves a folder's files, as a web server serves a published planet, and logs nothing."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve(browser: Browser, folder: Path) -> Iterator[str]:
    """``folder`` served on 127.0.0.1 for the ``with`` block, its URL (``http://127.0.0.1:PORT/``) allowed to
    ``browser``'s pages; yields that URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Files, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    browser.allowed += (base,)
    try:
        yield base
    finally:
        browser.allowed = tuple(prefix for prefix in browser.allowed if prefix != base)
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def opened(browser: Browser, url: str, width: int, dark: bool = False) -> Iterator[Page]:
    """``url`` in a new tab ``width`` CSS px wide, in the light or dark colour scheme; the tab is closed on exit."""
    page = browser.new_page()
    try:
        page.emulate(width, dark=dark)
        page.goto(url)
        yield page
    finally:
        browser.close_page(page)
