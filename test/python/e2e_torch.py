#!/usr/bin/env python3
"""The 1F1B pipeline of e2e_processes.py with torch.distributed (gloo):
send/recv of a tensor between stages and torch.distributed.barrier for clock
sync. Exits 77 (skipped) when torch is not installed.

usage: e2e_torch.py JOBVIZ_EXE
"""
import os
import socket
import sys
import tempfile

import pipeline_common as pc

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
except ImportError:
    print("torch is not installed (Debian: python3-torch); skipped")
    sys.exit(77)


def stage_main(stage, root, port):
    import jobviz
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=stage, world_size=pc.STAGES)
    buffer = torch.zeros(1)

    def receive(kind, mb):
        dist.recv(buffer, src=stage - 1 if kind == "forward" else stage + 1)
        assert int(buffer.item()) == mb, (stage, kind, buffer.item(), mb)

    def send(kind, mb):
        dist.send(torch.tensor([float(mb)]), dst=stage + 1 if kind == "forward" else stage - 1)

    lost = pc.run_stage(jobviz, stage, root, dist.barrier, receive, send)
    assert lost == 0, lost
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    jobviz_exe = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="jobviz_torch_e2e_") as root:
        mp.spawn(stage_main, args=(root, free_port()), nprocs=pc.STAGES, join=True)
        pc.check_jobviz(jobviz_exe, root)
    print("ok: torch.distributed (gloo) pipeline, every job drawn, aligned by torch.distributed.barrier")


if __name__ == "__main__":
    main()
