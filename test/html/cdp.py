"""A headless Chromium driven over the Chrome DevTools Protocol, with the
standard library only: `--remote-debugging-pipe` reads commands from fd 3 and
writes replies and events to fd 4, each a JSON text ended by a NUL byte.

    with Browser() as browser:
        page = browser.new_page()
        page.call("Page.navigate", url="file:///...")
"""
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

SKIP = 77


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class CdpError(RuntimeError):
    pass


class Browser:
    def __init__(self, chromium=None, width=1400, height=900):
        self.chromium = chromium or find_chromium()
        self.width, self.height = width, height
        self.events = []  # (session, method, params), in arrival order
        self._next_id = 0
        self._buffer = b""

    def __enter__(self):
        self.profile = tempfile.mkdtemp(prefix="jobviz-chromium-")
        commands_read, self._commands = os.pipe()
        self._replies, replies_write = os.pipe()

        def child_fds():  # fds 3 and 4, whatever numbers the pipes got
            high_read = fcntl.fcntl(commands_read, fcntl.F_DUPFD_CLOEXEC, 10)
            high_write = fcntl.fcntl(replies_write, fcntl.F_DUPFD_CLOEXEC, 10)
            os.dup2(high_read, 3)  # inheritable; every other pipe end is close-on-exec
            os.dup2(high_write, 4)

        self.log = open(os.path.join(self.profile, "chromium.log"), "wb")
        # Offline and quiet: no sandbox (tests run as root in CI), no GPU, no
        # background traffic, a fresh profile.
        self.proc = subprocess.Popen(
            [self.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
             f"--user-data-dir={self.profile}", "--remote-debugging-pipe", "about:blank"],
            close_fds=False, preexec_fn=child_fds,
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        os.close(commands_read)
        os.close(replies_write)
        return self

    def __exit__(self, *exc):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._commands)
        os.close(self._replies)
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._replies], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise CdpError("chromium closed the DevTools pipe (see its log in " + self.profile + ")")
            self._buffer += chunk
        text, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(text)

    def pump(self, seconds):
        """Reads events for up to `seconds`."""
        deadline = time.monotonic() + seconds
        while True:
            message = self._read_message(deadline)
            if message is None:
                return
            self._file(message)

    def _file(self, message):
        if "method" in message:
            self.events.append((message.get("sessionId"), message["method"], message.get("params", {})))

    def call(self, method, session=None, timeout=30, **params):
        self._next_id += 1
        request = {"id": self._next_id, "method": method, "params": params}
        if session:
            request["sessionId"] = session
        os.write(self._commands, json.dumps(request).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            message = self._read_message(deadline)
            if message is None:
                raise CdpError(f"{method}: no reply in {timeout} s")
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise CdpError(f"{method}: {message['error']}")
                return message.get("result", {})
            self._file(message)

    def wait_for(self, predicate, timeout=30, what="an event", since=0):
        """The first event (session, method, params) from the `since`-th on
        that `predicate` accepts, among those seen so far and those to come."""
        deadline = time.monotonic() + timeout
        seen = since
        while True:
            for event in self.events[seen:]:
                if predicate(*event):
                    return event
            seen = len(self.events)
            if time.monotonic() >= deadline:
                raise CdpError(f"no {what} in {timeout} s")
            self.pump(min(0.2, max(deadline - time.monotonic(), 0.01)))

    def attach(self, target_id):
        return Page(self, self.call("Target.attachToTarget", targetId=target_id, flatten=True)["sessionId"])

    def new_page(self):
        page = self.attach(self.call("Target.createTarget", url="about:blank")["targetId"])
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.call(domain + ".enable")
        page.call("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)
        return page


class Page:
    def __init__(self, browser, session):
        self.browser, self.session = browser, session

    def call(self, method, timeout=30, **params):
        return self.browser.call(method, session=self.session, timeout=timeout, **params)

    def evaluate(self, expression, timeout=30):
        result = self.call("Runtime.evaluate", timeout=timeout, expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise CdpError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_until(self, expression, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() >= deadline:
                raise CdpError(f"{expression!r} stayed false for {timeout} s")
            self.browser.pump(0.1)

    def navigate(self, url, timeout=60):
        seen = len(self.browser.events)
        self.call("Page.navigate", url=url)
        self.browser.wait_for(lambda s, m, p: s == self.session and m == "Page.loadEventFired",
                              timeout=timeout, what="load event", since=seen)

    def mouse(self, kind, x, y, **extra):
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, **extra)

    def click(self, x, y):
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, button="left", clickCount=1)
        self.mouse("mouseReleased", x, y, button="left", clickCount=1)

    def key(self, key, code):
        self.call("Input.dispatchKeyEvent", type="keyDown", key=key, code=code, text=key if len(key) == 1 else "")
        self.call("Input.dispatchKeyEvent", type="keyUp", key=key, code=code)

    def problems(self):
        """Console errors, uncaught exceptions and error log entries (CSP
        violations among them) of this page so far."""
        out = []
        for session, method, params in self.browser.events:
            if session != self.session:
                continue
            if method == "Runtime.exceptionThrown":
                out.append("exception: " + json.dumps(params["exceptionDetails"])[:500])
            elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert", "warning"):
                out.append("console." + params["type"] + ": " + json.dumps(params["args"])[:500])
            elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
                out.append("log: " + params["entry"].get("text", "")[:500])
        return out

    def requested_urls(self):
        return [params["request"]["url"] for session, method, params in self.browser.events
                if session == self.session and method == "Network.requestWillBeSent"]
