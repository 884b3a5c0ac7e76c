#!/usr/bin/env python3
"""`jobviz follow --serve` in headless Chromium, on logs growing while it
runs (this script appends each log's next slice every second):

- the page shows each step as it finishes (chart and status), and the report
  inside it is rewritten within --refresh + 1 s of the lines that finish a
  step, without a reload of the page;
- what the user did in the report stays: the time window they zoomed to,
  the machine they collapsed, the rows' scroll;
- two browsers at once see the same steps; a page that drops its event
  stream mid-update does not stop the others;
- the stall alarm shows on the page as a block of its own (no terminal
  prefixes), and "resumed after N s" takes its place;
- a machine's clock that jumps is noted on the page, naming that machine;
- no console error, no request but the server's three paths; any other
  path, ../ and percent-encoded ones included, is 404, and no file is opened;
- a port already taken is a usage error (exit 2).
Keeps OUT_DIR/follow_live.png. Exits 77 when chromium is missing.

  check_live.py JOBVIZ GEN_LOGS OUT_DIR
"""
import base64
import http.client
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

JOBVIZ, GEN_LOGS, OUT = sys.argv[1:4]
REFRESH = 1.0
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


TIMES = re.compile(rb"(job_start_time = |job_end_time = |time = )(\d+\.\d+)")


class Growing:
    """A finished run's logs, appended to DST a slice at a time; from slice `jump[2]` on, the times of the
    logs under `jump[0]` moved by `jump[1]` seconds (that machine's clock stepped)."""

    def __init__(self, src, dst, slices, jump=None):
        self.jump = jump
        self.files = []
        for root, _, names in os.walk(src):
            for name in sorted(names):
                rel = os.path.relpath(os.path.join(root, name), src)
                with open(os.path.join(src, rel), "rb") as f:
                    lines = f.read().splitlines(keepends=True)
                os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
                self.files.append((os.path.join(dst, rel), lines))
        self.slices, self.done = slices, 0

    def write_next(self, hang=None):
        for path, lines in self.files:
            if hang and path.endswith(hang):
                continue
            per = (len(lines) + self.slices - 1) // self.slices
            chunk = b"".join(lines[self.done * per:(self.done + 1) * per])
            if self.jump and f"/{self.jump[0]}/" in path and self.done >= self.jump[2]:
                chunk = TIMES.sub(lambda m: m.group(1) + b"%.6f" % (float(m.group(2)) + self.jump[1] * 1000), chunk)
            with open(path, "ab") as f:
                f.write(chunk)
        self.done += 1


