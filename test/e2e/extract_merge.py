#!/usr/bin/env python3
"""`jobviz extract` on each machine + `jobviz merge` == jobviz on the copied tree.

usage: extract_merge.py JOBVIZ REPO_ROOT

For a multi-machine fixture with clock sync lines and one whose logs have
skipped lines and appended runs, and a hybrid-parallel one whose topology
comes from HybridParallelInfo lines, the trace, legacy trace, summary JSON and
report must be identical (the report up to the output file names); extract
-o - must stream the events file's bytes to stdout, and merge writes no legacy
trace unless asked.
"""
import os
import shutil
import subprocess
import sys
import tempfile

CASES = [("test/fixtures/skewed", ["machine0", "machine1"], []),
         ("test/fixtures/many_machines", ["machine2", "machine10"], ["--run", "all"]),
         ("test/fixtures/variants", None, []),  # one machine, with skipped lines of every kind
         # HybridParallelInfo lines travel in the events files: same topology, stages and causal clocks.
         ("test/fixtures/hybrid/mp2sharding4pp4_skewed", ["machine0", "machine1", "machine2", "machine3"],
          ["--clock_align", "causal"]),
         # A run that stopped: the stop report needs how each log ends and the in-flight lines.
         ("test/fixtures/stopped/crash_mid_line", ["machine0", "machine1", "machine2", "machine3"], [])]


def run(cmd, cwd):
    result = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return result.returncode, result.stderr


def main():
    jobviz, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    failures = []
    for fixture, machines, extra in CASES:
        with tempfile.TemporaryDirectory(prefix="jobviz_merge_") as tmp:
            shutil.copytree(os.path.join(root, fixture), os.path.join(tmp, "logs"))
            outputs = ["-o", "{0}.json", "--chrome-output", "{0}_legacy.json", "--summary-json", "{0}_summary.json"]
            direct = [a.format("direct") for a in outputs]
            tree = ["--log_dir", "logs"] + (["--multi_machine"] if machines else [])
            code_direct, err_direct = run([jobviz] + tree + direct + extra, tmp)
            events = []
            for m in machines or ["logs"]:
                where = "logs/" + m if machines else "logs"
                code, err = run([jobviz, "extract", "--log_dir", where, "--machine", m, "-o", m + ".jsonl.gz"], tmp)
                if code != 0:
                    failures.append("%s: extract %s failed: %s" % (fixture, m, err))
                events.append(m + ".jsonl.gz")
                # -o - streams the same gzip bytes to stdout.
                piped = subprocess.run([jobviz, "extract", "-q", "--log_dir", where, "--machine", m, "-o", "-"], cwd=tmp,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                with open(os.path.join(tmp, m + ".jsonl.gz"), "rb") as f:
                    if piped.returncode != 0 or piped.stdout != f.read():
                        failures.append("%s: extract %s -o - differs from the file: %s" % (fixture, m, piped.stderr))
                if os.path.exists(os.path.join(tmp, "-")):
                    failures.append("%s: extract -o - wrote a file named '-'" % fixture)
            # Without --chrome-output, merge writes no legacy trace (it wrote ./pipeline_profile.json).
            code, err = run([jobviz, "merge", "-q", "-o", "out/plain.json"] + events + extra, tmp)
            if code != 0 or any(os.path.exists(os.path.join(tmp, p, "pipeline_profile.json")) for p in (".", "out")):
                failures.append("%s: merge without --chrome-output wrote a legacy trace (or failed: %s)" % (fixture, err))
            merged = [a.format("merged") for a in outputs]
            code_merged, err_merged = run([jobviz, "merge"] + events[::-1] + merged + extra, tmp)
            if (code_direct, code_merged) != (0, 0):
                failures.append("%s: exit codes %d (direct), %d (merge): %s" % (fixture, code_direct, code_merged, err_merged))
                continue
            for suffix in (".json", "_legacy.json", "_summary.json"):
                with open(os.path.join(tmp, "direct" + suffix), "rb") as a, open(os.path.join(tmp, "merged" + suffix), "rb") as b:
                    if a.read() != b.read():
                        failures.append("%s: direct%s and merged%s differ" % (fixture, suffix, suffix))
            if err_direct.replace("direct", "merged") != err_merged:
                failures.append("%s: reports differ:\n%s\n---\n%s" % (fixture, err_direct, err_merged))
            print("%s: extract + merge of %d machine(s) matches the direct run" % (fixture, len(events)))
    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
