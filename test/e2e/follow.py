#!/usr/bin/env python3
"""jobviz follow against logs that grow while it runs (tools/follow-replay
writes them slice by slice, lines split across writes): each step is printed
once every worker has moved past it, with the figures a batch run gives for
the same step; the stall alarm names who stopped; --exit-on-stall exits 4;
SIGTERM leaves every output complete; a truncated log is read again as a new
run; an over-long line is cut, bounded and reported; a machine's clock jump
is said once and undone; usage errors exit 2.

    follow.py JOBVIZ GEN_LOGS SOURCE_ROOT
"""
import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

JOBVIZ, GEN_LOGS, ROOT = (os.path.abspath(a) for a in sys.argv[1:4])
REPLAY = os.path.join(ROOT, "tools", "follow-replay")
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


class Follow:
    """jobviz follow in the background; stdout lines arrive on a queue."""

    def __init__(self, args, prefix=()):
        # `prefix`: a command that runs it (prlimit): no preexec_fn, as tests run two at a time in threads.
        self.proc = subprocess.Popen([*prefix, JOBVIZ, "follow", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.lines = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr.append), daemon=True).start()

    @staticmethod
    def _pump(stream, sink):
        for line in stream:
            sink(line.rstrip("\n"))

    def next_line(self, timeout):
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        rc = self.proc.wait(timeout=timeout)
        time.sleep(0.1)  # the pumps finish the pipes
        return rc

    def err(self):
        return "\n".join(self.stderr)

    def exit_status(self, timeout=30):
        """Its exit status once it ends by itself (--exit-on-stall), killed after `timeout` seconds."""
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = self.stop(signal.SIGKILL)
        time.sleep(0.1)  # the pumps finish the pipes
        return rc

    def json_lines(self, count, seconds):
        """Up to `count` JSON lines (steps) that come within `seconds`."""
        lines = []
        deadline = time.time() + seconds
        while len(lines) < count and time.time() < deadline:
            line = self.next_line(1)
            if line:
                lines.append(json.loads(line))
        return lines


def generate(out, steps, machines=2, workers=4, start_ms=1697793307000):
    subprocess.run([GEN_LOGS, "--out", out, "--machines", str(machines), "--workers", str(workers), "--steps", str(steps),
                    "--microbatches", "8", "--sync_rounds", "3", "--start_ms", str(start_ms)],
                   check=True, stdout=subprocess.DEVNULL)


def batch_steps_json(log_dir):
    """A batch run's steps, from its summary JSON."""
    with tempfile.TemporaryDirectory() as out:
        summary = os.path.join(out, "s.json")
        subprocess.run([JOBVIZ, "--log_dir", log_dir, "-q", "--no-chrome", "-o", os.path.join(out, "t.json"),
                        "--summary-json", summary], check=True)
        return json.load(open(summary))["steps"]


def batch_steps(log_dir):
    with tempfile.TemporaryDirectory() as tmp:
        summary = os.path.join(tmp, "s.json")
        subprocess.run([JOBVIZ, "--log_dir", log_dir, "--multi_machine", "--no-chrome", "-o", os.path.join(tmp, "t.json"),
                        "--summary-json", summary, "-q"], check=True)
        with open(summary) as f:
            return json.load(f)


def test_grow_and_report(tmp):
    src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
    generate(src, 12)
    os.makedirs(dst)
    summary = os.path.join(tmp, "follow.json")
    trace = os.path.join(tmp, "follow.pftrace")
    follow = Follow(["--log_dir", dst, "--multi_machine", "--json", "--poll", "0.2", "--stall-after", "3",
                     "--refresh", "0.5", "--summary-json", summary, "-o", trace])
    replay = subprocess.Popen([REPLAY, src, dst, "--ticks", "8", "--interval", "0.5", "--split-lines"])
    steps = []
    seen_while_growing = False
    deadline = time.time() + 60
    while len(steps) < 12 and time.time() < deadline:
        line = follow.next_line(timeout=1)
        if line is None:
            continue
        steps.append(json.loads(line))
        seen_while_growing |= replay.poll() is None
    replay.wait()
    check(seen_while_growing, "no step was printed while the logs were still growing")
    check([s["step"] for s in steps] == list(range(12)), f"steps printed: {[s['step'] for s in steps]}")
    # Written while it ran, before the stop: the periodic refresh.
    check(os.path.exists(summary), "--summary-json was not written by the refresh")
    # The last step is printed once the logs go quiet for a moment and every worker finished it; at the
    # stall alarm's time, follow says the run finished (no alarm).
    deadline = time.time() + 10
    while time.time() < deadline and "the run finished" not in follow.err():
        time.sleep(0.2)
    rc = follow.stop()
    err = follow.err()
    check(rc == 0, f"SIGTERM: exit {rc}\n{err}")
    check("the run finished: every worker finished step 11" in err, "no 'the run finished' line:\n" + err)
    check("truncated" not in err and ", 0 skipped" in err, "a line being written was reported as skipped:\n" + err)
    check("stalled" not in err, "a finished run raised the stall alarm:\n" + err)
    # Each step's figures are the batch run's for the same logs.
    batch = batch_steps(dst)
    by_step = {s["step"]: s for s in batch["steps"]}
    for s in steps:
        b = by_step.get(s["step"])
        check(b is not None and b["duration_us"] == s["duration_us"] and b["start_ns"] == s["start_ns"],
              f"step {s['step']}: follow {s['duration_us']} us, batch {b and b['duration_us']} us")
        for key in ("bubble_ratio", "ideal_bubble_ratio", "top_cause", "slow_workers", "jobs", "end_us"):
            check(key in s, f"step JSON lacks {key}")
    with open(summary) as f:
        written = json.load(f)
    check(len(written["steps"]) == 12, f"final --summary-json holds {len(written['steps'])} steps")
    check(os.path.getsize(trace) > 0, "the .pftrace is empty")
    check(not [n for n in os.listdir(tmp) if ".tmp" in n or n.startswith(".")], f"temporary files left: {os.listdir(tmp)}")


