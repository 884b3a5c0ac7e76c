#!/usr/bin/env python3
"""jobviz runs itself again with glibc's malloc asking for transparent huge
pages (src/cli/huge_pages.h), and leaves a user's choice alone.

  huge_pages.py JOBVIZ SAMPLE_LOG SANITIZE

For each environment, a jobviz reading SAMPLE_LOG from a pipe is held open
while this test reads its /proc/PID/environ (what the running program was
started with) and /proc/PID/smaps (whether malloc's heap carries the kernel's
"hg" flag, set by madvise(MADV_HUGEPAGE)); then the pipe is fed and closed,
and the trace and the -v line are checked. Exit 77 (skipped) without /proc,
in sanitizer builds (their allocator is not glibc's) and without glibc 2.35.
"""
import os
import subprocess
import sys
import tempfile
import time


def environ_of(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        raw = f.read()
    # glibc's loader (2.36) parses GLIBC_TUNABLES in place, leaving a NUL
    # where a ':' was between two tunables: put it back.
    raw = raw.replace(b"\0glibc.", b":glibc.")
    return dict(item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)


def advised_huge(pid):
    with open(f"/proc/{pid}/smaps") as f:
        return any(line.startswith("VmFlags:") and " hg" in line for line in f)


def run_held(jobviz, log_text, env, out):
    """Starts jobviz on a pipe, looks at it while it waits, then feeds it."""
    proc = subprocess.Popen([jobviz, "-v", "--no-chrome", "-o", out, "-"], stdin=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    runs_again = env.get("JOBVIZ_HUGE_PAGES") != "0" and "hugetlb" not in env.get("GLIBC_TUNABLES", "")
    seen = None
    deadline = time.time() + 20
    while time.time() < deadline:
        # Wait for jobviz's image (not the forked child's before it), and
        # when it runs again, for the second run's environment.
        try:
            is_jobviz = os.readlink(f"/proc/{proc.pid}/exe") == os.path.realpath(jobviz)
        except OSError:
            is_jobviz = False
        if is_jobviz and (not runs_again or environ_of(proc.pid).get(b"JOBVIZ_HUGE_PAGES") == b"asked"):
            time.sleep(0.3)  # the options parsed, malloc has grown its heap; jobviz waits on the pipe
            seen = (environ_of(proc.pid), advised_huge(proc.pid))
            break
        time.sleep(0.02)
    _, err = proc.communicate(log_text, timeout=60)
    if proc.returncode != 0:
        sys.exit(f"jobviz failed ({proc.returncode}): {err.decode()}")
    if seen is None:
        sys.exit("jobviz never ran again with huge pages asked")
    timing = [line for line in err.decode().splitlines() if line.startswith("jobviz: time:")]
    return seen[0], seen[1], timing[0] if timing else ""


def main():
    jobviz, sample_log, sanitize = sys.argv[1:4]
    if sanitize != "none" or not os.path.exists("/proc/self/smaps"):
        return 77
    with open(sample_log, "rb") as f:
        log_text = f.read()
    base = {k: v for k, v in os.environ.items() if k not in ("GLIBC_TUNABLES", "JOBVIZ_HUGE_PAGES")}
    with tempfile.TemporaryDirectory() as tmp:
        probe = subprocess.run([jobviz, "-v", "--no-chrome", "-o", os.path.join(tmp, "probe.json"), sample_log],
                               capture_output=True, text=True, env=base)
        if "not glibc 2.35" in probe.stderr:
            return 77
        traces = []

        # The default: run again, the tunable set, the heap advised.
        out = os.path.join(tmp, "asked.json")
        environ, advised, timing = run_held(jobviz, log_text, dict(base), out)
        assert environ.get(b"GLIBC_TUNABLES") == b"glibc.malloc.hugetlb=1", environ.get(b"GLIBC_TUNABLES")
        assert advised, "no mapping of the second run carries the hg (MADV_HUGEPAGE) flag"
        assert "huge pages asked (kernel: " in timing, timing
        traces.append(out)

        # The user's other tunables are kept, the hugetlb one added.
        out = os.path.join(tmp, "kept.json")
        environ, advised, timing = run_held(jobviz, log_text, dict(base, GLIBC_TUNABLES="glibc.malloc.arena_max=2"), out)
        assert environ.get(b"GLIBC_TUNABLES") == b"glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1", environ
        assert advised and "huge pages asked" in timing, timing
        traces.append(out)

        # JOBVIZ_HUGE_PAGES=0: not run again, nothing advised.
        out = os.path.join(tmp, "off.json")
        environ, advised, timing = run_held(jobviz, log_text, dict(base, JOBVIZ_HUGE_PAGES="0"), out)
        assert b"GLIBC_TUNABLES" not in environ, environ
        assert not advised, "huge pages advised with JOBVIZ_HUGE_PAGES=0"
        assert "huge pages off (JOBVIZ_HUGE_PAGES=0)" in timing, timing
        traces.append(out)

        # The user's own hugetlb=0 stands.
        out = os.path.join(tmp, "user.json")
        environ, advised, timing = run_held(jobviz, log_text, dict(base, GLIBC_TUNABLES="glibc.malloc.hugetlb=0"), out)
        assert environ.get(b"GLIBC_TUNABLES") == b"glibc.malloc.hugetlb=0" and b"JOBVIZ_HUGE_PAGES" not in environ, environ
        assert not advised, "huge pages advised against the user's glibc.malloc.hugetlb=0"
        assert "huge pages off (GLIBC_TUNABLES)" in timing, timing
        traces.append(out)

        contents = [open(path, "rb").read() for path in traces]
        assert all(c == contents[0] for c in contents), "the trace differs with huge pages"
        assert b'"traceEvents"' in contents[0]
    print("huge pages: asked, kept beside other tunables, off on request, the user's choice stands")
    return 0


if __name__ == "__main__":
    sys.exit(main())
