#!/usr/bin/env python3
"""The --html report in a real browser: Debian's chromium, headless, loads
the page from file:// and this checks what it rendered.

  check_report.py JOBVIZ SOURCE_ROOT OUT_DIR

- every worker's row label, the legend, the bubble figure of --summary-json;
- no console error, exception or CSP report, and no request but the file;
- the canvas painted; hovering and clicking a job show its facts, and those
  are the log line's own (file:line, type, id, start to the nanosecond);
- Ctrl+wheel (or the wheel after a click into the timeline), keys and drag
  zoom and pan; a plain wheel before that leaves the timeline as it is;
- a machine's header collapses and expands its rows, as do "collapse all"
  and "expand all"; a collapsed machine shows a busy strip; the jump box
  brings a worker's row into sight by a partial name, highlighted; the
  critical-path control goes to a step's path; the glossary is on the page;
- the what-if switch draws every job at the replay's time and back, the
  view, rows and selection kept;
- the overview is painted and a click in it centres the view there;
- back-to-back jobs of one type keep a gap pixel between them; job labels
  lead with the type's initials and the micro-batch ("B3") or read in full;
- "Open in Perfetto" speaks Perfetto's postMessage protocol to a stand-in
  for ui.perfetto.dev (served by the DevTools Fetch domain: no network) and
  hands it the same packets `jobviz -o run.pftrace.gz` writes;
- above --html-max-jobs the page shows a window of whole steps and says so.
Keeps OUT_DIR/html_report.png. Exits 77 when chromium is missing.
"""
import base64
import calendar
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

# What the stand-in for ui.perfetto.dev does: answer PING with PONG, keep
# what it is sent.
FAKE_PERFETTO = b"""<!doctype html><title>stand-in for ui.perfetto.dev</title><script>
window.received = null;
window.addEventListener('message', (e) => {
  if (e.data === 'PING') { e.source.postMessage('PONG', '*'); return; }
  if (e.data && e.data.perfetto) {
    const b = new Uint8Array(e.data.perfetto.buffer); let s = '';
    for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i]);
    window.received = {title: e.data.perfetto.title, fileName: e.data.perfetto.fileName, bytes: btoa(s)};
  }
});
</script>"""

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def run_jobviz(jobviz, root, out, *extra):
    args = [jobviz, "--log_dir", os.path.join(root, "sample_logs/multi_machine_logs"), "--multi_machine",
            "--no-chrome", "--no-summary", "-q", *extra]
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"jobviz failed ({result.returncode}): {result.stderr}")


def percent(ratio):
    return f"{ratio * 100:.1f}%"


def load(page, path):
    page.navigate("file://" + path)
    page.wait_until("document.body.dataset.ready === '1'")


def view(page):
    return page.evaluate("({t0: jobvizReport.view.t0, t1: jobvizReport.view.t1})")


def check_labels_and_figures(page, summary):
    labels = page.evaluate("""[...document.querySelectorAll('#timeline .rows div[data-worker]')].map(d => {
        const r = d.getBoundingClientRect(); return {text: d.textContent, height: r.height}; })""")
    shown = {label["text"] for label in labels if label["height"] > 0}
    for worker in summary["workers"]:
        check(worker["name"] in shown, f"no visible row label {worker['name']!r} (labels: {sorted(shown)})")
    # The verdict opens the page: the gates' result, above the timeline (the run has one passing gate).
    gates = page.evaluate("""(() => { const g = document.getElementById('gates'), t = document.getElementById('timeline');
        return g ? {text: g.textContent, above: g.getBoundingClientRect().bottom <= t.getBoundingClientRect().top} : null; })()""")
    check(gates is not None and gates["text"] == "Gates: all 1 passed" and gates["above"],
          f"the gates' verdict does not open the page: {gates}")
    headline = page.evaluate("[...document.querySelectorAll('.headline')].map(p => p.textContent).join(' ')")
    check(f"Pipeline bubble: {percent(summary['bubble_ratio'])}" in headline,
          f"bubble {percent(summary['bubble_ratio'])} not in the headline {headline!r}")
    worker_cells = page.evaluate("[...document.querySelectorAll('#summary td')].map(td => td.textContent)")
    for worker in summary["workers"]:
        check(percent(worker["bubble_ratio"]) in worker_cells, f"{worker['name']}'s bubble not in the summary tables")
    legend = page.evaluate("[...document.querySelectorAll('#legend span')].map(s => s.textContent)")
    check(sorted(legend) == sorted(summary["job_types"]), f"legend {legend} != job types {list(summary['job_types'])}")
    painted = page.evaluate("""(() => { const c = document.querySelector('canvas.body');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i + 3] && (d[i] < 200 || d[i + 1] < 200)) n++; return n; })()""")
    check(painted > 2000, f"the timeline canvas is nearly empty ({painted} coloured pixels)")