def test_keep_steps(tmp):
    """Steps counted from job order keep their numbers when the old ones are dropped."""
    src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
    generate(src, 12)
    os.makedirs(dst)
    summary = os.path.join(tmp, "kept.json")
    follow = Follow(["--log_dir", dst, "--multi_machine", "--json", "--poll", "0.2", "--stall-after", "2",
                     "--keep-steps", "3", "--summary-json", summary])
    subprocess.run([REPLAY, src, dst, "--ticks", "8", "--interval", "0.3", "--split-lines"], check=True)
    steps = [follow.next_line(15) for _ in range(12)]
    rc = follow.stop()
    check(rc == 0 and all(steps), f"exit {rc}, steps {steps}\n{follow.err()}")
    steps = [json.loads(s) for s in steps if s]
    check([s["step"] for s in steps] == list(range(12)), f"steps printed: {[s['step'] for s in steps]}")
    batch = {s["step"]: s for s in batch_steps(dst)["steps"]}
    for s in steps:
        check(batch[s["step"]]["duration_us"] == s["duration_us"], f"step {s['step']}: {s['duration_us']} us, batch {batch[s['step']]['duration_us']}")
    with open(summary) as f:
        kept = [s["step"] for s in json.load(f)["steps"]]
    check(kept == [9, 10, 11], f"--keep-steps 3: the outputs hold steps {kept}")


def test_stall_alarm(tmp):
    src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
    generate(src, 12)
    os.makedirs(dst)
    summary = os.path.join(tmp, "stall.json")
    replay = subprocess.Popen([REPLAY, src, dst, "--ticks", "8", "--interval", "0.3",
                               "--hang-file", os.path.join("machine1", "workerlog.2"), "--hang-at", "4"])
    follow = Follow(["--log_dir", dst, "--multi_machine", "--poll", "0.2", "--stall-after", "1.5", "--exit-on-stall",
                     "--summary-json", summary])
    replay.wait()
    rc = follow.exit_status()
    err = follow.err()
    check(rc == 4, f"--exit-on-stall: exit {rc}, expected 4\n{err}")
    check("stalled: no job has finished for" in err, "no stall line:\n" + err)
    check("machine1" in err and "stopped" in err, "the stop report does not name who stopped:\n" + err)
    text_steps = [follow.next_line(0.1) for _ in range(20)]
    text_steps = [t for t in text_steps if t]
    check(text_steps and all(t.startswith("step ") and " bubble " in t for t in text_steps),
          f"text step lines: {text_steps}")
    with open(summary) as f:
        written = json.load(f)
    check(written["stopped"]["kind"] == "stopped", f"summary: stopped.kind {written['stopped']['kind']}")


def test_stall_between_steps(tmp):
    """Every worker finished step 11 and nothing more comes, while the profiling window says the run goes on to
    step 28: before the alarm the outputs say the run is running, at it 'stalled between step 11 and 12', exit 4."""
    src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
    generate(src, 12)
    for root, _, files in os.walk(src):
        for name in files:
            path = os.path.join(root, name)
            with open(path) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write(re.sub(r"and end at step \d+", "and end at step 30", text))
    os.makedirs(dst)
    summary = os.path.join(tmp, "between.json")
    replay = subprocess.Popen([REPLAY, src, dst, "--ticks", "8", "--interval", "0.4"])
    follow = Follow(["--log_dir", dst, "--multi_machine", "--json", "--poll", "0.2", "--stall-after", "2.5",
                     "--refresh", "0.3", "--exit-on-stall", "--summary-json", summary])
    kinds = set()
    while replay.poll() is None:
        if os.path.exists(summary):
            try:
                with open(summary) as f:
                    kinds.add(json.load(f)["stopped"]["kind"])
            except (ValueError, OSError):
                pass
        time.sleep(0.1)
    rc = follow.exit_status()
    err = follow.err()
    check(rc == 4, f"--exit-on-stall between steps: exit {rc}, expected 4\n{err}")
    check("stalled between step 11 and 12" in err, "no 'stalled between step 11 and 12':\n" + err)
    check("the run finished" not in err, "a stall between steps was said to be the run's end:\n" + err)
    check(kinds <= {"running", "finished"} and "running" in kinds, f"outputs while it ran said: {kinds}")
    with open(summary) as f:
        written = json.load(f)
    check(written["stopped"]["kind"] == "between_steps", f"after the alarm: stopped.kind {written['stopped']['kind']}")


