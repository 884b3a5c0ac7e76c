#!/usr/bin/env python3
"""jobviz follow --record (docs/history.md): the followed run in the ledger as it goes.

usage: follow_record.py JOBVIZ SOURCE_ROOT

The sample run's logs are written in two halves while `jobviz follow
--record` follows them: after the first half the ledger holds the run as
running with the steps printed so far; after the second half and SIGINT, the
run as it ended (finished, every step), identified by its logs' content: a
batch `jobviz --record` of the same logs adds nothing.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

JOBVIZ, SOURCE = (os.path.abspath(a) for a in sys.argv[1:3])
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def runs(db):
    if not os.path.exists(db):
        return []
    r = subprocess.run([JOBVIZ, "history", db, "--json"], capture_output=True, text=True)
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()] if r.returncode == 0 else []


def wait_for(db, predicate, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        found = runs(db)
        if found and predicate(found[-1]):
            return found
        time.sleep(0.2)
    return runs(db)


with tempfile.TemporaryDirectory() as out:
    sample = os.path.join(SOURCE, "sample_logs", "multi_machine_logs")
    logs = os.path.join(out, "logs")
    rest = {}
    for machine in sorted(m for m in os.listdir(sample) if m.startswith("machine")):
        os.makedirs(os.path.join(logs, machine))
        for name in (n for n in os.listdir(os.path.join(sample, machine)) if n.startswith("workerlog")):
            lines = open(os.path.join(sample, machine, name)).read().splitlines(keepends=True)
            cut = len(lines) * 3 // 4
            with open(os.path.join(logs, machine, name), "w") as f:
                f.writelines(lines[:cut])
            rest[os.path.join(logs, machine, name)] = lines[cut:]
    db = os.path.join(out, "runs.db")
    follow = subprocess.Popen([JOBVIZ, "follow", "--log_dir", logs, "--multi_machine", "--record", db, "--run-name", "live",
                               "--poll", "0.2", "--stall-after", "600"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        found = wait_for(db, lambda r: r["steps"] >= 1)
        check(found and found[-1]["stopped"]["kind"] == "running", f"while followed: {found[-1] if found else None}")
        live_steps = found[-1]["steps"] if found else 0
        check(0 < live_steps < 3, f"{live_steps} steps recorded from the first half")
        for path, lines in rest.items():
            with open(path, "a") as f:
                f.writelines(lines)
        found = wait_for(db, lambda r: r["steps"] == 3)
        check(found and found[-1]["steps"] == 3, f"after the second half: {found[-1] if found else None}")
    finally:
        follow.send_signal(signal.SIGINT)
        _, stderr = follow.communicate(timeout=60)
    check(follow.returncode == 0, f"follow exit {follow.returncode}: {stderr[-500:]}")
    found = runs(db)
    check(len(found) == 1, f"{len(found)} runs in the ledger, expected 1 (the live one replaced)")
    if found:
        check(found[0]["stopped"]["kind"] == "finished" and found[0]["steps"] == 3 and found[0]["name"] == "live",
              f"the run as it ended: {found[0]}")
        check(not found[0]["identity"].startswith("live-"), "the ended run keeps its live identity")
    batch = subprocess.run([JOBVIZ, "--log_dir", logs, "--multi_machine", "-o", os.path.join(out, "t.json"), "--no-chrome",
                            "--no-summary", "--record", db], capture_output=True, text=True)
    check(batch.returncode == 0 and "already" in batch.stderr, f"a batch record of the same logs: {batch.stderr[-300:]}")

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("follow_record: all checks passed")