def raw_status(port, path):
    """The status of a request for `path` exactly as written (no normalising)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest("GET", path, skip_host=False, skip_accept_encoding=True)
    conn.endheaders()
    status = conn.getresponse().status
    conn.close()
    return status


def report_state(page):
    return page.evaluate("""(() => { const r = jobvizLive.report().jobvizReport;
        const s = r.state(); return {t0: s.t0, t1: s.t1, origin: s.origin, atEnd: s.atEnd, collapsed: s.collapsed,
                                     scrollTop: s.scrollTop, jobs: r.jobCount}; })()""")


def main():
    if not cdp.find_chromium():
        print("chromium not found: skipped")
        sys.exit(cdp.SKIP)
    tmp = tempfile.mkdtemp(prefix="jobviz-live-")
    src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
    subprocess.run([GEN_LOGS, "--out", src, "--machines", "3", "--workers", "4", "--steps", "40", "--microbatches", "8",
                    "--sync_rounds", "3"], check=True, stdout=subprocess.DEVNULL)
    os.makedirs(dst)
    logs = Growing(src, dst, 10, jump=("machine1", 30, 3))
    logs.write_next()
    follow = subprocess.Popen([JOBVIZ, "follow", "--log_dir", dst, "--multi_machine", "--serve", "0", "--refresh",
                               str(REFRESH), "--poll", "0.2", "--stall-after", "3"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    port = None
    for line in follow.stderr:
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if m:
            port = int(m.group(1))
            break
    if not port:
        sys.exit("no 'live page is at' line from jobviz follow")
    taken = subprocess.run([JOBVIZ, "follow", "--log_dir", dst, "--serve", str(port)], capture_output=True, text=True)
    check(taken.returncode == 2 and "Address already in use" in taken.stderr, f"a taken port: exit {taken.returncode}: {taken.stderr}")
    for path in ("/../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/report/../../etc/passwd", "/etc/passwd",
                 "/..%2fetc%2fpasswd", "//etc/passwd", "/report%00.html", "/events/../report/x"):
        check(raw_status(port, path) == 404, f"{path}: not 404")

    try:
        browse(port, logs)
    finally:  # a failed check leaves no follow running
        if follow.poll() is None:
            follow.terminate()
    rc = follow.wait(timeout=30)
    check(rc == 0, f"jobviz follow exit {rc}")
    if failures:
        sys.exit(f"{len(failures)} failures")
    print("the live page checks passed")


def browse(port, logs):
    with cdp.Browser() as browser:
        page, other = browser.new_page(), browser.new_page()
        url = f"http://127.0.0.1:{port}/"
        page.navigate(url)
        other.navigate(url)
        page.wait_until("window.jobvizLive && jobvizLive.version() > 0 && jobvizLive.steps() > 0", timeout=20)
        # The user zooms into the report and collapses a machine.
        page.evaluate("""(() => { const w = jobvizLive.report(); const r = w.jobvizReport;
            const canvas = w.document.querySelector('canvas.body'); const box = canvas.getBoundingClientRect();
            for (let i = 0; i < 6; i++) canvas.dispatchEvent(new w.WheelEvent('wheel', {deltaY: -200, ctrlKey: true,
                clientX: box.left + box.width * 0.3, clientY: box.top + 10, bubbles: true, cancelable: true}));
            w.document.querySelector('#timeline .rows div.machine[data-group="1"]').click(); })()""")
        page.wait_until("jobvizLive.report().jobvizReport.collapsed() === 1")
        before = report_state(page)
        check(before["t1"] - before["t0"] > 0 and not before["atEnd"], f"the zoom did not take: {before}")
        version, steps = page.evaluate("jobvizLive.version()"), page.evaluate("jobvizLive.steps()")
        # A peer that opens the event stream and goes away mid-update.
        dropped = socket.create_connection(("127.0.0.1", port))
        dropped.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        dropped.recv(64)
        logs.write_next()
        written = time.monotonic()
        dropped.close()
        page.wait_until(f"jobvizLive.version() > {version} && jobvizLive.report().jobvizReport.jobCount > {before['jobs']}",
                        timeout=REFRESH + 1 + 5)
        took = time.monotonic() - written
        check(took <= REFRESH + 1, f"the report took {took:.2f} s to show appended lines (refresh {REFRESH} s)")
        after = report_state(page)
        shift = int(after["origin"]) - int(before["origin"])
        check(abs((after["t1"] - after["t0"]) - (before["t1"] - before["t0"])) < 1e3,
              f"the zoom was lost: {before['t1'] - before['t0']} ns wide, now {after['t1'] - after['t0']}")
        check(abs(after["t0"] + shift - before["t0"]) < 1e3, f"the window moved: {before} -> {after}")
        check(after["collapsed"] == before["collapsed"], f"collapsed machines: {before['collapsed']} -> {after['collapsed']}")
        # The steps come on their own events, from follow's step queue thread:
        # they may come a moment after the report that holds their jobs.
        try:
            page.wait_until(f"jobvizLive.steps() > {steps}", timeout=REFRESH + 5)
        except cdp.CdpError:
            check(False, f"the chart did not gain steps ({steps} before)")
        check(page.evaluate("performance.getEntriesByType('navigation').length") == 1, "the page reloaded")
        for _ in range(3):
            logs.write_next()
            time.sleep(1)
        page.wait_until(f"jobvizLive.steps() >= {steps + 3}", timeout=10)
        # machine1's clock stepped 30 s forward from the fourth slice: noted, naming it (and not its neighbours).
        notes = "document.getElementById('notes').textContent"
        page.wait_until(f"{notes}.includes('clock jumps')", timeout=10)
        check(re.fullmatch(r"machine1: its clock jumps 30\.00 s forward at \S+machine1/workerlog\.\d+:\d+ .*",
                           page.evaluate(notes)), "the page's clock note: " + page.evaluate(notes))
        other.wait_until(f"jobvizLive.steps() === {page.evaluate('jobvizLive.steps()')}", timeout=10)
        # One log stops: the alarm shows, then goes when lines come again.
        logs.write_next(hang="machine2/workerlog.3")
        page.wait_until("jobvizLive.alarm().includes('stalled')", timeout=15)
        check("machine2" in page.evaluate("jobvizLive.alarm()"), "the alarm does not name the stopped machine: " +
              page.evaluate("jobvizLive.alarm()"))
        check("jobviz: stopped:" not in page.evaluate("jobvizLive.alarm()"),
              "the page's alarm carries the terminal's prefixes: " + page.evaluate("jobvizLive.alarm()"))
        page.call("Page.bringToFront")
        shot = page.call("Page.captureScreenshot", format="png")["data"]
        with open(os.path.join(OUT, "follow_live.png"), "wb") as f:
            f.write(base64.b64decode(shot))
        logs.write_next()
        page.wait_until("jobvizLive.alarm().startsWith('resumed after')", timeout=10)
        urls = {u for u in page.requested_urls() + other.requested_urls()}
        strays = [u for u in urls if not re.match(rf"http://127\.0\.0\.1:{port}/(report\?v=\d+|events)?$", u)]
        check(not strays, f"requests outside the server's paths: {strays}")
        check(not page.problems() and not other.problems(), f"console: {page.problems() + other.problems()}")


main()
