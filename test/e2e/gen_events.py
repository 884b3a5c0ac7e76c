#!/usr/bin/env python3
"""tools/gen_events (jobviz-gen-events) writes what `jobviz extract` writes.

usage: gen_events.py JOBVIZ GEN_EVENTS

The generator writes each node's events file without its logs (the 131,072-GPU
benchmark, tools/bench-merge-scale, would not fit on a disk as logs); for the
nodes named by --logs_of it also writes the logs. `jobviz extract` of those
logs must give the same records, file list and totals byte for byte
(decompressed), and `jobviz merge` of every node must find the topology,
every job and every step.
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

JOBVIZ, GEN = (os.path.abspath(a) for a in sys.argv[1:3])
PP, MP, DP, PER_MACHINE, STEPS, MICRO_BATCHES = 4, 4, 3, 2, 3, 6
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


with tempfile.TemporaryDirectory() as out:
    nodes = PP * MP * DP // PER_MACHINE
    sample = [0, 7, nodes - 1]  # the first node, one inside, the last replica's last stage
    subprocess.run([GEN, "--out", out, "--pp", str(PP), "--mp", str(MP), "--dp", str(DP), "--per_machine",
                    str(PER_MACHINE), "--steps", str(STEPS), "--microbatches", str(MICRO_BATCHES), "--logs_of",
                    ",".join(map(str, sample)), "-j", "2"], check=True, stdout=subprocess.DEVNULL)
    files = sorted(f for f in os.listdir(out) if f.endswith(".jsonl.gz"))
    check(len(files) == nodes, f"{len(files)} events files, expected {nodes}")
    for node in sample:
        extracted = os.path.join(out, f"extracted{node}.jsonl.gz")
        subprocess.run([JOBVIZ, "extract", "--log_dir", f"logs/machine{node}", "--machine", f"machine{node}", "-o",
                        extracted, "-q"], cwd=out, check=True)
        made = gzip.open(os.path.join(out, f"machine{node}.jsonl.gz")).read()
        check(gzip.open(extracted).read() == made, f"machine{node}: the generator's events differ from extract's")
        os.remove(extracted)
        records = [json.loads(line) for line in made.splitlines()]
        jobs = sum(r.get("k") == "job" for r in records)
        check(jobs == PER_MACHINE * STEPS * (2 * MICRO_BATCHES + 1), f"machine{node}: {jobs} jobs")
    summary = os.path.join(out, "s.json")
    merged = subprocess.run([JOBVIZ, "merge", *[os.path.join(out, f) for f in files], "-o", os.path.join(out, "t.pftrace"),
                             "--summary-json", summary], capture_output=True, text=True)
    check(merged.returncode == 0, f"merge: exit {merged.returncode}: {merged.stderr[-600:]}")
    if merged.returncode == 0:
        s = json.load(open(summary))
        total = PP * MP * DP * STEPS * (2 * MICRO_BATCHES + 1)
        check(s["counts"]["jobs"] == total, f"merge drew {s['counts']['jobs']} jobs, expected {total}")
        check(len(s["steps"]) == STEPS, f"merge found {len(s['steps'])} steps, expected {STEPS}")
        check(f"pp{PP} × mp{MP} × dp{DP}" in merged.stderr, "merge did not find the topology:\n" + merged.stderr[-600:])
        check("pipeline order violations: 0 before clock alignment, 0 after" in merged.stderr,
              "the generated hand-offs are out of pipeline order:\n" + merged.stderr[-600:])

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("gen_events: the generator writes what extract writes")