def longest_job_of_first_row(page):
    """The job to point at, and where it is on the screen."""
    return page.evaluate("""(() => {
        const data = JSON.parse(document.getElementById('jobviz-data').textContent), row = data.rows[0];
        let best = row.first;
        for (let i = row.first; i < row.first + row.count; i++) if (data.jobs.dur[i] > data.jobs.dur[best]) best = i;
        const c = document.querySelector('canvas.body').getBoundingClientRect(), v = jobvizReport.view;
        const label = document.querySelector('#timeline .rows div[data-worker]').getBoundingClientRect();
        const mid = data.jobs.start[best] + data.jobs.dur[best] / 2;
        return {x: c.left + (mid - v.t0) * c.width / (v.t1 - v.t0), y: label.top + label.height / 2,
                type: data.types[data.jobs.type[best]], id: String(data.jobs.id[best]), file: row.file,
                line: data.jobs.line[best], start: data.jobs.start[best]}; })()""")


def facts(text):
    return dict(line.split(": ", 1) for line in text.strip().split("\n"))


def check_job_detail(page):
    job = longest_job_of_first_row(page)
    page.mouse("mouseMoved", job["x"], job["y"])
    tip = page.evaluate("document.getElementById('tip').style.display === 'block' && document.getElementById('tip').textContent")
    check(bool(tip), "hovering a job shows no detail")
    if not tip:
        return
    shown = facts(tip)
    check(shown.get("type") == job["type"] and shown.get("job id") == job["id"], f"tip {shown} is not job {job}")
    check(shown.get("source") == f"{job['file']}:{job['line']}", f"tip source {shown.get('source')!r}")
    with open(job["file"], encoding="utf-8") as log:
        line = log.read().split("\n")[job["line"] - 1]
    check(f"Job ({job['id']}), type = {job['type']}, micro_batch_id = {shown['micro-batch']}," in line,
          f"{job['file']}:{job['line']} is not the job shown: {line!r}")
    # The first row is the reference machine's: its start is the log's, to
    # the nanosecond, counted from the run start the header names once.
    start_ms = re.search(r"job_start_time = (\d+)\.(\d{6})", line)
    header = page.evaluate("document.querySelector('header .facts').textContent")
    stamp = re.search(r"times after the run start, (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{9})Z", header)
    check(stamp is not None, f"the header names no run start: {header!r}")
    run_start = calendar.timegm(time.strptime(stamp.group(1), "%Y-%m-%dT%H:%M:%S")) * 10**9 + int(stamp.group(2))
    ms, frac = re.fullmatch(r"\+(\d+)\.(\d{6}) ms", shown["start"]).groups()
    check(run_start + int(ms) * 10**6 + int(frac) == int(start_ms.group(1)) * 10**6 + int(start_ms.group(2)),
          f"shown start {shown['start']} after {stamp.group(0)} is not the log's {start_ms.group(0)}")
    # The ruler reads the same time where the job starts: its tick labels as
    # drawn (fillText on the head canvas), mapped linearly to x.
    ticks = page.evaluate("""(() => { const head = document.querySelector('canvas.head'), ctx = head.getContext('2d');
        const drawn = [], fill = ctx.fillText;
        ctx.fillText = function (text, x, y) { drawn.push([String(text), x]); return fill.call(this, text, x, y); };
        window.dispatchEvent(new Event('resize'));  // redraws in the next animation frame
        return new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => {
          ctx.fillText = fill; done(drawn); }))); })()""")
    units = {"s": 1e9, "ms": 1e6, "µs": 1e3, "ns": 1}
    marks = [(float(m.group(1)) * units[m.group(2)], x - 3) for text, x in ticks  # labels sit 3 px right of their tick
             for m in [re.fullmatch(r"(-?[\d.]+) (s|ms|µs|ns)", text)] if m]
    check(len(marks) >= 2, f"fewer than two ruler labels: {ticks}")
    if len(marks) >= 2:
        (t0, x0), (t1, x1) = marks[0], marks[-1]
        box = page.evaluate("(() => { const r = document.querySelector('canvas.body').getBoundingClientRect(); "
                            "return [r.left, r.width]; })()")
        v = view(page)
        start_x = (job["start"] - v["t0"]) * box[1] / (v["t1"] - v["t0"])  # in canvas pixels, as the ticks
        on_ruler = t0 + (start_x - x0) * (t1 - t0) / (x1 - x0)
        shown_ns = int(ms) * 10**6 + int(frac)
        ns_per_px = (v["t1"] - v["t0"]) / box[1]
        check(abs(on_ruler - shown_ns) <= 2 * ns_per_px,
              f"the ruler reads {on_ruler:.0f} ns where the job starts, its tooltip {shown_ns} ns")
    page.click(job["x"], job["y"])
    detail = page.evaluate("[...document.querySelectorAll('#detail td')].map(td => td.textContent)")
    check(f"{job['file']}:{job['line']}" in detail and job["id"] in detail, f"clicking the job shows {detail}")


