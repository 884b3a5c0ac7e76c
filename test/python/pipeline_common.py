"""What the Python end-to-end tests share: a 1F1B pipeline of stages run by
separate processes through the `jobviz` package, and the check of jobviz's
report on their logs."""
import json
import os
import re
import subprocess

STAGES = 4            # 2 emulated machines x 2 workers
MACHINES = 2
MICRO_BATCHES = 4
STEPS = 4
WINDOW = (1, 4)       # steps 1..3 are recorded
FORWARD_US, BACKWARD_US, OPTIMIZER_US = 1500, 3000, 500
TRANSFER_US = 1000    # a hand-off takes this long before the receiver's job starts
SKEW_NS = 4_000_000   # machine1's clock reads 4 ms ahead


def schedule(stage, stages=STAGES, micro_batches=MICRO_BATCHES):
    """1F1B: warm-up forwards, then one forward one backward, then the remaining backwards."""
    warm = min(stages - stage - 1, micro_batches)
    ops = [("forward", i) for i in range(warm)]
    f = warm
    b = 0
    while f < micro_batches:
        ops += [("forward", f), ("backward", b)]
        f += 1
        b += 1
    ops += [("backward", i) for i in range(b, micro_batches)]
    return ops


def place(stage):
    """(machine, local worker) of a stage: stages fill machine0 first."""
    per_machine = STAGES // MACHINES
    return stage // per_machine, stage % per_machine


def log_path(root, stage):
    machine, worker = place(stage)
    directory = os.path.join(root, "machine%d" % machine)
    os.makedirs(directory, exist_ok=True)
    return os.path.join(directory, "workerlog.%d" % worker)


def run_stage(jobviz, stage, root, barrier, receive, send):
    """One stage's training loop. receive(kind, mb) blocks until the neighbour
    handed micro-batch mb over; send(kind, mb) hands it on. kind is
    "forward" (from the previous stage) or "backward" (from the next one)."""
    machine, worker = place(stage)
    prof = jobviz.Profiler(rank=stage, local_worker=worker, world_size=STAGES, log_path=log_path(root, stage),
                           window=WINDOW, emulate_clock_offset_ns=SKEW_NS if machine == 1 else 0)
    stream = jobviz.CpuStream()
    prof.attach_clock_sync(jobviz.BarrierCommunicator(barrier, stage, STAGES))
    for step in range(STEPS):
        with prof.step(step):
            for kind, mb in schedule(stage):
                first, last = stage == 0, stage == STAGES - 1
                if (kind == "forward" and not first) or (kind == "backward" and not last):
                    receive(kind, mb)
                    stream.sleep(TRANSFER_US)  # the activation's transfer, as on a real interconnect
                with prof.job(stream, kind, micro_batch=mb):
                    stream.sleep(FORWARD_US if kind == "forward" else BACKWARD_US)
                stream.synchronize()  # the hand-off leaves once the job ran
                if (kind == "forward" and not last) or (kind == "backward" and not first):
                    send(kind, mb)
            with prof.job(stream, "optimizer"):
                stream.sleep(OPTIMIZER_US)
            stream.synchronize()
    lost = prof.records_lost
    prof.close()
    stream.close()
    return lost


def expected_jobs():
    steps = WINDOW[1] - WINDOW[0]
    return steps * STAGES * (2 * MICRO_BATCHES + 1)


def check_jobviz(jobviz_exe, root):
    """Runs jobviz on the logs and checks what the issue asks: every job, the
    sync alignment with machine1's skew found, zero order violations after."""
    summary = os.path.join(root, "summary.json")
    result = subprocess.run([jobviz_exe, "--log_dir", root, "--multi_machine", "--no-chrome",
                             "--summary-json", summary], capture_output=True, text=True, timeout=120)
    print(result.stderr)
    assert result.returncode == 0, result.returncode
    drawn = re.search(r"(\d+) jobs drawn, (\d+) skipped", result.stderr)
    assert drawn and int(drawn.group(1)) == expected_jobs() and drawn.group(2) == "0", drawn.groups()
    assert re.search(r"clocks: machine0 reference, machine1 sync", result.stderr), "no sync alignment"
    violations = re.search(r"pipeline order violations: (\d+) before clock alignment, (\d+) after", result.stderr)
    assert violations and int(violations.group(1)) > 0 and violations.group(2) == "0", violations.groups()
    with open(summary) as f:
        clock = json.load(f)["clock"]
    error_us = abs(clock[1]["offset_us"] - SKEW_NS / 1000)
    print("machine1 offset %.1f us (emulated %.1f us): error %.1f us" %
          (clock[1]["offset_us"], SKEW_NS / 1000, error_us))
    assert error_us < 2000, error_us  # barrier release skew on a loaded machine stays far below this
    return error_us


JOB = re.compile(r"Job \((\d+)\), type = (\w+), micro_batch_id = (\d+), "
                 r"job_start_time = (\d+\.\d+), job_end_time = (\d+\.\d+)")


def nanos(millis):
    whole, fraction = millis.split(".")
    return int(whole) * 1_000_000 + int(fraction)


def check_hand_offs(logs, steps, micro_batches):
    """Each hand-off in 1F1B logs (one per stage, in stage order, every step's jobs
    followed by one optimizer): a forward starts after the stage before ended it,
    a backward after the stage after ended it. Read from the job lines themselves,
    the truth jobviz's own order check is held to. Returns the hand-offs checked."""
    stages = len(logs)
    jobs = []  # per stage: (kind, mb, start_ns, end_ns) in log order
    for log in logs:
        with open(log) as f:
            jobs.append([(m.group(2), int(m.group(3)), nanos(m.group(4)), nanos(m.group(5)))
                         for m in map(JOB.search, f) if m])
    per_step = 2 * micro_batches + 1
    checked = 0
    for s in range(stages):
        assert len(jobs[s]) == steps * per_step, (s, len(jobs[s]))
        for i, (kind, mb, start, _) in enumerate(jobs[s]):
            source = s - 1 if kind == "forward" else s + 1
            if kind == "optimizer" or not 0 <= source < stages:
                continue
            step = jobs[source][i // per_step * per_step:(i // per_step + 1) * per_step]
            end = next(e for k, m, _, e in step if k == kind and m == mb)
            assert start >= end, "stage %d %s %d starts %d ns before its input ends" % (s, kind, mb, end - start)
            checked += 1
    print("pipeline order holds on all %d hand-offs in the logs" % checked)
    return checked
