#!/usr/bin/env python3
"""The summary's step windows are the steps the trace draws, to the
nanosecond: NVTX steps with named ranges inside, NVTX steps on skewed
machines, and steps from job order.

  step_windows_agree.py JOBVIZ SOURCE_ROOT
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal

CASES = [("test/fixtures/paddle/named_nvtx", []), ("test/fixtures/skewed", ["--multi_machine"]),
         ("test/fixtures/legacy_original", [])]


def trace_steps(trace):
    origin = Decimal(trace["metadata"]["trace_origin_ns"])
    steps = {}
    for event in trace["traceEvents"]:
        if event.get("cat") == "step":
            start = origin + Decimal(str(event["ts"])) * 1000
            steps[event["name"]] = (int(start), int(start + Decimal(str(event["dur"])) * 1000))
    return steps


def main():
    jobviz, root = sys.argv[1], sys.argv[2]
    failures = 0
    for fixture, extra in CASES:
        with tempfile.TemporaryDirectory() as work:
            logs = os.path.join(work, "logs")
            shutil.copytree(os.path.join(root, fixture), logs)
            subprocess.run([jobviz, "--log_dir", logs, *extra, "-q", "--no-chrome", "--summary-json",
                            os.path.join(work, "s.json")], check=True)
            with open(os.path.join(work, "s.json")) as f:
                summary = json.load(f)
            with open(os.path.join(logs, "pipeline_profile_perfetto.json")) as f:
                drawn = trace_steps(json.load(f, parse_float=Decimal))
        for step in summary["steps"]:
            name = f"step{step['step']}"
            if drawn.get(name) != (step["start_ns"], step["end_ns"]):
                print(f"FAIL {fixture}: {name} is {step['start_ns']}..{step['end_ns']} in the summary, "
                      f"{drawn.get(name)} in the trace")
                failures += 1
        print(f"{fixture}: {len(summary['steps'])} steps compared")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
