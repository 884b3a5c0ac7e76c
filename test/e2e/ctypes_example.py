#!/usr/bin/env python3
"""Runs docs/examples/jobviz_ctypes.py against the built libjobviz (CPU
backend), then draws its log with jobviz: 15 jobs in 3 steps.

usage: ctypes_example.py EXAMPLE LIBJOBVIZ JOBVIZ
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    example, lib, jobviz = sys.argv[1:4]
    with tempfile.TemporaryDirectory(prefix="jobviz_ctypes_") as logs:
        subprocess.run([sys.executable, example, "--lib", os.path.abspath(lib),
                        "--log", os.path.join(logs, "workerlog.0")], check=True)
        trace_path = os.path.join(logs, "t.json")
        subprocess.run([jobviz, "--log_dir", logs, "-o", trace_path, "--no-chrome", "-q"], check=True)
        with open(trace_path) as f:
            events = json.load(f)["traceEvents"]
    jobs = [e for e in events if e["ph"] == "X" and "source" in e["args"]]
    steps = [e for e in events if e.get("cat") == "step"]
    ok = len(jobs) == 15 and len(steps) == 3 and all(e["dur"] >= 400 for e in jobs)
    print("%d jobs, %d steps" % (len(jobs), len(steps)))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
