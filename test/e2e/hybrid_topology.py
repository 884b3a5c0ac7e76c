#!/usr/bin/env python3
"""Hybrid-parallel runs (test/fixtures/hybrid, made by make_hybrid_fixtures.py
with the truth in each truth.json) drawn by jobviz as a user would: the
topology and its source in the report, the schedule and its ideal bubble per
pipeline, zero pipeline-order violations on true clocks, causal and sync
alignment on a skewed run within a few microseconds of the true offsets,
flow arrows only between consecutive stages of one replica and one
tensor-parallel index (read from the Perfetto JSON's flows and row names),
--topology giving the same result as the lines it replaces, --rows stage
grouping rows by stage, and --steps keeping the topology.

  hybrid_topology.py JOBVIZ SOURCE_ROOT
"""
import json
import os
import re
import subprocess
import sys
import tempfile

FIXTURES = "test/fixtures/hybrid"
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def run(jobviz, logs, extra, scratch):
    trace = os.path.join(scratch, "trace.json")
    summary = os.path.join(scratch, "summary.json")
    args = [jobviz, "--log_dir", logs, "--no-chrome", "--json-args", "full", "-o", trace, "--summary-json", summary]
    if os.path.isdir(os.path.join(logs, "machine0")):
        args.append("--multi_machine")
    done = subprocess.run(args + extra, capture_output=True, text=True)
    if done.returncode != 0:
        failures.append("%s %s: exit %d\n%s" % (logs, extra, done.returncode, done.stderr))
        return None, None, done.stderr
    with open(trace) as f:
        trace_doc = json.load(f)
    with open(summary) as f:
        summary_doc = json.load(f)
    return trace_doc, summary_doc, done.stderr


def rows(trace):
    """(pid, tid) -> (stage, mp, replica) from the row names; the run's own
    rows, not those of a what-if's replay (a process of its own)."""
    what_if = {e["pid"] for e in trace["traceEvents"] if e.get("ph") == "M" and e.get("name") == "process_name"
               and e["args"]["name"].startswith("what-if: ")}
    out = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "thread_name" and e["pid"] not in what_if:
            name = e["args"]["name"]
            m = re.search(r"· stage (\d+)(?: · mp (\d+))?(?: · replica (\d+))?", name)
            if m:
                out[(e["pid"], e["tid"])] = tuple(int(g or 0) for g in m.groups())
    return out


def check_flows(name, trace):
    """Every flow (flow events sharing an id, in file order: a chain's order)
    runs along one pipeline: same replica and mp index, consecutive stages."""
    where = rows(trace)
    flows = {}
    for e in trace["traceEvents"]:
        if e.get("ph") in ("s", "t", "f"):
            flows.setdefault(e["id"], []).append((e["ts"], (e["pid"], e["tid"])))
    check(len(flows) > 0, "%s: no flow arrows" % name)
    for flow_id, jobs in flows.items():
        for (_, a), (_, b) in zip(jobs, jobs[1:]):
            ra, rb = where.get(a), where.get(b)
            if ra is None or rb is None:
                failures.append("%s: flow %s joins a row without a stage" % (name, flow_id))
                return
            if ra[1:] != rb[1:] or abs(ra[0] - rb[0]) != 1:
                failures.append("%s: flow %s joins %s to %s (stage, mp, replica)" % (name, flow_id, ra, rb))
                return


def check_structure(name, truth, summary, report, source):
    p, m, v = truth["stages"], truth["micro_batches"], truth["chunks"]
    check(summary["stages"] == p, "%s: stages %s, truth %d" % (name, summary["stages"], p))
    check(summary["micro_batches"] == m, "%s: micro-batches %s, truth %d" % (name, summary["micro_batches"], m))
    expected_schedule = "interleaved 1F1B" if v > 1 else "1F1B"
    check(summary["schedule"] == expected_schedule, "%s: schedule %s" % (name, summary["schedule"]))
    ideal = (p - 1) / (v * m + p - 1)
    check(summary["ideal_bubble_ratio"] is not None and abs(summary["ideal_bubble_ratio"] - ideal) < 1e-9,
          "%s: ideal %s, expected %f" % (name, summary["ideal_bubble_ratio"], ideal))
    topology = summary.get("topology")
    check(topology is not None and topology["source"] == source,
          "%s: topology source %s, expected %s" % (name, topology and topology["source"], source))
    if topology:
        degrees = truth["degrees"]
        check(topology["degrees"]["pp"] == degrees["pp"] and topology["degrees"]["mp"] == degrees["mp"],
              "%s: degrees %s, truth %s" % (name, topology["degrees"], degrees))
        check(topology["replicas"] == truth["replicas"], "%s: replicas %s" % (name, topology["replicas"]))
    check(("topology: " in report) and (source in report), "%s: the report does not name the source:\n%s" % (name, report))
    if truth["machines"] > 1:
        check("pipeline order violations: 0 before" in report or truth["offsets_us"] and any(truth["offsets_us"].values()),
              "%s: order violations on true clocks:\n%s" % (name, report))


