#!/usr/bin/env python3
"""End to end: jobviz-pipeline-demo (CPU backend) -> jobviz -> trace checks.

usage: demo_to_trace.py DEMO JOBVIZ

Runs a 2-machine x 2-worker 1F1B pipeline with a profiling window, draws it,
and checks that the trace holds every job of the window and that on each
machine no micro-batch's forward on stage s+1 starts before its forward on
stage s ended (and backward the other way round).
"""
import json
import os
import subprocess
import sys
import tempfile

MACHINES, DEVICES, MICROBATCHES, STEPS, START, END = 2, 2, 4, 5, 1, 4


def main():
    demo, jobviz = sys.argv[1:3]
    with tempfile.TemporaryDirectory(prefix="jobviz_e2e_") as logs:
        subprocess.run([demo, "--log_dir", logs, "--machines", str(MACHINES), "--devices", str(DEVICES),
                        "--microbatches", str(MICROBATCHES), "--steps", str(STEPS),
                        "--profile_start", str(START), "--profile_end", str(END),
                        "--forward_us", "300", "--backward_us", "500", "--transfer_us", "50"], check=True)
        trace_path = os.path.join(logs, "trace.json")
        subprocess.run([jobviz, "--log_dir", logs, "--multi_machine", "-o", trace_path, "--no-chrome", "-q",
                        "--json-args", "full"], check=True)
        with open(trace_path) as f:
            trace = json.load(f)

    jobs = [e for e in trace["traceEvents"] if e["ph"] == "X" and e.get("cat") not in ("step", "critical_path")]
    steps = sorted(e["args"]["step"] for e in trace["traceEvents"] if e.get("cat") == "step")
    failures = []
    window_steps = list(range(START, END))
    if steps != window_steps:
        failures.append("steps %s, expected %s" % (steps, window_steps))
    expected_jobs = MACHINES * DEVICES * len(window_steps) * (2 * MICROBATCHES + 1)
    if len(jobs) != expected_jobs:
        failures.append("%d jobs in the trace, expected %d" % (len(jobs), expected_jobs))

    # (machine, worker, step, type, micro_batch) -> (start, end)
    spans = {}
    for e in jobs:
        a = e["args"]
        spans[(a["machine"], a["worker"], a["step"], a["type"], a["micro_batch"])] = (e["ts"], e["ts"] + e["dur"])
    checked = 0
    for machine in range(MACHINES):
        for step in window_steps:
            for mb in range(MICROBATCHES):
                for worker in range(DEVICES - 1):
                    f_here = spans[(machine, worker, step, "forward", mb)]
                    f_next = spans[(machine, worker + 1, step, "forward", mb)]
                    b_here = spans[(machine, worker, step, "backward", mb)]
                    b_next = spans[(machine, worker + 1, step, "backward", mb)]
                    checked += 1
                    if f_next[0] < f_here[1]:
                        failures.append("machine%d step %d mb %d: forward on worker %d starts %.3f us before "
                                        "worker %d's ended" % (machine, step, mb, worker + 1, f_here[1] - f_next[0], worker))
                    if b_here[0] < b_next[1]:
                        failures.append("machine%d step %d mb %d: backward on worker %d starts before worker %d's ended"
                                        % (machine, step, mb, worker, worker + 1))
    for failure in failures:
        print("FAIL:", failure)
    print("%d jobs, %d steps, %d stage hand-offs checked" % (len(jobs), len(steps), checked))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
