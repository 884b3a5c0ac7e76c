#!/usr/bin/env python3
"""The Open MPI recipes of docs/extract-merge.md and docs/follow.md, run for
real: `mpirun --oversubscribe --allow-run-as-root -np 4`, each rank one
machine of a 4-machine run.

- Finished run: each rank runs `jobviz extract` on its machine's logs; `jobviz
  merge` of the four events files writes the same trace, legacy trace and
  summary as jobviz on the whole tree, byte for byte.
- Running job: the logs grow while `mpirun -np 1 jobviz follow` runs on them,
  and its steps come out (on mpirun's stdout) while they grow.
- Running job, logs on each node: `mpirun -np 4` runs `extract --follow` per
  machine into stream files; `jobviz merge --follow` of the four prints every
  step while the logs grow.
Exits 77 without mpirun (Debian's openmpi-bin; tools/install-deps installs it).

    mpi_recipe.py JOBVIZ GEN_LOGS SOURCE_ROOT
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

JOBVIZ, GEN_LOGS, ROOT = (os.path.abspath(a) for a in sys.argv[1:4])
MPIRUN = shutil.which("mpirun")
MPI = [MPIRUN, "--oversubscribe", "--allow-run-as-root", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo"]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def finished_run(tmp):
    subprocess.run([GEN_LOGS, "--out", os.path.join(tmp, "logs"), "--machines", "4", "--workers", "2", "--steps", "6",
                    "--microbatches", "4", "--sync_rounds", "3", "--clock_skew_ms", "machine1=+3.7,machine3=-1.2"],
                   check=True, stdout=subprocess.DEVNULL)
    # The recipe, as documented: one process per machine, each naming itself by its rank.
    recipe = ('jobviz extract --log_dir logs/machine$OMPI_COMM_WORLD_RANK --machine machine$OMPI_COMM_WORLD_RANK '
              '-o events/machine$OMPI_COMM_WORLD_RANK.jsonl.gz -q')
    os.makedirs(os.path.join(tmp, "events"))
    env = dict(os.environ, PATH=os.path.dirname(JOBVIZ) + os.pathsep + os.environ["PATH"])
    ran = subprocess.run(MPI + ["-np", "4", "bash", "-c", recipe], cwd=tmp, env=env, capture_output=True, text=True,
                         timeout=120)
    check(ran.returncode == 0, f"mpirun extract: exit {ran.returncode}: {ran.stderr[-2000:]}")
    events = sorted(os.listdir(os.path.join(tmp, "events")))
    check(events == [f"machine{m}.jsonl.gz" for m in range(4)], f"events files: {events}")
    outputs = ["-o", "{0}.json", "--chrome-output", "{0}_legacy.json", "--summary-json", "{0}_summary.json", "-q"]
    subprocess.run([JOBVIZ, "--log_dir", "logs", "--multi_machine"] + [a.format("direct") for a in outputs],
                   cwd=tmp, check=True)
    subprocess.run([JOBVIZ, "merge"] + [os.path.join("events", e) for e in events] + [a.format("merged") for a in outputs],
                   cwd=tmp, check=True)
    for suffix in (".json", "_legacy.json", "_summary.json"):
        with open(os.path.join(tmp, "direct" + suffix), "rb") as a, open(os.path.join(tmp, "merged" + suffix), "rb") as b:
            check(a.read() == b.read(), f"merge of the mpirun extracts differs from the direct run: {suffix}")


def running_logs(tmp):
    """A 12-step run of 4 machines (src) and where it will be replayed as it grows (dst)."""
    src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
    subprocess.run([GEN_LOGS, "--out", src, "--machines", "4", "--workers", "2", "--steps", "12", "--microbatches", "4",
                    "--sync_rounds", "3"], check=True, stdout=subprocess.DEVNULL)
    return src, dst


def replay(src, dst):
    return subprocess.Popen([os.path.join(ROOT, "tools", "follow-replay"), src, dst, "--ticks", "8", "--interval", "0.5",
                             "--split-lines"])


def steps_while_growing(steps_out, growing):
    """The step of each JSON line on `steps_out`, and whether one came while `growing` still wrote."""
    seen_while_growing, steps = False, []
    for line in steps_out:
        steps.append(json.loads(line)["step"])
        seen_while_growing |= growing.poll() is None
    return steps, seen_while_growing


def running_job(tmp):
    src, dst = running_logs(tmp)
    os.makedirs(dst)
    growing = replay(src, dst)
    follow = subprocess.Popen(MPI + ["-np", "1", JOBVIZ, "follow", "--log_dir", dst, "--multi_machine", "--json",
                                     "--poll", "0.2", "--stall-after", "2", "--exit-on-stall"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    steps, seen_while_growing = steps_while_growing(follow.stdout, growing)
    rc = follow.wait(timeout=60)
    growing.wait()
    check(rc == 0, f"mpirun jobviz follow: exit {rc}: {follow.stderr.read()[-2000:]}")
    check(seen_while_growing, "no step came out of mpirun while the logs grew")
    check(steps == list(range(12)), f"steps through mpirun: {steps}")


def running_job_on_nodes(tmp):
    src, dst = running_logs(tmp)
    for m in range(4):
        os.makedirs(os.path.join(dst, f"machine{m}"))
    os.makedirs(os.path.join(tmp, "streams"))
    recipe = ('exec jobviz extract --follow --log_dir dst/machine$OMPI_COMM_WORLD_RANK --machine machine$OMPI_COMM_WORLD_RANK '
              '-o streams/machine$OMPI_COMM_WORLD_RANK.jsonl --poll 0.2 -q')
    env = dict(os.environ, PATH=os.path.dirname(JOBVIZ) + os.pathsep + os.environ["PATH"])
    extract = subprocess.Popen(MPI + ["-np", "4", "bash", "-c", recipe], cwd=tmp, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    streams = [os.path.join("streams", f"machine{m}.jsonl") for m in range(4)]
    merge = subprocess.Popen([JOBVIZ, "merge", "--follow", "--json", "--poll", "0.2", "--stall-after", "3",
                              "--exit-on-stall", *streams], cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    growing = replay(src, dst)
    steps, seen_while_growing = steps_while_growing(merge.stdout, growing)
    rc = merge.wait(timeout=60)
    growing.wait()
    extract.terminate()  # mpirun passes SIGTERM on: each extract ends its stream
    extract.wait(timeout=60)
    check(rc == 0, f"merge --follow of the mpirun streams: exit {rc}: {merge.stderr.read()[-2000:]}")
    check(seen_while_growing, "merge --follow printed no step while the logs grew")
    check(steps == list(range(12)), f"steps of the mpirun streams: {steps}")
    for stream in streams:
        with open(os.path.join(tmp, stream)) as f:
            last = f.read().rstrip("\n").rsplit("\n", 1)[-1]
        check(last.startswith('{"end":"jobviz-events"'), f"{stream} does not end with its end line: {last[:120]}")


def main():
    if not MPIRUN:
        print("mpirun not found (Debian's openmpi-bin): skipped")
        sys.exit(77)
    for test in (finished_run, running_job, running_job_on_nodes):
        with tempfile.TemporaryDirectory(prefix="jobviz_mpi_") as tmp:
            started = time.time()
            test(tmp)
            print(f"{test.__name__}: {time.time() - started:.1f} s")
    if failures:
        sys.exit(f"{len(failures)} failures")
    print("the Open MPI recipes work")


main()
