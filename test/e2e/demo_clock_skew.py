#!/usr/bin/env python3
"""End to end: jobviz-pipeline-demo (CPU) with injected clock skew -> jobviz.

usage: demo_clock_skew.py DEMO JOBVIZ

3 machines x 2 workers; machine1's clock is emulated +3.7 ms ahead,
machine2's 2.6 ms behind (both beyond the 2 ms transfer time, so the raw
timeline breaks pipeline order at both machine boundaries; causal alignment
leaves a clock alone where it does not). The demo runs clock-sync rounds at the
window's start and end. jobviz must recover the offsets (sync, and causal
without using the sync lines) and leave no order violation.
"""
import json
import os
import subprocess
import sys
import tempfile

SKEW_US = {1: 3700.0, 2: -2600.0}
TOLERANCE_US = 1000.0  # CPU barrier wake-up jitter on a loaded 2-core machine


def main():
    demo, jobviz = sys.argv[1:3]
    failures = []
    with tempfile.TemporaryDirectory(prefix="jobviz_skew_") as logs:
        subprocess.run([demo, "--log_dir", logs, "--machines", "3", "--devices", "2", "--microbatches", "4",
                        "--steps", "5", "--profile_start", "1", "--profile_end", "4", "--forward_us", "300",
                        "--backward_us", "500", "--transfer_us", "2000",
                        "--clock_skew_ms", "machine1=+3.7,machine2=-2.6"], check=True)
        for method in ("sync", "causal"):
            out = os.path.join(logs, method + ".json")
            report = subprocess.run([jobviz, "--log_dir", logs, "--multi_machine", "--clock_align", method,
                                     "--no-chrome", "-o", out], check=True, stderr=subprocess.PIPE,
                                    text=True).stderr
            violations = [l for l in report.splitlines() if "violations" in l]
            print(method + ": " + " | ".join(l for l in report.splitlines() if "clocks" in l or "violations" in l))
            if not violations or not violations[0].endswith(" 0 after"):
                failures.append("%s: violations remain: %s" % (method, violations))
            if violations and violations[0].split(": ")[1].startswith("0 before"):
                failures.append("%s: the injected skew should break pipeline order before alignment" % method)
            with open(out) as f:
                metadata = json.load(f)["metadata"]
            for machine, skew in SKEW_US.items():
                got = metadata["clock_offset_ns machine%d" % machine] / 1000.0
                if abs(got - skew) > TOLERANCE_US:
                    failures.append("%s: machine%d offset %.1f us, injected %.1f us" % (method, machine, got, skew))
    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