def check_zoom_and_pan(page):
    rect = page.evaluate("(() => { const r = document.querySelector('canvas.body').getBoundingClientRect(); "
                         "return [r.left + r.width / 2, r.top + r.height / 2]; })()")
    page.key("Escape", "Escape")  # let go of the timeline (the job detail check clicked into it)
    full = view(page)
    # A plain wheel over the timeline scrolls the page, as long as the timeline was not clicked into.
    page.mouse("mouseWheel", rect[0], rect[1], deltaX=0, deltaY=-600)
    check(view(page) == full, f"a plain wheel zoomed the timeline before a click into it: {full} -> {view(page)}")
    page.mouse("mouseWheel", rect[0], rect[1], deltaX=0, deltaY=-600, modifiers=2)  # Ctrl
    zoomed = view(page)
    check(zoomed["t1"] - zoomed["t0"] < (full["t1"] - full["t0"]) * 0.5, f"Ctrl+wheel did not zoom in: {full} -> {zoomed}")
    page.key("d", "KeyD")
    panned = view(page)
    check(panned["t0"] > zoomed["t0"], f"D did not pan right: {zoomed} -> {panned}")
    page.mouse("mousePressed", rect[0], rect[1], button="left", clickCount=1)
    page.mouse("mouseMoved", rect[0] + 200, rect[1], button="left")
    page.mouse("mouseReleased", rect[0] + 200, rect[1], button="left", clickCount=1)
    dragged = view(page)
    check(dragged["t0"] < panned["t0"], f"dragging right did not pan left: {panned} -> {dragged}")
    page.key("w", "KeyW")
    check(view(page)["t1"] - view(page)["t0"] < dragged["t1"] - dragged["t0"], "W did not zoom in")
    page.key("0", "Digit0")
    check(view(page) == full, "0 did not show everything again")
    # The drag above clicked into the timeline: now the plain wheel zooms.
    page.mouse("mouseWheel", rect[0], rect[1], deltaX=0, deltaY=-600)
    check(view(page)["t1"] - view(page)["t0"] < full["t1"] - full["t0"], "after a click into the timeline the wheel did not zoom")
    page.key("0", "Digit0")


def next_frames(page):
    page.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(0))))")


