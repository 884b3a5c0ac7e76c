#!/usr/bin/env python3
"""Bytes that are not UTF-8 where jobviz writes JSON: job ids and skipped
lines from a crashed job's garbage (extract used to abort and leave its temp
file), directory names (--summary-json used to abort).

usage: hostile_names.py JOBVIZ
"""
import json
import os
import subprocess
import sys
import tempfile

JOB = (b"Profiler Info: Job (%s), type = forward, micro_batch_id = %d, "
       b"job_start_time = 1697793307%03d.000000, job_end_time = 1697793307%03d.500000\n")


def run(jobviz, *args, cwd):
    result = subprocess.run([jobviz] + list(args), cwd=cwd, capture_output=True)
    print(" ".join(str(a) for a in args), "->", result.returncode)
    sys.stdout.write(result.stderr.decode("utf-8", "replace"))
    return result


def main():
    jobviz = os.path.abspath(sys.argv[1])
    failures = []
    with tempfile.TemporaryDirectory(prefix="jobviz_names_") as scratch:
        root = scratch.encode()
        logs = os.path.join(root, b"logs\xfe")
        machine = os.path.join(logs, b"machine\xff0")
        os.makedirs(machine)
        with open(os.path.join(machine, b"workerlog.0"), "wb") as f:
            for i in range(4):
                f.write(JOB % (b"\xff\xfe%d" % i, i, 100 + 2 * i, 101 + 2 * i))
            f.write(b"Profiler Info: Job (\x80\x81), type = forward, garbage \xc3\x28\n")  # malformed
        os.makedirs(os.path.join(logs, b"machine1"))
        with open(os.path.join(logs, b"machine1", b"workerlog.0"), "wb") as f:
            f.write(JOB % (b"7", 0, 200, 201))

        r = run(jobviz, b"--log_dir", logs, b"--multi_machine", b"--summary-json", b"s.json", b"-o", b"direct.json",
                b"--no-chrome", cwd=root)
        if r.returncode != 0:
            failures.append("direct run with non-UTF-8 names exited %d" % r.returncode)
        else:
            summary = json.load(open(os.path.join(root, b"s.json"), encoding="utf-8"))
            if summary["counts"]["jobs"] != 5:
                failures.append("summary counts %s" % summary["counts"])

        r = run(jobviz, b"extract", b"--log_dir", machine, b"--machine", b"m\xff", b"-o", b"m0.jsonl.gz", cwd=root)
        if r.returncode != 0:
            failures.append("extract exited %d" % r.returncode)
        leftovers = [n for n in os.listdir(root) if b".tmp." in n]
        if leftovers:
            failures.append("temporary files left: %s" % leftovers)
        r = run(jobviz, b"merge", b"m0.jsonl.gz", b"-o", b"merged.json", b"--no-chrome", cwd=root)
        if r.returncode != 0:
            failures.append("merge exited %d" % r.returncode)
        else:
            ids = sorted(e["args"]["job_id"] for e in json.load(open(os.path.join(root, b"merged.json")))["traceEvents"]
                         if e["ph"] == "X" and "source" in e["args"] and e["name"].startswith("forward"))
            if len(ids) != 4 or not all(i.startswith("\u00ff\u00fe") for i in ids):
                failures.append("merged job ids %r" % ids)
        # Names are never markup in Markdown: a machine directory named like an HTML element, and a
        # job-type key of a summary, stay text in --summary-md and in `jobviz diff --md`.
        html_logs = os.path.join(root, b"html_logs")
        os.makedirs(os.path.join(html_logs, b"machine0<img src=x onerror=alert(1)>"))
        os.makedirs(os.path.join(html_logs, b"machine1*b*"))
        for m in (b"machine0<img src=x onerror=alert(1)>", b"machine1*b*"):
            with open(os.path.join(html_logs, m, b"workerlog.0"), "wb") as f:
                f.write(JOB % (b"1", 0, 100, 101))
        r = run(jobviz, b"--log_dir", html_logs, b"--multi_machine", b"-q", b"--no-chrome", b"-o", b"h.json",
                b"--summary-md", b"s.md", b"--summary-json", b"hs.json", b"--fail-on", b"counts.jobs > 100", cwd=root)
        markdown = open(os.path.join(root, b"s.md"), encoding="utf-8").read() if r.returncode == 0 else ""
        if "<img" in markdown or "*b*" in markdown or "machine0&lt;img src=x onerror=alert(1)&gt;" not in markdown:
            failures.append("--summary-md: a name became markup:\n" + markdown)
        if "| `counts.jobs > 100` |" not in markdown:
            failures.append("--summary-md: the gate is not a code span:\n" + markdown)
        hostile = json.load(open(os.path.join(root, b"hs.json"), encoding="utf-8"))
        hostile["job_types"]["<script>x</script>`|"] = {"mean_us": 1.0}
        with open(os.path.join(root, b"hostile.json"), "w", encoding="utf-8") as f:
            json.dump(hostile, f)
        r = run(jobviz, b"diff", b"hs.json", b"hostile.json", b"--md", cwd=root)
        diff = subprocess.run([jobviz, b"diff", b"hs.json", b"hostile.json", b"--md"], cwd=root,
                              capture_output=True).stdout.decode("utf-8")
        if "| ``job_types.<script>x</script>`\\|.mean_us`` |" not in diff:
            failures.append("diff --md: a hostile key is not one inert code span:\n" + diff)

        # A right-to-left override in a machine's name (U+202E) cannot reorder the HTML page's
        # text around it: wherever the page holds it (row labels, headers, the jump box's list,
        # the summary's tables and sentences), it sits in an isolate of its own (FSI U+2068 ...
        # PDI U+2069; UAX #9: a PDI ends every override begun inside its isolate). No script runs
        # from a name either: the <img> directory above stays text.
        rtl_logs = os.path.join(root, b"rtl_logs")
        rtl_name = "machine\u202e0".encode()
        for m in (rtl_name, b"machine1"):
            os.makedirs(os.path.join(rtl_logs, m))
            with open(os.path.join(rtl_logs, m, b"workerlog.0"), "wb") as f:
                f.write(JOB % (b"1", 0, 100, 101))
        for logs_dir, page in ((rtl_logs, b"rtl.html"), (html_logs, b"img.html")):
            r = run(jobviz, b"--log_dir", logs_dir, b"--multi_machine", b"-q", b"--no-chrome", b"-o", b"r.json",
                    b"--html", page, cwd=root)
            html = open(os.path.join(root, page), encoding="utf-8").read() if r.returncode == 0 else ""
            if logs_dir == rtl_logs:
                overrides = [i for i, c in enumerate(html) if c == "\u202e"]
                loose = [i for i in overrides if html[i - 1:i] != "\u2068" or html[i + 1:i + 2] != "\u2069"]
                if not overrides or loose:
                    failures.append("--html: %d right-to-left overrides, %d not isolated" % (len(overrides), len(loose)))
            elif "<img src=x" in html or not html:
                failures.append("--html: a name became markup")

        # kill -9 during a write leaves PATH.tmp.PID; the next run writing PATH removes it
        # (when that process is gone), and leaves a live process's alone.
        dead = subprocess.Popen(["true"])
        dead.wait()
        stale = os.path.join(root, b"direct.json.tmp.%d" % dead.pid)
        live = os.path.join(root, b"direct.json.tmp.%d" % os.getpid())
        for name in (stale, live):
            open(name, "w").close()
        run(jobviz, b"--log_dir", logs, b"--multi_machine", b"-o", b"direct.json", b"--no-chrome", b"-q", cwd=root)
        if os.path.exists(stale) or not os.path.exists(live):
            failures.append("stale temporary files: dead one kept %s, live one removed %s" %
                            (os.path.exists(stale), not os.path.exists(live)))
        os.remove(live)

        # An unreadable log directory says "permission denied" (root reads anything: checked
        # only as another user).
        locked = os.path.join(root, b"locked")
        os.makedirs(os.path.join(locked, b"machine0"))
        os.chmod(os.path.join(locked, b"machine0"), 0)
        if os.geteuid() != 0:
            r = run(jobviz, b"--log_dir", locked, b"--multi_machine", cwd=root)
            if r.returncode != 1 or b"Permission denied" not in r.stderr:
                failures.append("unreadable directory: exit %d" % r.returncode)
        else:
            print("running as root: the permission-denied case is checked only as another user")
        os.chmod(os.path.join(locked, b"machine0"), 0o755)
    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