def test_run_end_lines(tmp):
    """The profiling window says the run goes on to step 28, but the logs end with lines that say it ended: with
    libjobviz's closing line in every log the stall after step 5 is the run's end (exit 0 under --exit-on-stall);
    with it in all but one, or before the last job line, it is a stall between steps (exit 4); a trainer's
    'Training completed.' in one log ends the run too."""
    stats = ("I1020 09:15:09.000000 22317 jobviz_profiler.cc:1] Profiler Stats: rank = 0, jobs recorded = 9, "
             "records lost = 0, calls refused = 0, jobs never ended = 0\n")
    for case, expect_rc, expect_text in (("every", 0, "every log ends with libjobviz's closing line"),
                                         ("all_but_one", 4, "stalled between step 5 and 6"),
                                         ("completed", 0, "says 'Training completed'")):
        src = os.path.join(tmp, case)
        generate(src, 6, machines=1, workers=2)
        for i, name in enumerate(sorted(os.listdir(src))):
            path = os.path.join(src, name)
            with open(path) as f:
                text = re.sub(r"and end at step \d+", "and end at step 30", f.read())
            if case == "every" or (case == "all_but_one" and i > 0):
                text += stats
            if case == "completed" and i == 1:
                text += "[2023-10-20 09:15:10,000] [    INFO] - \nTraining completed. \n"
            with open(path, "w") as f:
                f.write(text)
        follow = Follow(["--log_dir", src, "--poll", "0.2", "--stall-after", "1", "--exit-on-stall", "-q"])
        rc = follow.exit_status()
        err = follow.err()
        check(rc == expect_rc, f"{case}: exit {rc}, expected {expect_rc}\n{err}")
        check(expect_text in err, f"{case}: no '{expect_text}':\n{err}")


def test_truncated_log_is_a_new_run(tmp):
    src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
    generate(src, 6, machines=1, workers=2)
    restarted = os.path.join(tmp, "restarted")  # the same job an hour later, from step 0 again
    generate(restarted, 6, machines=1, workers=2, start_ms=1697793307000 + 3600 * 1000)
    os.makedirs(dst)
    subprocess.run([REPLAY, src, dst, "--ticks", "1"], check=True)
    follow = Follow(["--log_dir", dst, "--json", "--poll", "0.2", "--stall-after", "100"])
    first = [follow.next_line(10) for _ in range(5)]
    check(all(first), f"first run: {first}")
    for name in os.listdir(dst):  # the job restarts: each log begins again
        with open(os.path.join(dst, name), "w"):
            pass
    subprocess.run([REPLAY, restarted, dst, "--ticks", "2", "--interval", "0.5"], check=True)
    again = [follow.next_line(10) for _ in range(5)]
    rc = follow.stop()
    check(rc == 0, f"exit {rc}")
    check(all(again) and [json.loads(a)["step"] for a in again] == list(range(5)),
          f"steps of the new run: {again}\n{follow.err()}")
    check("truncated or replaced" in follow.err(), "the truncation was not said:\n" + follow.err())


