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
    # Debian's python3-torch belongs to Debian's interpreter, which may not be
    # the python3 first on PATH (pyenv, a venv): try that one once.
    debian = "/usr/bin/python3"
    if os.path.exists(debian) and os.path.realpath(sys.executable) != os.path.realpath(debian) \
            and "JOBVIZ_TORCH_REEXEC" not in os.environ:
        os.environ["JOBVIZ_TORCH_REEXEC"] = "1"
        os.execv(debian, [debian] + sys.argv)
    print("torch is not installed (Debian: python3-torch); skipped")
    sys.exit(77)


def stage_main(stage, root, port):
    import jobviz
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=stage, world_size=pc.STAGES)
    buffer = torch.zeros(1)

    def receive(kind, mb):
        dist.recv(buffer, src=stage - 1 if kind == "forward" else stage + 1)
        assert int(buffer.item()) == mb, (stage, kind, buffer.item(), mb)

    pending = []  # isend: two neighbours sending to each other at once must not block

    def send(kind, mb):
        tensor = torch.tensor([float(mb)])
        pending.append((tensor, dist.isend(tensor, dst=stage + 1 if kind == "forward" else stage - 1)))

    lost = pc.run_stage(jobviz, stage, root, dist.barrier, receive, send)
    for _, request in pending:
        request.wait()
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
