#!/usr/bin/env python3
"""jobviz's legacy pipeline_profile.json against the original script's
format, on logs where the original is right (one machine, every device, a
window starting at step 0, no overlapping jobs, no NVTX steps).

  legacy_format.py JOBVIZ FIXTURE_DIR

The expected events are built here from the original's documented rules
(../shared/spec/original-tool.md, workerlog-format.md): per device in
--devices order, per job a "B" then an "E" event {name <type>_<id>, cat
<type>, ts ms*1000, pid 0, tid GPU<d>, cname by type}; then per step a "B"
and an "E" on tid "Step" with cname thread_state_unknown, where a worker's
step starts at its forward job of micro-batch 0 and ends at the end of the
job before the next one, steps are merged over workers (earliest start,
latest end) and a step starts no earlier than the previous one ended.
Users' scripts read these keys; times must agree within the original's own
rounding (it multiplies a float of milliseconds).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

JOB = re.compile(r"Profiler Info: Job \((\d+)\), type = (\w+), micro_batch_id = (\d+), "
                 r"job_start_time = (\d+\.\d+), job_end_time = (\d+\.\d+)")
COLOURS = {"forward": "thread_state_running", "backward": "rail_idle", "optimizer": "rail_response",
           "default": "thread_state_unknown"}


def expected_events(log_dir, devices):
    events, merged_steps = [], []
    for device in devices:
        with open(os.path.join(log_dir, f"workerlog.{device}")) as f:
            text = f.read()
        steps, step_start, step_end = [], None, None
        for job_id, job_type, micro_batch, start, end in JOB.findall(text):
            start_us, end_us = float(start) * 1000, float(end) * 1000
            if job_type.startswith("forward") and micro_batch == "0":
                if step_start is not None:
                    steps.append((step_start, step_end))
                step_start = start_us
            step_end = end_us
            for phase, ts in (("B", start_us), ("E", end_us)):
                event = {"name": f"{job_type}_{job_id}", "cat": job_type, "ph": phase, "ts": ts, "pid": 0,
                         "tid": f"GPU{device}"}
                if job_type in COLOURS:
                    event["cname"] = COLOURS[job_type]
                events.append(event)
        steps.append((step_start, step_end))
        for i, (start, end) in enumerate(steps):
            if i == len(merged_steps):
                merged_steps.append([start, end])
            merged_steps[i] = [min(merged_steps[i][0], start), max(merged_steps[i][1], end)]
    for i, (start, end) in enumerate(merged_steps):
        if i > 0:
            start = max(start, merged_steps[i - 1][1])
        for phase, ts in (("B", start), ("E", end)):
            events.append({"name": f"step{i}", "cat": "step", "ph": phase, "ts": ts, "pid": 0, "tid": "Step",
                           "cname": "thread_state_unknown"})
    return events


def main():
    jobviz, fixture = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as work:
        logs = os.path.join(work, "logs")
        shutil.copytree(fixture, logs)
        # As users of the original script type it.
        subprocess.run([jobviz, "--devices", "0,1", "--log_dir", logs, "-q", "--no-summary"], check=True)
        with open(os.path.join(logs, "pipeline_profile.json")) as f:
            got = json.load(f)
    want = expected_events(fixture, [0, 1])
    assert list(got) == ["traceEvents"], f"top level {list(got)}"
    got = got["traceEvents"]
    problems = []
    if len(got) != len(want):
        problems.append(f"{len(got)} events, the original's format has {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if set(g) != set(w):
            problems.append(f"event {i}: keys {sorted(g)} != {sorted(w)}")
        for key in w:
            if key == "ts":
                if abs(g.get("ts", float("nan")) - w["ts"]) > 0.5:
                    problems.append(f"event {i} ({w['name']} {w['ph']}): ts {g.get('ts')} != {w['ts']}")
            elif g.get(key) != w[key]:
                problems.append(f"event {i}: {key} {g.get(key)!r} != {w[key]!r}")
    for p in problems[:20]:
        print("FAIL:", p)
    print(f"{len(got)} events compared, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
