#!/usr/bin/env python3
"""Four processes (2 emulated machines x 2 workers, machine1's clock 4 ms
ahead) run a 1F1B pipeline on CpuStreams through the `jobviz` package,
handing micro-batches over multiprocessing queues and syncing clocks through
a multiprocessing.Barrier; jobviz --multi_machine then draws every job,
aligns machine1 by its sync lines and finds no pipeline-order violation.

usage: e2e_processes.py JOBVIZ_EXE   (PYTHONPATH must reach the package)
"""
import multiprocessing
import sys
import tempfile

import pipeline_common as pc


def stage_main(stage, root, barrier, inbox, outbox, result):
    import jobviz  # in the child: each process loads libjobviz itself

    def receive(kind, mb):
        got = inbox[kind].get(timeout=60)
        assert got == mb, (stage, kind, got, mb)

    def send(kind, mb):
        outbox[kind].put(mb)

    result.put((stage, pc.run_stage(jobviz, stage, root, barrier.wait, receive, send)))


def main():
    jobviz_exe = sys.argv[1]
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(pc.STAGES)
    # forward_q[s]: into stage s from s-1; backward_q[s]: into stage s from s+1.
    forward_q = [context.Queue() for _ in range(pc.STAGES)]
    backward_q = [context.Queue() for _ in range(pc.STAGES)]
    result = context.Queue()
    with tempfile.TemporaryDirectory(prefix="jobviz_py_e2e_") as root:
        processes = []
        for s in range(pc.STAGES):
            inbox = {"forward": forward_q[s], "backward": backward_q[s]}
            outbox = {"forward": forward_q[(s + 1) % pc.STAGES], "backward": backward_q[(s - 1) % pc.STAGES]}
            processes.append(context.Process(target=stage_main, args=(s, root, barrier, inbox, outbox, result)))
        for p in processes:
            p.start()
        for p in processes:
            p.join(120)
            assert p.exitcode == 0, p.exitcode
        lost = dict(result.get(timeout=5) for _ in processes)
        assert all(v == 0 for v in lost.values()), lost
        pc.check_jobviz(jobviz_exe, root)
    print("ok: 4 processes, every job drawn, machine1 aligned by the barrier sync")


if __name__ == "__main__":
    main()