def center_of(page, selector):
    return page.evaluate(f"""(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();
        return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")


def check_collapse_and_jump(page):
    """A click on a machine's header hides its rows and says how many; a
    second click brings them back; 'collapse all'/'expand all'; the jump box
    scrolls a worker's row into sight (expanding its machine)."""
    rows = page.evaluate("jobvizReport.layoutRows()")
    hidden = page.evaluate("document.querySelectorAll('#timeline .rows div[data-machine=\"1\"]').length")
    page.click(*center_of(page, '#timeline .rows div.machine[data-group="1"]'))
    next_frames(page)
    header = page.evaluate("document.querySelector('#timeline .rows div.machine[data-group=\"1\"]').textContent")
    check(page.evaluate("jobvizReport.layoutRows()") == rows - hidden and header.startswith("▸ ")
          and f"({hidden} rows)" in header, f"collapsing machine1 left {page.evaluate('jobvizReport.layoutRows()')} "
          f"of {rows} rows, header {header!r}")
    page.click(*center_of(page, '#timeline .rows div.machine[data-group="1"]'))
    next_frames(page)
    check(page.evaluate("jobvizReport.layoutRows()") == rows, "expanding machine1 did not bring its rows back")
    page.click(*center_of(page, "#collapse-all"))
    check(page.evaluate("jobvizReport.layoutRows()") == page.evaluate("JSON.parse(document.getElementById("
                                                                      "'jobviz-data').textContent).machines.length"),
          "collapse all left worker rows")
    # A collapsed machine's header shows its rows' activity (a busy strip), not a blank bar.
    next_frames(page)
    strip = page.evaluate("""(() => { const c = document.querySelector('canvas.body');
        const header = document.querySelector('#timeline .rows div.machine[data-group="0"]').getBoundingClientRect();
        const dpr = c.width / c.clientWidth, y = Math.round((header.top + header.height / 2 - c.getBoundingClientRect().top) * dpr);
        const copy = document.createElement('canvas'); copy.width = c.width; copy.height = 1;
        const ctx = copy.getContext('2d', {willReadFrequently: true}); ctx.drawImage(c, 0, y, c.width, 1, 0, 0, c.width, 1);
        const d = ctx.getImageData(0, 0, c.width, 1).data; let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i + 2] - d[i] > 30) n++; return n / (d.length / 4); })()""")
    check(strip > 0.3, f"a collapsed machine's header shows no busy strip ({strip:.0%} of it tinted)")
    # Jump by a partial name (the machine's and the worker's, not the row's
    # label alone): its machine opens, its row comes into sight, highlighted.
    target = page.evaluate("""(() => { const data = JSON.parse(document.getElementById('jobviz-data').textContent);
        const rows = data.rows.filter(r => !r.lane), row = rows[rows.length - 1];
        return {query: data.machines[row.machine].name.toUpperCase() + '  worker ' + row.worker, machine: row.machine, worker: row.worker}; })()""")
    page.evaluate(f"""(() => {{ const j = document.getElementById('jump'); j.value = {json.dumps(target["query"])};
        j.dispatchEvent(new Event('change')); }})()""")
    next_frames(page)
    seen = page.evaluate(f"""(() => {{ const s = document.querySelector('#timeline .scroller').getBoundingClientRect();
        const row = document.querySelector('#timeline .rows div[data-machine="{target["machine"]}"][data-worker="{target["worker"]}"]');
        if (!row) return 'no row'; const r = row.getBoundingClientRect();
        if (!(r.top >= s.top && r.bottom <= s.bottom)) return 'out of sight';
        return row.classList.contains('jumped') ? 'ok' : 'not highlighted'; }})()""")
    check(seen == "ok", f"jumping to {target['query']!r}: {seen}")
    page.evaluate("""(() => { const j = document.getElementById('jump'); j.value = 'no such worker';
        j.dispatchEvent(new Event('change')); })()""")
    check(page.evaluate("document.getElementById('jump').classList.contains('not-found')"), "a name nothing holds is not marked")
    page.click(*center_of(page, "#expand-all"))
    check(page.evaluate("jobvizReport.layoutRows()") == rows, "expand all did not bring every row back")


def check_go_to_critical_path(page):
    """The toolbar's control shows the first step's critical path: the view
    spans it, its first job is selected and in sight; the glossary is on the page."""
    page.key("0", "Digit0")
    full = view(page)
    page.click(*center_of(page, "#go-critical"))
    next_frames(page)
    v = view(page)
    first = page.evaluate("""(() => { const data = JSON.parse(document.getElementById('jobviz-data').textContent);
        return data.path[0][0]; })()""")
    check(page.evaluate("jobvizReport.selected()") == first, "going to the critical path did not select its first job")
    check(v["t1"] - v["t0"] < full["t1"] - full["t0"], "going to the critical path did not zoom to its step")
    check(page.evaluate("document.getElementById('critical-path').checked"), "the critical path is not shown")
    terms = page.evaluate("document.querySelectorAll('#terms + ul li').length")
    check(terms >= 10 and page.evaluate("!!document.querySelector('a[href=\"#terms\"]')"),
          f"the glossary is not on the page ({terms} terms)")
    page.key("Escape", "Escape")
    page.key("0", "Digit0")


def check_what_if(page):
    """The what-if switch draws every job at its replayed time and back, and
    with them the step row, the idle background and the overview; the view,
    the rows and the selection left as they were."""
    data = page.evaluate("(() => { const d = JSON.parse(document.getElementById('jobviz-data').textContent); "
                         "return {title: d.what_if && d.what_if.title, start: d.what_if && d.what_if.start, "
                         "dur: d.what_if && d.what_if.dur, mstart: d.jobs.start, mdur: d.jobs.dur, "
                         "steps: d.what_if && [d.what_if.steps.start, d.what_if.steps.end], "
                         "msteps: [d.steps.start, d.steps.end]}; })()")
    check(bool(data["title"]) and data["title"].startswith("what-if: "), f"no what-if on the page: {data['title']!r}")
    if not data["title"]:
        return
    label = page.evaluate("document.querySelector('.what-if-toggle').textContent.trim()")
    check(label == data["title"], f"the switch says {label!r}, not {data['title']!r}")
    moved = [i for i in range(len(data["start"])) if data["start"][i] != data["mstart"][i]]
    check(len(moved) > 0, "the replay moves no job")
    sample = moved[:: max(1, len(moved) // 20)] + [0, len(data["start"]) - 1]
    next_frames(page)
    # The replay's steps: as many as measured, at least one moved, each
    # spanning its replayed jobs (a step starts no later than its first job).
    check(len(data["steps"][0]) == len(data["msteps"][0]) and data["steps"][0] != data["msteps"][0],
          f"the replay's steps did not move: {data['steps']} against {data['msteps']}")
    canvases = ("body", "head", "overview")
    pixels = lambda: {c: page.evaluate(f"document.querySelector('canvas.{c}').toDataURL()") for c in canvases}
    before = {"view": view(page), "rows": page.evaluate("jobvizReport.layoutRows()"), "selected": page.evaluate("jobvizReport.selected()"),
              "pixels": pixels()}
    page.click(*center_of(page, "#what-if"))
    next_frames(page)
    check(page.evaluate("document.getElementById('what-if').checked"), "the what-if switch did not turn on")
    for i in sample:
        got = page.evaluate(f"jobvizReport.times({i})")
        check(got == [data["start"][i], data["start"][i] + data["dur"][i]], f"job {i} drawn at {got} with the what-if on")
    check(view(page) == before["view"] and page.evaluate("jobvizReport.layoutRows()") == before["rows"] and
          page.evaluate("jobvizReport.selected()") == before["selected"], "the what-if switch moved the view, rows or selection")
    check(page.evaluate("jobvizReport.steps()") == data["steps"], "the step row is not at the replay's steps")
    on = pixels()
    for c in canvases:
        check(on[c] != before["pixels"][c], f"the {c} canvas looks the same with the what-if on")
    page.click(*center_of(page, "#what-if"))
    next_frames(page)
    for i in sample:
        got = page.evaluate(f"jobvizReport.times({i})")
        check(got == [data["mstart"][i], data["mstart"][i] + data["mdur"][i]], f"job {i} drawn at {got} after the switch went off")
    check(page.evaluate("jobvizReport.steps()") == data["msteps"], "the step row is not back at the measured steps")
    off = pixels()
    for c in canvases:
        check(off[c] == before["pixels"][c], f"the {c} canvas does not look as before once the what-if is off")
    page.evaluate("document.activeElement.blur()")  # the keys go to the timeline again


def check_overview(page):
    """The overview is painted, and a click in it moves the view there."""
    painted = page.evaluate("""(() => { const c = document.querySelector('canvas.overview');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 40 && d[i + 2] > d[i]) n++; return n; })()""")
    check(painted > 50, f"the overview is nearly empty ({painted} blue pixels)")
    page.key("0", "Digit0")
    next_frames(page)
    full = view(page)
    rect = page.evaluate("(() => { const r = document.querySelector('canvas.overview').getBoundingClientRect(); "
                         "return [r.left, r.top, r.width, r.height]; })()")
    page.key("w", "KeyW")
    page.key("w", "KeyW")  # zoom in, then go to the last tenth of the run
    page.click(rect[0] + rect[2] * 0.9, rect[1] + rect[3] / 2)
    next_frames(page)
    v = view(page)
    middle = (v["t0"] + v["t1"]) / 2
    expected = full["t0"] + 0.9 * (full["t1"] - full["t0"])
    check(abs(middle - expected) < 0.02 * (full["t1"] - full["t0"]) and v["t1"] - v["t0"] < full["t1"] - full["t0"],
          f"a click at 90% of the overview centred the view at {middle}, not {expected}")
    page.key("0", "Digit0")


def check_job_boundaries_and_labels(page):
    """Two back-to-back jobs of one type stay apart (a gap pixel between them,
    not the jobs' colour); job labels lead with type initials and the
    micro-batch ("F3") or read in full ("forward 3")."""
    pair = page.evaluate("""(() => {
        const data = JSON.parse(document.getElementById('jobviz-data').textContent), j = data.jobs;
        for (const row of data.rows)
          for (let i = row.first; i + 1 < row.first + row.count; i++)
            if (j.type[i] === j.type[i + 1] && j.start[i + 1] - (j.start[i] + j.dur[i]) < 0.02 * j.dur[i])
              return [i, i + 1, j.start[i], j.start[i] + j.dur[i], j.start[i + 1] + j.dur[i + 1]];
        return null; })()""")
    check(pair is not None, "the sample has no back-to-back jobs of one type to look at")
    if pair is None:
        return
    i, k, start, boundary, stop = pair
    span = stop - start
    # Nothing drawn over the jobs: no critical-path outline, no selection.
    page.evaluate("(() => { const box = document.getElementById('critical-path'); "
                  "if (box && box.checked) box.click(); })()")
    page.key("Escape", "Escape")
    page.evaluate(f"(() => {{ const v = jobvizReport.view; v.t0 = {start - span * 0.25}; v.t1 = {stop + span * 0.25}; "
                  "window.dispatchEvent(new Event('resize')); })()")
    jump = page.evaluate(f"""(() => {{ const data = JSON.parse(document.getElementById('jobviz-data').textContent);
        const row = data.rows.findIndex(r => r.first <= {i} && {i} < r.first + r.count);
        return data.rows[row].label; }})()""")
    page.evaluate(f"""(() => {{ const j = document.getElementById('jump'); j.value = {json.dumps(jump)};
        j.dispatchEvent(new Event('change')); }})()""")
    next_frames(page)
    pixels = page.evaluate(f"""(() => {{
        const c = document.querySelector('canvas.body'), v = jobvizReport.view;
        const dpr = c.width / c.clientWidth, row = [...document.querySelectorAll('#timeline .rows div[data-worker]')]
          .find(d => d.textContent === {json.dumps(jump)}).getBoundingClientRect();
        const y = Math.round((row.top + row.height / 2 - c.getBoundingClientRect().top) * dpr);
        const at = (t) => Math.floor((t - v.t0) * c.clientWidth / (v.t1 - v.t0) * dpr);
        // Read from a copy: Chromium logs a second readback of one canvas.
        const copy = document.createElement('canvas'); copy.width = c.width; copy.height = 1;
        const copyCtx = copy.getContext('2d', {{willReadFrequently: true}});
        copyCtx.drawImage(c, 0, y, c.width, 1, 0, 0, c.width, 1);
        const line = copyCtx.getImageData(0, 0, c.width, 1).data;
        const px = (x) => Array.from(line.slice(4 * x, 4 * x + 4));
        return {{inside: px(Math.floor((at({start}) + at({boundary})) / 2)), edge: px(at({boundary}) - 1)}}; }})()""")
    inside, edge = pixels["inside"], pixels["edge"]
    check(inside[:3] != edge[:3], f"no gap between back-to-back jobs {i} and {k}: {inside} at the job, {edge} at its end")
    # Labels as drawn on the body canvas.
    drawn = page.evaluate("""(() => { const ctx = document.querySelector('canvas.body').getContext('2d');
        const texts = [], fill = ctx.fillText;
        ctx.fillText = function (text, x, y) { texts.push(String(text)); return fill.call(this, text, x, y); };
        window.dispatchEvent(new Event('resize'));
        return new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => {
          ctx.fillText = fill; done(texts); }))); })()""")
    types = page.evaluate("JSON.parse(document.getElementById('jobviz-data').textContent).types")
    initials = {"".join(w if w.isdigit() else w[0].upper() for w in t.split("_") if w): t for t in types}
    good = [t for t in drawn if re.fullmatch(r"([A-Z0-9]+?)(\d+)", t) and re.fullmatch(r"([A-Z0-9]+?)(\d+)", t).group(1) in initials
            or re.fullmatch(r"(\w+) (\d+)", t) and t.split(" ")[0] in types]
    check(drawn and len(good) == len(drawn), f"job labels that do not lead with the job's type and micro-batch: "
          f"{[t for t in drawn if t not in good][:5]} (of {len(drawn)})")
    page.evaluate("(() => { const box = document.getElementById('critical-path'); "
                  "if (box && !box.checked) box.click(); })()")
    page.key("0", "Digit0")


def check_open_in_perfetto(browser, page, pftrace):
    button = page.evaluate("(() => { const r = document.getElementById('open-perfetto').getBoundingClientRect(); "
                           "return [r.left + r.width / 2, r.top + r.height / 2]; })()")
    seen = len(browser.events)
    page.click(*button)
    session, _, paused = browser.wait_for(lambda s, m, p: m == "Fetch.requestPaused", since=seen,
                                          what="request for ui.perfetto.dev")
    check(paused["request"]["url"].startswith("https://ui.perfetto.dev"), f"opened {paused['request']['url']}")
    browser.call("Fetch.fulfillRequest", session=session, requestId=paused["requestId"], responseCode=200,
                 responseHeaders=[{"name": "Content-Type", "value": "text/html"}],
                 body=base64.b64encode(FAKE_PERFETTO).decode())
    _, _, created = browser.wait_for(
        lambda s, m, p: m in ("Target.targetCreated", "Target.targetInfoChanged")
        and p["targetInfo"]["url"].startswith("https://ui.perfetto.dev"), since=seen, what="Perfetto tab")
    tab = browser.attach(created["targetInfo"]["targetId"])
    received = tab.wait_until("window.received")
    trace = gzip.decompress(base64.b64decode(received["bytes"]))
    with gzip.open(pftrace, "rb") as f:
        check(trace == f.read(), "the trace handed to Perfetto differs from `jobviz -o run.pftrace.gz`")
    check(received["fileName"].endswith(".pftrace.gz"), f"file name {received['fileName']!r}")
    status = page.evaluate("document.getElementById('perfetto-status').textContent")
    check(status.startswith("Sent the trace"), f"status after the hand-over: {status!r}")


def check_window(page, work, jobviz, root):
    html = os.path.join(work, "window.html")
    run_jobviz(jobviz, root, os.path.join(work, "w.json"), "-o", os.path.join(work, "w.json"), "--html", html,
               "--html-max-jobs", "60")
    load(page, html)
    notice = page.evaluate("(document.getElementById('window') || {}).textContent || ''")
    check("step1 to step1" in notice and "--html-max-jobs 60" in notice, f"window notice {notice!r}")
    steps = page.evaluate("[...new Set(JSON.parse(document.getElementById('jobviz-data').textContent).jobs.step)]")
    check(steps == [1], f"windowed page holds steps {steps}")


def check_bidi_names(page, work, jobviz, root):
    """A right-to-left override in a machine's name (U+202E) stays inside an isolate wherever the
    page's script puts it too: the jump box's list of workers. Typed without the isolates, the
    name still finds its worker."""
    logs = os.path.join(work, "rtl_logs")
    shutil.copytree(os.path.join(root, "sample_logs/multi_machine_logs"), logs)
    os.rename(os.path.join(logs, "machine0"), os.path.join(logs, "machine\u202e0"))
    html = os.path.join(work, "rtl.html")
    result = subprocess.run([jobviz, "--log_dir", logs, "--multi_machine", "--no-chrome", "--no-summary", "-q",
                             "-o", os.path.join(work, "rtl.json"), "--html", html], capture_output=True, text=True)
    check(result.returncode == 0, f"jobviz on a right-to-left name: {result.returncode} {result.stderr[-300:]}")
    load(page, html)
    options = page.evaluate("[...document.querySelectorAll('#jump-list option')].map(o => o.value)")
    overrides = [(o, i) for o in options for i, c in enumerate(o) if c == "\u202e"]
    loose = [o for o, i in overrides if o[i - 1:i] != "\u2068" or o[i + 1:i + 2] != "\u2069"]
    check(overrides and not loose, f"the jump box's list: {len(overrides)} overrides, not isolated in {loose}")
    seen = page.evaluate("""(() => { const j = document.getElementById('jump'); j.value = 'machine\u202e0 worker 0';
        j.dispatchEvent(new Event('change')); const r = document.querySelector('#timeline .rows div.jumped');
        return r ? r.textContent : ''; })()""")
    plain = re.sub("[\u2066-\u2069]", "", seen)
    check("machine\u202e0" in plain and "worker 0" in plain, f"typing the name without isolates jumps to {seen!r}")


def check_open_job(page, work, jobviz, root):
    """A run that stopped (test/fixtures/stopped/worker_in_flight): the jobs
    libjobviz's watchdog saw begin and never end are drawn open to their log's
    end, and hovering one names it."""
    html = os.path.join(work, "stopped.html")
    result = subprocess.run([jobviz, "--log_dir", os.path.join(root, "test/fixtures/stopped/worker_in_flight"),
                             "--multi_machine", "--no-chrome", "--no-summary", "-q", "-o", os.path.join(work, "s.json"),
                             "--html", html], capture_output=True, text=True)
    check(result.returncode == 0, f"jobviz on the stopped run: {result.returncode} {result.stderr[-300:]}")
    load(page, html)
    # The first to stop (machine2 worker 1, the stop report's name) is marked, and a button goes to it.
    marked = page.evaluate("[...document.querySelectorAll('#timeline .rows div.culprit')].map(d => d.textContent)")
    check(marked and all("machine2" in m for m in marked) and any("worker 1" in m for m in marked),
          f"rows marked as the first to stop: {marked}")
    page.evaluate("window.scrollTo(0, 0); document.querySelector('#timeline .scroller').scrollTop = 0; 0")
    clicked = page.evaluate("""(() => { const b = document.getElementById('first-to-stop');
        if (!b) return null; b.click();
        const j = document.querySelector('#timeline .rows div.jumped');
        return {button: b.textContent, jumped: j && j.textContent, title: b.title}; })()""")
    check(clicked and clicked["button"] == "go to the first to stop" and clicked["jumped"] and
          "machine2" in clicked["jumped"] and "worker 1" in clicked["jumped"] and
          clicked["title"].startswith("The run stopped in step0"), f"the first-to-stop button: {clicked}")
    target = page.evaluate("""(() => {
        const data = JSON.parse(document.getElementById('jobviz-data').textContent);
        const index = data.rows.findIndex(r => r.open && r.open.length);
        if (index < 0) return null;
        const [start, stop, name, note, line] = data.rows[index].open[0];
        const label = document.querySelectorAll('#timeline .rows div[data-worker]')[index].getBoundingClientRect();
        const c = document.querySelector('canvas.body').getBoundingClientRect(), v = jobvizReport.view;
        const mid = (start + stop) / 2;
        return {x: c.left + (mid - v.t0) * c.width / (v.t1 - v.t0), y: label.top + label.height / 2, name, note,
                line, inView: v.t1 >= stop}; })()""")
    check(target is not None, "the stopped run's page holds no open job")
    if not target:
        return
    check(target["inView"], "the whole view does not reach the open job's end")
    page.mouse("mouseMoved", target["x"], target["y"])
    tip = page.evaluate("document.getElementById('tip').style.display === 'block' && document.getElementById('tip').textContent")
    shown = facts(tip) if tip else {}
    check(shown.get("job") == target["name"] and shown.get("state") == target["note"] and
          shown.get("source", "").endswith(":%d" % target["line"]), f"hovering the open job shows {tip!r}, not {target}")


def main():
    jobviz, root, out_dir = (os.path.abspath(a) for a in sys.argv[1:4])
    if not cdp.find_chromium():
        print("chromium is not installed (tools/install-deps installs it): skipped")
        return cdp.SKIP
    with tempfile.TemporaryDirectory() as work:
        html, summary_path, pftrace = (os.path.join(work, n) for n in ("report.html", "summary.json", "run.pftrace.gz"))
        run_jobviz(jobviz, root, work, "-o", pftrace, "--html", html, "--summary-json", summary_path,
                   "--fail-on", "bubble_ratio > 0.9")
        with open(summary_path) as f:
            summary = json.load(f)
        with cdp.Browser() as browser:
            browser.call("Fetch.enable", patterns=[{"urlPattern": "https://ui.perfetto.dev/*"}])
            browser.call("Target.setDiscoverTargets", discover=True)
            page = browser.new_page()
            load(page, html)
            check_labels_and_figures(page, summary)
            check_job_detail(page)
            # With a job hovered and selected, as a user sees it.
            os.makedirs(out_dir, exist_ok=True)
            shot = os.path.join(out_dir, "html_report.png")
            with open(shot, "wb") as f:
                f.write(base64.b64decode(page.call("Page.captureScreenshot", format="png")["data"]))
            print("screenshot:", shot)
            check_zoom_and_pan(page)
            check_collapse_and_jump(page)
            check_go_to_critical_path(page)
            check_what_if(page)
            check_overview(page)
            check_job_boundaries_and_labels(page)
            check_open_in_perfetto(browser, page, pftrace)
            check(page.problems() == [], f"console: {page.problems()}")
            requests = [u for u in page.requested_urls() if not u.startswith(("file://", "data:"))]
            check(requests == [], f"the page asked the network for {requests}")
            check_window(page, work, jobviz, root)
            check_bidi_names(page, work, jobviz, root)
            check_open_job(page, work, jobviz, root)
            check(page.problems() == [], f"console: {page.problems()}")
    print("FAILED:" if failures else "ok:", len(failures), "failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
