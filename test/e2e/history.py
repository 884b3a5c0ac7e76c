#!/usr/bin/env python3
"""The run history (docs/history.md) end to end: --record, jobviz history, jobviz hosts.

usage: history.py JOBVIZ SOURCE_ROOT BUILD_ROOT

Twenty nightly runs of docs/history.md's example (tools/history-example): one
host turns slow on night 6, a config change raises the bubble on night 9.
history must mark those nights and no other, hosts must rank that host
first as the host's doing; the same logs recorded twice are one run; 20
writers at once lose no run while history reads; bad ledgers and bad options
exit with their documented codes and leave the files alone; --baseline-history
fails the slow night's gates against the nights before it and passes a healthy one.
"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

JOBVIZ, SOURCE, BUILD = (os.path.abspath(a) for a in sys.argv[1:4])
NIGHTS, SLOW_FROM, CONFIG_FROM = 20, 6, 9  # 32 took 33 s in the sanitizer tree, on CI's critical path
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def jobviz(*args):
    return subprocess.run([JOBVIZ, *args], capture_output=True, text=True)


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


with tempfile.TemporaryDirectory() as out:
    subprocess.run([os.path.join(SOURCE, "tools/history-example"), BUILD, out, str(NIGHTS), str(SLOW_FROM),
                    str(CONFIG_FROM)], check=True, stdout=subprocess.DEVNULL)
    db = os.path.join(out, "runs.db")

    # history: the slow host's nights and the config change, marked; the others not.
    r = jobviz("history", db, "--json", "--last", "100")
    check(r.returncode == 0, f"history exit {r.returncode}: {r.stderr}")
    runs = json_lines(r.stdout)
    check(len(runs) == NIGHTS, f"{len(runs)} runs, expected {NIGHTS}")
    for night, run in enumerate(runs, 1):
        step, bubble = run["regressed"]["step"], run["regressed"]["bubble"]
        if night < SLOW_FROM:
            check(not step and not bubble, f"night {night} marked a regression: {run['regressed']}")
        elif night == SLOW_FROM:
            check(step and bubble, f"night {night} (slow host) not marked: {run['regressed']}")
            check(run["top_cause"]["what_if"] == "no_slow_workers", f"night {night}: top cause {run['top_cause']}")
        if night == CONFIG_FROM:
            check(bubble, f"night {night} (config change) bubble not marked: {run['regressed']}")
        check(run["name"] == "nightly-7b" and run["tags"]["commit"], f"night {night}: name/tags {run['name']} {run['tags']}")
        check(run["topology"] == {"pp": 4, "mp": 2, "dp": 8}, f"night {night}: topology {run['topology']}")
    starts = [run["started_at"] for run in runs]
    check(starts == sorted(starts) and len(set(starts)) == NIGHTS, "runs not one a night, in order")
    table = jobviz("history", db, "--last", "5")
    check(table.returncode == 0 and table.stdout.count("nightly-7b") == 5, f"--last 5 table:\n{table.stdout}")
    check("!" in table.stdout, "the table marks no regression")
    eight = json_lines(jobviz("history", db, "--json", "--last", "100", "--tag", "microbatches=8").stdout)
    check(len(eight) == NIGHTS - CONFIG_FROM + 1, f"--tag microbatches=8: {len(eight)} runs")
    check(not eight[-1]["regressed"]["bubble"], "within one config the bubble is not a regression")
    since = json_lines(jobviz("history", db, "--json", "--last", "100", "--since", "2026-11-05").stdout)
    check(len(since) == NIGHTS - 6, f"--since 2026-11-05: {len(since)} runs")  # night 1 is 2026-10-30

    # --html: a self-contained page; every point links to its run's line; the regressions ringed.
    page = os.path.join(out, "history.html")
    r = jobviz("history", db, "--html", page, "--last", "100")
    check(r.returncode == 0 and os.path.exists(page), f"history --html: {r.returncode} {r.stderr}")
    if os.path.exists(page):
        html = open(page).read()
        rows = set(re.findall(r'<tr id="(run-\d+)"', html))
        links = re.findall(r'<a href="#(run-\d+)">', html)
        check(len(rows) == NIGHTS and len(links) == 2 * NIGHTS, f"{len(rows)} rows, {len(links)} points")
        check(set(links) == rows, "a point links to no run's line")
        marked = sum(r["regressed"]["step"] for r in runs) + sum(r["regressed"]["bubble"] for r in runs)
        rings = html.count('class="regressed"')
        check(rings == marked, f"{rings} rings, {marked} regressions")
        check("microbatches" in html, "the series are not the tag that changes")
        check(not re.search(r'<script|src="http|href="http', html), "the page is not self-contained")
    hosts_page = os.path.join(out, "hosts.html")
    r = jobviz("hosts", db, "--html", hosts_page)
    check(r.returncode == 0 and "machine5" in open(hosts_page).read(), f"hosts --html: {r.returncode} {r.stderr}")

    # hosts: machine5 first, the host's doing, slow from night SLOW_FROM on.
    hosts = [h for h in json_lines(jobviz("hosts", db, "--json").stdout) if h["kind"] == "host"]
    check(hosts and hosts[0]["host"] == "machine5", f"first host {hosts[0] if hosts else None}")
    if hosts:
        check(hosts[0]["cause"] == "host", f"machine5's cause {hosts[0]['cause']}")
        check(hosts[0]["slow"] == NIGHTS - SLOW_FROM + 1, f"machine5 slow in {hosts[0]['slow']} runs")
        check(hosts[0]["runs"] == NIGHTS, f"machine5 in {hosts[0]['runs']} runs")
        check(all(h["lost_us"] == 0 for h in hosts[1:]), "another host lost time")
    table = jobviz("hosts", db)
    check(table.returncode == 0 and "machine5" in table.stdout and "the host's" in table.stdout, f"hosts table:\n{table.stdout}")

    # The same logs twice are one run.
    night1 = os.path.join(out, "night1")
    events = sorted(os.path.join(night1, f) for f in os.listdir(night1) if f.endswith(".jsonl.gz"))
    again = jobviz("merge", *events, "-o", os.path.join(out, "again.pftrace"), "--record", db)
    check(again.returncode == 0 and "already" in again.stderr, f"recorded again: {again.returncode} {again.stderr[-300:]}")
    check(len(json_lines(jobviz("history", db, "--json", "--last", "100").stdout)) == NIGHTS, "a run recorded twice")

    # --baseline-history: the gates against the median of the nights before the slow host.
    base = os.path.join(out, "before.db")
    def night_events(night):
        d = os.path.join(out, f"night{night}")
        return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".jsonl.gz"))
    for night in range(1, SLOW_FROM):
        check(jobviz("merge", *night_events(night), "-o", os.path.join(out, "b.pftrace"), "-q", "--record", base,
                     "--run-name", "nightly-7b", "--tag", "microbatches=16").returncode == 0,
              f"recording night {night} into before.db")
    gates = ["--fail-on", "bubble_ratio > baseline + 0.02", "--fail-on", "steps.duration_us.p50 > baseline * 1.05"]
    junit = os.path.join(out, "gates.xml")
    slow = jobviz("merge", *night_events(SLOW_FROM), "-o", os.path.join(out, "b.pftrace"), "--run-name", "nightly-7b",
                  "--baseline-history", base + ":3", *gates, "--junit", junit)
    check(slow.returncode == 3, f"the slow night against history: exit {slow.returncode} {slow.stderr[-400:]}")
    check("the median of 3 runs" in slow.stderr, f"the baseline is not said: {slow.stderr[-400:]}")
    check(os.path.exists(junit) and open(junit).read().count("<failure") == 2, "JUnit does not fail both gates")
    fine = jobviz("merge", *night_events(2), "-o", os.path.join(out, "b.pftrace"), "--run-name", "nightly-7b",
                  "--baseline-history", base, *gates)
    check(fine.returncode == 0, f"a healthy night against history: exit {fine.returncode} {fine.stderr[-400:]}")
    matched = jobviz("merge", *night_events(2), "-o", os.path.join(out, "b.pftrace"), "--run-name", "nightly-7b",
                     "--baseline-history", base, "--tag", "microbatches=8", "--baseline-match", "microbatches", *gates)
    check(matched.returncode == 2 and "--baseline-match" in matched.stderr,
          f"no earlier run with microbatches=8: exit {matched.returncode} {matched.stderr[-300:]}")
    matched = jobviz("merge", *night_events(2), "-o", os.path.join(out, "b.pftrace"), "--run-name", "nightly-7b",
                     "--baseline-history", base, "--tag", "microbatches=16", "--baseline-match", "microbatches", *gates)
    check(matched.returncode == 0 and "the median of 5 runs" in matched.stderr, f"--baseline-match: {matched.stderr[-300:]}")
    unknown = jobviz("merge", *night_events(2), "-o", os.path.join(out, "b.pftrace"), "--run-name", "other",
                     "--baseline-history", base, *gates)
    check(unknown.returncode == 2 and "no finished run named 'other'" in unknown.stderr, f"unknown name: {unknown.stderr}")
    both = jobviz("merge", *night_events(2), "-o", os.path.join(out, "b.pftrace"), "--baseline", junit,
                  "--baseline-history", base)
    check(both.returncode == 2, f"--baseline with --baseline-history: exit {both.returncode}")

    # --record DIR: a file a run; history and hosts read the directory; --import adds its runs to a ledger.
    runs_dir = os.path.join(out, "runs") + "/"
    for night in (1, 2, 3, 3):
        r = jobviz("merge", *night_events(night), "-o", os.path.join(out, "d.pftrace"), "--record", runs_dir)
        check(r.returncode == 0, f"--record DIR night {night}: {r.returncode} {r.stderr[-300:]}")
    check("already" in r.stderr, "night 3 recorded twice into DIR is not said")
    check(len([f for f in os.listdir(runs_dir) if f.endswith(".json")]) == 3, "run files in DIR")
    check(len(json_lines(jobviz("history", runs_dir, "--json").stdout)) == 3, "history DIR")
    check(jobviz("hosts", runs_dir, "--json").returncode == 0, "hosts DIR")
    imported = os.path.join(out, "imported.db")
    r = jobviz("history", "--import", runs_dir, imported)
    check(r.returncode == 0 and "imported 3 of 3" in r.stderr, f"--import: {r.returncode} {r.stderr}")
    r = jobviz("history", "--import", runs_dir, imported)
    check(r.returncode == 0 and "imported 0 of 3" in r.stderr, f"--import again: {r.returncode} {r.stderr}")
    with open(os.path.join(runs_dir, "stray.json"), "w") as f:
        f.write('{"hello": 1}\n')
    r = jobviz("history", runs_dir)
    check(r.returncode == 5 and "stray.json" in r.stderr, f"a stray file in DIR: {r.returncode} {r.stderr}")

    # Many writers at once, and a reader while they write: no run lost.
    many = os.path.join(out, "many.db")
    writers = []
    for night in range(1, NIGHTS + 1):
        d = os.path.join(out, f"night{night}")
        files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".jsonl.gz"))
        writers.append(subprocess.Popen([JOBVIZ, "merge", *files, "-o", os.path.join(out, f"m{night}.pftrace"), "-q",
                                         "--record", many, "--run-name", "many"], stderr=subprocess.PIPE, text=True))
    reads = 0
    while any(w.poll() is None for w in writers):
        if os.path.exists(many):
            read = jobviz("history", many, "--json", "--last", "100")
            check(read.returncode == 0, f"history while writing: {read.returncode} {read.stderr}")
            reads += 1
    for w in writers:
        check(w.wait() == 0, f"a writer failed: {w.stderr.read()}")
    check(len(json_lines(jobviz("history", many, "--json", "--last", "100").stdout)) == NIGHTS,
          "runs lost by concurrent writers")
    print(f"{NIGHTS} writers at once, {reads} reads meanwhile")

    # Bad ledgers: exit 5, a reason, nothing changed; outputs still written.
    notes = os.path.join(out, "notes.txt")
    with open(notes, "w") as f:
        f.write("not a ledger\n")
    trace = os.path.join(out, "bad.pftrace")
    bad = jobviz("merge", *events, "-o", trace, "--record", notes)
    check(bad.returncode == 5 and "not a jobviz ledger" in bad.stderr, f"text file as ledger: {bad.returncode} {bad.stderr}")
    check(os.path.exists(trace), "the trace was not written beside a failed --record")
    check(open(notes).read() == "not a ledger\n", "the text file was changed")
    newer = os.path.join(out, "newer.db")
    check(jobviz("merge", *events, "-o", trace, "--record", newer, "-q").returncode == 0, "recording into a new ledger")
    with sqlite3.connect(newer) as c:
        c.execute("PRAGMA user_version = 7")
    for args in (["history", newer], ["merge", *events, "-o", trace, "--record", newer]):
        r = jobviz(*args)
        check(r.returncode == 5 and "newer jobviz" in r.stderr, f"{args[0]} of a newer ledger: {r.returncode} {r.stderr}")
    r = jobviz("history", os.path.join(out, "missing.db"))
    check(r.returncode == 5 and not os.path.exists(os.path.join(out, "missing.db")), f"missing ledger: {r.returncode}")
    for args, what in ((["--tag", "nokey"], "a tag without ="), (["--run-name", "x"], "--run-name without --record")):
        extra = ["--record", db] if what.startswith("a tag") else []
        r = jobviz("merge", *events, "-o", trace, *extra, *args)
        check(r.returncode == 2, f"{what}: exit {r.returncode} {r.stderr}")
    r = jobviz("history", db, "--tag", "nokey")
    check(r.returncode == 2, f"history --tag nokey: exit {r.returncode}")

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("history: all checks passed")
