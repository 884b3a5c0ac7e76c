#!/usr/bin/env python3
"""Two torch.cuda streams of one GPU as two pipeline stages, each marked by
its own jobviz.Profiler: 1F1B with bf16 matrix products as the work and
torch.cuda.Event hand-offs between the streams; stage 0 also syncs its clock
through jobviz's own one-rank NCCL communicator. jobviz must draw every job
with the pipeline order holding. Exits 77 (skipped) without torch or a GPU.

usage: e2e_torch_cuda.py JOBVIZ_EXE [LOG_DIR]
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import pipeline_common as pc

try:
    import torch
except ImportError:
    print("torch is not installed; skipped")
    sys.exit(77)
if not torch.cuda.is_available():
    print("torch sees no CUDA device; skipped")
    sys.exit(77)

import jobviz  # noqa: E402  (after the skip: a build without CUDA still imports)

STAGES, MICRO_BATCHES, STEPS = 2, 6, 5
SIZE = 4096
PRODUCTS = {"forward": 2, "backward": 4, "optimizer": 1}  # bf16 4096^3 products per job


def run(root):
    streams = [torch.cuda.Stream() for _ in range(STAGES)]
    profilers = [jobviz.Profiler(rank=s, local_worker=s, world_size=STAGES,
                                 log_path=os.path.join(root, "workerlog.%d" % s)) for s in range(STAGES)]
    nccl = jobviz.NcclCommunicator(jobviz.nccl_unique_id(), 0, 1)
    profilers[0].sync_clocks(nccl, streams[0])
    a = [torch.randn(SIZE, SIZE, device="cuda", dtype=torch.bfloat16) for _ in range(STAGES)]
    b = torch.randn(SIZE, SIZE, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    for step in range(STEPS):
        for p in profilers:
            p.begin_step(step)
        done = {}  # (stage, kind, mb) -> torch.cuda.Event recorded when the job ended
        queues = [list(pc.schedule(s, STAGES, MICRO_BATCHES)) for s in range(STAGES)]
        # One launching thread: take the next job of a stage whose input is recorded already
        # (waiting on an event not yet recorded would not wait at all).
        while any(queues):
            progressed = False
            for s in range(STAGES):
                if not queues[s]:
                    continue
                kind, mb = queues[s][0]
                source = (s - 1, "forward", mb) if kind == "forward" else (s + 1, "backward", mb)
                needs = 0 <= source[0] < STAGES
                if needs and source not in done:
                    continue
                queues[s].pop(0)
                progressed = True
                stream = streams[s]
                if needs:
                    stream.wait_event(done[source])
                with torch.cuda.stream(stream), profilers[s].job(stream, kind, micro_batch=mb):
                    x = a[s]
                    for _ in range(PRODUCTS[kind]):
                        x = x @ b
                event = torch.cuda.Event()
                event.record(stream)
                done[(s, kind, mb)] = event
            assert progressed, "no stage can go on: %s" % queues
        for s in range(STAGES):
            with torch.cuda.stream(streams[s]), profilers[s].job(streams[s], "optimizer"):
                a[s].mul_(0.5)
                a[s] @ b
        torch.cuda.synchronize()
        for p in profilers:
            p.end_step()
    profilers[0].sync_clocks(nccl, streams[0])
    torch.cuda.synchronize()
    lost = sum(p.records_lost for p in profilers)
    for p in profilers:
        p.close()
    nccl.close()
    assert lost == 0, "%d records lost" % lost


def check(jobviz_exe, root):
    summary = os.path.join(root, "summary.json")
    result = subprocess.run([jobviz_exe, "--log_dir", root, "--no-chrome", "-o", os.path.join(root, "trace.json"),
                             "--summary-json", summary], capture_output=True, text=True, timeout=120)
    print(result.stderr)
    assert result.returncode == 0, result.returncode
    expected = STEPS * STAGES * (2 * MICRO_BATCHES + 1)
    drawn = re.search(r"(\d+) jobs drawn, (\d+) skipped", result.stderr)
    assert drawn and int(drawn.group(1)) == expected and drawn.group(2) == "0", (drawn and drawn.groups(), expected)
    pc.check_hand_offs([os.path.join(root, "workerlog.%d" % st) for st in range(STAGES)], STEPS, MICRO_BATCHES)
    with open(summary) as f:
        steps = json.load(f)["steps"]
    assert len(steps) == STEPS, len(steps)
    print("ok: %d jobs on two torch.cuda streams drawn, pipeline order holds; step times %s ms" %
          (expected, ", ".join("%.2f" % (s["duration_us"] / 1e3) for s in steps)))


def main():
    jobviz_exe = sys.argv[1]
    if len(sys.argv) > 2:
        os.makedirs(sys.argv[2], exist_ok=True)
        run(sys.argv[2])
        check(jobviz_exe, sys.argv[2])
        return
    with tempfile.TemporaryDirectory(prefix="jobviz_torch_cuda_") as root:
        run(root)
        check(jobviz_exe, root)


if __name__ == "__main__":
    main()