def test_rotation(tmp):
    """A log replaced by a copy of itself (rsync), rotated by copytruncate with its writer going on
    (with O_APPEND, and without: a hole up to the old offset), keeps its step numbering and figures."""
    src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
    generate(src, 12, machines=1, workers=3)
    expected = {s["step"]: s["duration_us"] for s in batch_steps_json(src)}
    os.makedirs(dst)
    halves = {}
    for w in range(3):
        lines = open(os.path.join(src, f"workerlog.{w}"), "rb").read().splitlines(keepends=True)
        halves[w] = (b"".join(lines[:len(lines) // 2]), b"".join(lines[len(lines) // 2:]))
        with open(os.path.join(dst, f"workerlog.{w}"), "wb") as f:
            f.write(halves[w][0])
    follow = Follow(["--log_dir", dst, "--json", "--poll", "0.2", "--stall-after", "30"])
    first = follow.json_lines(3, 15)
    log = [os.path.join(dst, f"workerlog.{w}") for w in range(3)]
    shutil.copy(log[0], log[0] + ".rsync")  # rsync: a copy of the same bytes renamed over it
    os.rename(log[0] + ".rsync", log[0])
    for w in (1, 2):  # copytruncate: copied aside, truncated in place
        shutil.copy(log[w], log[w] + ".1")
        os.truncate(log[w], 0)
    time.sleep(1)
    with open(log[0], "ab") as f:
        f.write(halves[0][1])
    with open(log[1], "ab") as f:  # O_APPEND: the writer goes on at the new end
        f.write(halves[1][1])
    fd = os.open(log[2], os.O_WRONLY)  # no O_APPEND: it writes on at its old offset
    os.pwrite(fd, halves[2][1], len(halves[2][0]))
    os.close(fd)
    rest = follow.json_lines(12 - len(first), 20)
    follow.stop(signal.SIGINT)
    steps = [s["step"] for s in first + rest]
    check(steps == list(range(12)), f"steps across the rotation: {steps}\n{follow.err()[-800:]}")
    off = [(s["step"], s["duration_us"], expected.get(s["step"])) for s in first + rest
           if abs(s["duration_us"] - expected.get(s["step"], 0)) > 0.01 * s["duration_us"]]
    check(not off, f"steps whose figures changed across the rotation (step, follow, batch): {off}")
    check("runs: 1 in every file" in follow.err() and ", 0 skipped" in follow.err(),
          "the rotation was taken for a new run, or lines were skipped:\n" + follow.err()[-800:])


def test_overlong_line(tmp):
    dst = os.path.join(tmp, "dst")
    generate(dst, 4, machines=1, workers=2)
    follow = Follow(["--log_dir", dst, "--poll", "0.2", "--stall-after", "100"])
    time.sleep(1)
    with open(os.path.join(dst, "workerlog.0"), "ab") as f:
        for _ in range(24):  # 24 MiB with no newline
            f.write(b"\x00garbage" * (1 << 17))
            f.flush()
        time.sleep(0.5)
        f.write(b"\n")
    time.sleep(1.5)
    rc = follow.stop()
    err = follow.err()
    check(rc == 0, f"exit {rc}\n{err}")
    check("over 1 MiB with no newline yet" in err and "workerlog.0:" in err, "the cut line was not reported:\n" + err)


def cut_after_jobs(path, jobs):
    """The bytes of `path` and the offset just after its `jobs`-th job line."""
    data = open(path, "rb").read()
    offset = count = 0
    for line in data.splitlines(keepends=True):
        offset += len(line)
        count += b"Profiler Info: Job" in line
        if count == jobs:
            break
    return data, offset


def test_machine_deleted_behind(tmp):
    """A machine's logs deleted six steps in while the others go on to twelve:
    the steps after it are printed once each, in order, numbered as before
    (the deleted logs' cursors stay where their jobs ended)."""
    src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
    generate(src, 12)
    rest = {}
    for machine, jobs in (("machine0", 7 * 17), ("machine1", 6 * 17)):  # 17 jobs a step
        os.makedirs(os.path.join(dst, machine))
        for w in range(4):
            data, offset = cut_after_jobs(os.path.join(src, machine, f"workerlog.{w}"), jobs)
            with open(os.path.join(dst, machine, f"workerlog.{w}"), "wb") as f:
                f.write(data[:offset])
            rest[w] = data[offset:]
    follow = Follow(["--log_dir", dst, "--multi_machine", "--json", "--poll", "0.2", "--stall-after", "30"])
    steps = [step["step"] for step in follow.json_lines(5, 10)]
    shutil.rmtree(os.path.join(dst, "machine1"))
    for part in range(3):
        time.sleep(0.4)
        for w in range(4):
            lines = rest[w].splitlines(keepends=True)
            with open(os.path.join(dst, "machine0", f"workerlog.{w}"), "ab") as f:
                f.write(b"".join(lines[len(lines) * part // 3:len(lines) * (part + 1) // 3]))
    deadline = time.time() + 15
    while time.time() < deadline and (not steps or steps[-1] < 10):
        line = follow.next_line(1)
        if line:
            steps.append(json.loads(line)["step"])
    rc = follow.stop(signal.SIGINT)
    check(rc == 0, f"SIGINT: exit {rc}\n{follow.err()}")
    check(steps == list(range(11)), f"steps with a machine deleted behind the others: {steps}\n{follow.err()[-800:]}")


def test_faults(tmp):
    """A machine's directory deleted mid-run, binary garbage appended, SIGINT: said, and the rest goes on."""
    src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
    generate(src, 12)
    os.makedirs(dst)
    follow = Follow(["--log_dir", dst, "--multi_machine", "--json", "--poll", "0.2", "--stall-after", "30"])
    replay = subprocess.Popen([REPLAY, src, dst, "--ticks", "8", "--interval", "0.5"])
    steps = []
    while len(steps) < 2:
        line = follow.next_line(10)
        check(line is not None, "no step before the faults")
        if line is None:
            break
        steps.append(json.loads(line)["step"])
    import random
    garbage = bytes(random.Random(7).randrange(256) for _ in range(300000))
    with open(os.path.join(dst, "machine0", "workerlog.0"), "ab") as f:
        f.write(b"\n" + garbage + b"\n")
    shutil.rmtree(os.path.join(dst, "machine1"))
    replay.wait()
    deadline = time.time() + 20
    while time.time() < deadline and (not steps or steps[-1] < 9):
        line = follow.next_line(1)
        if line:
            steps.append(json.loads(line)["step"])
    # The replay wrote on into the deleted files (open handles): what they got is read, then they are said gone.
    deadline = time.time() + 10
    while time.time() < deadline and "deleted" not in follow.err():
        time.sleep(0.2)
    rc = follow.stop(signal.SIGINT)
    err = follow.err()
    check(rc == 0, f"SIGINT: exit {rc}\n{err}")
    check("deleted" in err and "machine1" in err, "the deleted logs were not said:\n" + err)
    check(steps and steps[-1] >= 9, f"steps stopped at the deletion: {steps}")
    check(steps == sorted(set(steps)), f"a step printed twice or out of order: {steps}\n{err}")


def test_signals(tmp):
    """SIGTERM, SIGHUP (a closed ssh session) and a reader of stdout that goes away (`| head -1`)
    end follow as SIGINT does: every output written once more, complete, no temporary file, exit 0."""
    logs = os.path.join(tmp, "logs")
    generate(logs, 6)
    for how in ("SIGTERM", "SIGHUP", "head -1"):
        out = os.path.join(tmp, how.replace(" ", "_"))
        os.makedirs(out)
        summary = os.path.join(out, "s.json")
        args = [JOBVIZ, "follow", "--log_dir", logs, "--multi_machine", "--summary-json", summary,
                "--html", os.path.join(out, "r.html"), "--poll", "0.2", "--stall-after", "30"]
        if how == "head -1":
            shell = subprocess.Popen("set -o pipefail; " + " ".join(map(shlex.quote, args)) + " | head -1", shell=True,
                                     executable="/bin/bash", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            # head exits after the first step line; follow finds out at its next write: the
            # remaining steps of the run's end come at the first quiet moment.
            stdout, stderr = shell.communicate(timeout=60)
            rc = shell.returncode
            check(len(stdout.splitlines()) == 1, f"{how}: {stdout!r}")
        else:
            follow = Follow(args[2:])
            check(follow.next_line(20) is not None, f"{how}: no step")
            rc = follow.stop(getattr(signal, how))
            stderr = follow.err()
        check(rc == 0, f"{how}: exit {rc}: {stderr[-400:]}")
        check(("stopped by " + how if how.startswith("SIG") else "standard output closed") in stderr,
              f"{how}: the cause is not said: {stderr[-400:]}")
        try:
            steps = len(json.load(open(summary))["steps"])
        except (OSError, ValueError, KeyError) as e:
            steps = f"unreadable: {e}"
        said = re.search(r"stopped.* after (\d+) steps?", stderr)
        check(said and steps == int(said.group(1)) and steps >= 1,
              f"{how}: the summary holds {steps} steps; follow said {said and said.group(0)}")
        html = os.path.join(out, "r.html")
        check(os.path.exists(html) and os.path.getsize(html) > 0 and
              not [n for n in os.listdir(out) if ".tmp." in n], f"{how}: outputs {os.listdir(out)}")


def test_log_without_jobs(tmp):
    """A rank that died at start-up (its log a traceback, no job): the others' steps come, and the
    log is named once, as a rank that may never have started."""
    logs = os.path.join(tmp, "logs")
    generate(logs, 5)
    with open(os.path.join(logs, "machine1", "workerlog.2"), "w") as f:
        f.write('Traceback (most recent call last):\n  File "train.py", line 3\nRuntimeError: CUDA error: out of memory\n')
    follow = Follow(["--log_dir", logs, "--multi_machine", "--json", "--poll", "0.2", "--stall-after", "30"])
    steps = follow.json_lines(5, 20)
    time.sleep(1)
    rc = follow.stop(signal.SIGINT)
    err = follow.err()
    check(rc == 0 and [s["step"] for s in steps] == [0, 1, 2, 3, 4], f"steps {[s['step'] for s in steps]}, exit {rc}")
    said = [line for line in err.splitlines() if "no job in the log of" in line]
    check(len(said) == 1 and "machine1 worker 2" in said[0] and "never started" in said[0],
          f"the log without jobs is said {len(said)} times: {said}")


def test_named_files_not_there_yet(tmp):
    """`jobviz follow A B C D E` with E not there yet: A to D are followed now, E is waited for and
    said once, and joins when it comes."""
    src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
    generate(src, 4, machines=1, workers=4)
    os.makedirs(dst)
    for w in range(3):
        shutil.copy(os.path.join(src, f"workerlog.{w}"), dst)
    names = [os.path.join(dst, f"workerlog.{w}") for w in range(4)]
    follow = Follow([*names, "--json", "--poll", "0.2", "--stall-after", "30"])
    deadline = time.time() + 10
    while time.time() < deadline and "following 3 logs" not in follow.err():
        time.sleep(0.2)
    shutil.copy(os.path.join(src, "workerlog.3"), dst)
    deadline = time.time() + 10
    while time.time() < deadline and "new log" not in follow.err():
        time.sleep(0.2)
    time.sleep(1)
    follow.stop(signal.SIGINT)
    err = follow.err()
    check(err.count("waiting for 1 named log not there yet") == 1 and "following 3 logs" in err and "new log" in err,
          "the missing log was not waited for, said once, and joined:\n" + err)


def test_many_logs_few_descriptors(tmp):
    """1,000 logs under `ulimit -n 64`: idle logs are closed and looked at by path, so every log is
    followed, no 'Too many open files', and the outputs are written at the end."""
    logs = os.path.join(tmp, "logs")
    subprocess.run([GEN_LOGS, "--out", logs, "--machines", "10", "--workers", "100", "--steps", "3", "--microbatches", "2",
                    "--noise_per_job", "0"], check=True, stdout=subprocess.DEVNULL)
    summary = os.path.join(tmp, "s.json")
    follow = Follow(["--log_dir", logs, "--multi_machine", "--json", "--poll", "0.2", "--stall-after", "30",
                     "--summary-json", summary], prefix=("prlimit", "--nofile=64:64"))
    steps = [s["step"] for s in follow.json_lines(3, 30)]  # the last step comes at the first quiet moment
    rc = follow.stop(signal.SIGINT)
    err = follow.err()
    check(rc == 0 and "following 1000 logs" in err and "open files" not in err and "cannot" not in err,
          f"1,000 logs under ulimit -n 64: exit {rc}\n{err[-600:]}")
    check(steps == [0, 1, 2], f"steps {steps}")
    check(os.path.exists(summary) and len(json.load(open(summary))["steps"]) == 3, "the summary was not written whole")


def test_extract_merge_follow(tmp):
    """Logs that stay on each machine: extract --follow streams each one's records (a file and a FIFO);
    merge --follow prints the steps a follow of the whole tree prints; the streams, once extract stops,
    merge (batch) into the direct run's trace and summary byte for byte."""
    src, dst = os.path.join(tmp, "src"), os.path.join(tmp, "dst")
    generate(src, 12)
    for m in (0, 1):
        os.makedirs(os.path.join(dst, f"machine{m}"))
    streams = [os.path.join(tmp, "machine0.jsonl"), os.path.join(tmp, "machine1.fifo")]
    os.mkfifo(streams[1])
    merge = subprocess.Popen([JOBVIZ, "merge", "--follow", "--json", "--poll", "0.2", "--stall-after", "3",
                              "--exit-on-stall", "--summary-json", os.path.join(tmp, "follow_summary.json"), *streams],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    extracts = [subprocess.Popen([JOBVIZ, "extract", "--follow", "--log_dir", os.path.join("dst", f"machine{m}"),
                                  "--machine", f"machine{m}", "-o", streams[m], "--poll", "0.2", "-q"], cwd=tmp)
                for m in (0, 1)]
    replay = subprocess.Popen([REPLAY, src, dst, "--ticks", "8", "--interval", "0.4", "--split-lines"])
    seen_while_growing, steps = False, []
    for line in merge.stdout:
        steps.append(json.loads(line))
        seen_while_growing |= replay.poll() is None
    rc = merge.wait(timeout=60)
    replay.wait()
    err = merge.stderr.read()
    check(rc == 0, f"merge --follow: exit {rc}\n{err}")
    check(seen_while_growing, "merge --follow printed no step while the logs grew")
    check([s["step"] for s in steps] == list(range(12)), f"merge --follow steps: {[s['step'] for s in steps]}\n{err}")
    check("the run finished" in err, "merge --follow did not see the run finish:\n" + err)
    batch = {s["step"]: s for s in batch_steps(dst)["steps"]}
    for s in steps:
        check(batch[s["step"]]["duration_us"] == s["duration_us"], f"step {s['step']}: {s['duration_us']} us, batch {batch[s['step']]['duration_us']}")
    for e in extracts:
        e.send_signal(signal.SIGINT)
    codes = [e.wait(timeout=30) for e in extracts]
    check(codes[0] == 0, f"extract --follow to a file: exit {codes[0]} on SIGINT")
    outputs = ["-o", "{0}.json", "--summary-json", "{0}_summary.json", "-q"]
    subprocess.run([JOBVIZ, "--log_dir", "dst", "--multi_machine", "--no-chrome"] + [a.format("direct") for a in outputs],
                   cwd=tmp, check=True)
    # machine1's stream went through the FIFO: its events come from a batch extract here.
    subprocess.run([JOBVIZ, "extract", "--log_dir", os.path.join("dst", "machine1"), "--machine", "machine1", "-o",
                    "machine1.jsonl.gz", "-q"], cwd=tmp, check=True)
    merged = subprocess.run([JOBVIZ, "merge", "machine0.jsonl", "machine1.jsonl.gz"] + [a.format("merged") for a in outputs],
                            cwd=tmp, capture_output=True, text=True)
    check(merged.returncode == 0, f"batch merge of the stream: {merged.stderr}")
    for suffix in (".json", "_summary.json"):
        with open(os.path.join(tmp, "direct" + suffix), "rb") as a, open(os.path.join(tmp, "merged" + suffix), "rb") as b:
            check(a.read() == b.read(), f"the stopped stream merges unlike the direct run: {suffix}")


def test_stream_bad_lines(tmp):
    """merge --follow over a stream holding a record of a kind it does not know, one with a field of the
    wrong type, and a 2 MiB line without its newline: each is said or counted as skipped with its reason,
    and the stream is read on."""
    logs, stream = os.path.join(tmp, "logs"), os.path.join(tmp, "m0.jsonl")
    generate(logs, 4, machines=1, workers=2)
    extract = subprocess.Popen([JOBVIZ, "extract", "--follow", "--log_dir", logs, "--machine", "machine0", "-o", stream,
                                "--poll", "0.2", "-q"])
    time.sleep(2)
    extract.send_signal(signal.SIGINT)
    extract.wait(timeout=30)
    lines = open(stream).read().splitlines()
    end = lines.pop()  # the end line goes after the bad ones
    first_job = next(i for i, line in enumerate(lines) if '"k":"job"' in line)
    bad = ['{"k":"frobnicate","w":0}', '{"k":"job","w":0,"l":"seven"}', '{"k":"range","w":0,"l":9,"s":5,"name":3}',
           "x" * (2 << 20)]
    with open(stream, "w") as f:
        f.write("\n".join(lines[:first_job] + bad + lines[first_job:] + [end]) + "\n")
    follow = subprocess.run([JOBVIZ, "merge", "--follow", stream, "--json", "--poll", "0.2", "--stall-after", "1",
                             "--exit-on-stall"], capture_output=True, text=True, timeout=60)
    steps = [json.loads(line)["step"] for line in follow.stdout.splitlines()]
    err = follow.stderr
    check(steps == [0, 1, 2, 3], f"steps read past the bad lines: {steps}\n{err[-800:]}")
    check("no longer read" not in err and "json.exception" not in err.split("a field is missing")[0],
          "a bad record broke the stream:\n" + err[-800:])
    check("unknown record kind 'frobnicate'" in err and
          "a field is missing or of the wrong type" in err and "skipped 3 lines" in err,
          "the bad records were not counted:\n" + err[-1200:])
    check("with no newline: not a record" in err, "the over-long line was not said:\n" + err[-800:])


def test_merge_waits_for_named_stream(tmp):
    """merge --follow prints no step while a stream named on its command line has given no log (here its file
    is not there yet): that machine's workers may still be in any step. Once it comes, every step is printed
    with the figures of a batch run of both machines."""
    logs = os.path.join(tmp, "logs")
    generate(logs, 4)
    whole = []
    for m in (0, 1):
        out = os.path.join(tmp, f"whole{m}.jsonl")
        extract = subprocess.Popen([JOBVIZ, "extract", "--follow", "--log_dir", os.path.join("logs", f"machine{m}"),
                                    "--machine", f"machine{m}", "-o", out, "--poll", "0.2", "-q"], cwd=tmp)
        time.sleep(2)
        extract.send_signal(signal.SIGINT)
        check(extract.wait(timeout=30) == 0, f"extract --follow of machine{m}")
        whole.append(open(out).read().splitlines())
    streams = [os.path.join(tmp, f"m{m}.jsonl") for m in (0, 1)]
    with open(streams[0], "w") as f:
        f.write("\n".join(whole[0][:-1]) + "\n")  # machine0's stream still open: its end line cut
    merge = subprocess.Popen([JOBVIZ, "merge", "--follow", *streams, "--json", "--poll", "0.2", "--stall-after", "4",
                              "--exit-on-stall"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    printed = []  # (when, step)
    reader = threading.Thread(target=lambda: printed.extend((time.monotonic(), json.loads(line)) for line in merge.stdout))
    reader.start()
    time.sleep(2.5)  # machine0 read whole meanwhile
    came = time.monotonic()
    with open(streams[1] + ".tmp", "w") as f:
        f.write("\n".join(whole[1]) + "\n")
    os.rename(streams[1] + ".tmp", streams[1])
    reader.join(timeout=60)
    rc = merge.wait(timeout=60)
    err = merge.stderr.read()
    check(rc in (0, 4), f"merge --follow: exit {rc}\n{err}")
    early = [s["step"] for when, s in printed if when < came]
    check(not early, f"steps printed before machine1's stream came: {early}\n{err}")
    steps = [s for _, s in printed]
    check([s["step"] for s in steps] == [0, 1, 2, 3], f"merge --follow steps: {[s['step'] for s in steps]}\n{err}")
    batch = {s["step"]: s for s in batch_steps(logs)["steps"]}
    for s in steps:
        check(batch[s["step"]]["duration_us"] == s["duration_us"], f"step {s['step']}: {s['duration_us']} us, batch {batch[s['step']]['duration_us']}")


def shift_clock(src, dst, machine, seconds, from_ms):
    """A copy of the logs where `machine`'s clock stepped by `seconds` at `from_ms`: every time it wrote since moved."""
    pattern = re.compile(r"(job_start_time = |job_end_time = |time = )(\d+\.\d+)")
    for root, _, files in os.walk(src):
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), src)
            os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
            with open(os.path.join(root, name)) as f:
                lines = f.readlines()
            if rel.startswith(machine + os.sep):
                def moved(m):
                    ms = float(m.group(2))
                    return m.group(1) + ("%.6f" % (ms + seconds * 1000) if ms >= from_ms else m.group(2))
                lines = [pattern.sub(moved, line) for line in lines]
            with open(os.path.join(dst, rel), "w") as f:
                f.writelines(lines)


def test_clock_jump(tmp):
    """machine1's clock steps 20 s forward at step 6 while follow runs (or 10 min back, in a batch run): said once,
    undone, and every step keeps the figures of the run without the jump."""
    src, jumped, dst = (os.path.join(tmp, d) for d in ("src", "jumped", "dst"))
    generate(src, 12)
    truth = {s["step"]: s for s in batch_steps(src)["steps"]}
    step6_ms = truth[6]["start_ns"] / 1e6
    shift_clock(src, jumped, "machine1", 20, step6_ms)
    os.makedirs(dst)
    follow = Follow(["--log_dir", dst, "--multi_machine", "--json", "--poll", "0.2", "--stall-after", "30"])
    subprocess.run([REPLAY, jumped, dst, "--ticks", "8", "--interval", "0.4"], check=True)
    steps = follow.json_lines(12, 20)
    # The job restarts an hour later, every log from its start, the clocks steady: the jump found in the old
    # logs no longer applies to their lines.
    restarted = os.path.join(tmp, "restarted")
    generate(restarted, 12, start_ms=1697793307000 + 3600 * 1000)
    truth_again = {s["step"]: s for s in batch_steps(restarted)["steps"]}
    for root, _, files in os.walk(dst):
        for name in files:
            with open(os.path.join(root, name), "w"):
                pass
    subprocess.run([REPLAY, restarted, dst, "--ticks", "4", "--interval", "0.4"], check=True)
    again = follow.json_lines(12, 20)
    rc = follow.stop()
    err = follow.err()
    check(rc == 0, f"SIGTERM: exit {rc}\n{err}")
    check(err.count("clock jumps") == 1, "a clock jump was said again after the restart:\n" + err)
    check([s["step"] for s in steps] == list(range(12)), f"steps printed: {[s['step'] for s in steps]}")
    check([s["step"] for s in again] == list(range(12)) and
          all(abs(s["duration_us"] - truth_again[s["step"]]["duration_us"]) < 1 for s in again),
          "steps of the restarted run: " + ", ".join(f"{s['step']}: {s['duration_us']} us" for s in again))
    for s in steps:
        t = truth[s["step"]]
        check(abs(s["duration_us"] - t["duration_us"]) < 1 and abs(s["start_ns"] - t["start_ns"]) < 1000,
              f"step {s['step']} with the jump: {s['duration_us']} us from {s['start_ns']}; "
              f"without it {t['duration_us']} us from {t['start_ns']}")
    # A batch run finds a jump back the same way; the warning of times going back in file order says they are
    # put back in line, not drawn as logged.
    back = os.path.join(tmp, "back")
    shift_clock(src, back, "machine1", -600, step6_ms)
    run = subprocess.run([JOBVIZ, "--log_dir", back, "--multi_machine", "--no-chrome", "-o", os.path.join(tmp, "b.json"),
                          "--summary-json", os.path.join(tmp, "b_summary.json")], capture_output=True, text=True)
    check(run.returncode == 0 and "machine1: its clock jumps 600.00 s back at" in run.stderr and
          "times are put back in line where a machine's clock jump is found" in run.stderr,
          f"batch run over a clock set back: exit {run.returncode}\n{run.stderr}")
    with open(os.path.join(tmp, "b_summary.json")) as f:
        batch = {s["step"]: s for s in json.load(f)["steps"]}
    check(all(abs(batch[k]["duration_us"] - truth[k]["duration_us"]) < 1 for k in truth),
          "batch steps after a clock set back differ from the run without it")


def test_usage_errors(tmp):
    for args, why in ((["-"], "stdin"), (["--log_dir", tmp, "--summary-json", "-"], "stdout"),
                      (["--log_dir", tmp, "--poll", "0"], "poll 0"),
                      (["--log_dir", tmp, "--refresh", "nan"], "refresh nan"),
                      (["--log_dir", tmp, "--poll", "NaN"], "poll NaN"),
                      (["--log_dir", tmp, "--stall-after", "nan"], "stall-after nan"),
                      (["--log_dir", tmp, "--stall-after", "inf"], "stall-after inf"),
                      (["--log_dir", tmp, "--refresh", "1e999"], "refresh 1e999"),
                      (["--log_dir", tmp, "--stall-after", "-5"], "stall-after -5")):
        rc = subprocess.run([JOBVIZ, "follow", *args], capture_output=True).returncode
        check(rc == 2, f"{why}: exit {rc}, expected 2")
    # Outputs that are the job's own logs, lie where the tree's logs are found, or are stdout by
    # another name: refused before anything is read or written, the log untouched.
    logs = os.path.join(tmp, "logs")
    generate(logs, 2)
    log = os.path.join(logs, "machine0", "workerlog.0")
    before = open(log, "rb").read()
    tree = ["--log_dir", logs, "--multi_machine"]
    for args, why in (([*tree, "-o", log], "-o the job's log"),
                      ([*tree, "--html", os.path.join(logs, "machine0", "..", "machine1", "workerlog.1")], "--html via .."),
                      ([*tree, "-o", os.path.join(logs, "machine0", "workerlog.9")], "a log's name in the tree"),
                      ([*tree, "-o", os.path.join(logs, "machine5", "workerlog.0")], "a machine to come"),
                      ([*tree, "-o", "/dev/stdout"], "/dev/stdout"), ([*tree, "--summary-json", "/proc/self/fd/1"], "/proc/self/fd/1"),
                      ([*tree, "--html", "/dev/fd/1"], "/dev/fd/1"),
                      ([log, os.path.join(tmp, "later.log"), "-o", os.path.join(tmp, "later.log")], "a named file not there yet")):
        r = subprocess.run([JOBVIZ, "follow", *args], capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and "error" in r.stderr, f"{why}: exit {r.returncode}, expected 2: {r.stderr[-300:]}")
    for args, why in ((["extract", "--follow", "--log_dir", os.path.join(logs, "machine0"), "--machine", "m0", "-o", log],
                       "extract --follow -o the job's log"),
                      (["merge", "--follow", os.path.join(tmp, "m0.jsonl"), "-o", os.path.join(tmp, "m0.jsonl")],
                       "merge --follow -o its stream")):
        r = subprocess.run([JOBVIZ, *args], capture_output=True, text=True, timeout=30)
        check(r.returncode == 2, f"{why}: exit {r.returncode}, expected 2: {r.stderr[-300:]}")
        check(args[0] != "merge" or r.stderr.startswith("jobviz merge --follow: error:"), f"{why}: says {r.stderr[:80]!r}")
    check(open(log, "rb").read() == before, "a refused output touched the job's log")


TESTS = (test_grow_and_report, test_keep_steps, test_stall_alarm, test_stall_between_steps, test_run_end_lines, test_truncated_log_is_a_new_run, test_overlong_line, test_faults, test_machine_deleted_behind, test_extract_merge_follow, test_merge_waits_for_named_stream,
             test_clock_jump, test_usage_errors, test_signals, test_log_without_jobs, test_named_files_not_there_yet, test_many_logs_few_descriptors, test_rotation, test_stream_bad_lines)


def run_one(test):
    with tempfile.TemporaryDirectory() as tmp:
        started = time.time()
        test(tmp)
        return f"{test.__name__}: {time.time() - started:.1f} s"


# Two at a time: each mostly waits (a replay's next slice, a stall alarm),
# so two overlap their waits; each has its own directory and processes.
# JOBVIZ_ONLY=test_a,test_b: only those (while working on them).
only = [name for name in os.environ.get("JOBVIZ_ONLY", "").split(",") if name]
chosen = [test for test in TESTS if not only or test.__name__ in only]
with ThreadPoolExecutor(max_workers=int(os.environ.get("JOBVIZ_FOLLOW_THREADS", "2"))) as pool:
    for line in pool.map(run_one, chosen):
        print(line)

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("all follow checks passed")