def main():
    jobviz, root = sys.argv[1], sys.argv[2]
    base = os.path.join(root, FIXTURES)
    with tempfile.TemporaryDirectory() as scratch:
        for name in sorted(os.listdir(base)):
            logs = os.path.join(base, name)
            if not os.path.isdir(logs) or name == "lines_disagree":
                continue
            with open(os.path.join(logs, "truth.json")) as f:
                truth = json.load(f)
            source = "inferred from the jobs" if name.endswith("_nolines") else "HybridParallelInfo lines"
            trace, summary, report = run(jobviz, logs, [], scratch)
            if summary is None:
                continue
            check_structure(name, truth, summary, report, source)
            check_flows(name, trace)
            # The same run described by --topology instead of the lines.
            degrees = ",".join("%s=%d" % (axis, d) for axis, d in sorted(truth["degrees"].items()))
            _, by_option, report = run(jobviz, logs, ["--topology", degrees], scratch)
            if by_option is not None:
                check_structure(name + " --topology", truth, by_option, report, "--topology")
                check(by_option.get("stage_table") == summary.get("stage_table"),
                      "%s: --topology gives another stage table than the lines" % name)
            # --rows stage: a process per stage holding exactly that stage's rows; the same flows.
            by_stage, _, _ = run(jobviz, logs, ["--rows", "stage"], scratch)
            if by_stage is not None:
                check_flows(name + " --rows stage", by_stage)
                process = {e["pid"]: e["args"]["name"] for e in by_stage["traceEvents"]
                           if e.get("ph") == "M" and e.get("name") == "process_name"}
                for (pid, tid), (stage, _, _) in rows(by_stage).items():
                    check(process.get(pid) == "stage %d" % stage,
                          "%s --rows stage: a stage %d row in process %s" % (name, stage, process.get(pid)))
                check(len(rows(by_stage)) == truth["world"], "%s --rows stage: %d rows" % (name, len(rows(by_stage))))
            # --steps keeps the topology (a window of the run is still hybrid).
            _, window, report = run(jobviz, logs, ["--steps", "2:2"], scratch)
            if window is not None:
                check(window.get("topology", {}).get("source") == source and window["stages"] == truth["stages"],
                      "%s --steps 2:2: topology %s, stages %s" % (name, window.get("topology"), window["stages"]))
            # Skewed machines: both estimators recover the true offsets.
            if any(truth["offsets_us"].values()):
                for mode in ("sync", "causal"):
                    _, aligned, report = run(jobviz, logs, ["--clock_align", mode], scratch)
                    if aligned is None:
                        continue
                    for clock in aligned["clock"]:
                        true_offset = truth["offsets_us"][clock["name"]]
                        check(abs(clock["offset_us"] - true_offset) <= 5,
                              "%s %s: %s offset %.1f us, truth %d" % (name, mode, clock["name"], clock["offset_us"],
                                                                      true_offset))
                    check("violations: " in report and ", 0 after" in report,
                          "%s %s: violations left:\n%s" % (name, mode, report))
            # The lagging peer is found, by about its lag.
            for rank, lag in truth.get("lag_us", {}).items():
                peers = summary.get("lagging_peers") or []
                check(len(peers) == 1 and abs(peers[0]["behind_us"] - lag) <= 5,
                      "%s: lagging peers %s, truth rank %s by %d us" % (name, peers, rank, lag))
            if not truth.get("lag_us") and truth["degrees"]["mp"] > 1:
                check(summary.get("lagging_peers") == [], "%s: peers flagged in lockstep: %s" % (name, summary.get("lagging_peers")))
    for failure in failures:
        print("FAIL:", failure)
    print("hybrid_topology: %d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
