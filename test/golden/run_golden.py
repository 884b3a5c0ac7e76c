#!/usr/bin/env python3
"""Golden test of one whole jobviz run (lnav style).

usage: run_golden.py JOBVIZ REPO_ROOT CASE_FILE

A case file (test/golden/NAME.case) holds lines of the form
    copy: SRC DST      copy SRC (relative to the repo) to DST in a scratch dir
                       (DST may spell bytes as \\xHH: hostile directory names)
    args: ...          jobviz's arguments, shell-quoted, run in the scratch dir
    stdin: FILE        feed this file (relative to the scratch dir) on stdin
    output: PATH       a file the run writes; compared byte for byte
    absent: PATH       a file the run must not write (usage errors write nothing)
and '#' comments. The expected exit code, stdout, stderr and outputs live in
test/expected/NAME/. JOBVIZ_UPDATE_GOLDEN=1 rewrites them from this run.
"""
import difflib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile


def read_case(path):
    case = {"copy": [], "args": [], "stdin": None, "output": [], "absent": []}
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            key, _, value = line.partition(":")
            value = value.strip()
            if key == "copy":
                src, dst = value.split()
                case["copy"].append([src, dst.encode().decode("unicode_escape")])
            elif key == "args":
                case["args"] = shlex.split(value)
            elif key == "stdin":
                case["stdin"] = value
            elif key == "output":
                case["output"].append(value)
            elif key == "absent":
                case["absent"].append(value)
            else:
                raise SystemExit("%s: unknown key %r" % (path, key))
    return case


def check_junit(data):
    """What JUnit consumers (Jenkins, GitLab) read: testsuites > testsuite >
    testcase, with tests/failures/errors counts that match the cases."""
    import xml.etree.ElementTree as ET
    root = ET.fromstring(data)
    assert root.tag == "testsuites", root.tag
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
        assert int(suite.get("errors")) == sum(1 for c in cases if c.find("error") is not None)
        for case in cases:
            assert case.get("name") and case.get("classname")


def compare(name, expected_path, actual, update):
    if update:
        os.makedirs(os.path.dirname(expected_path), exist_ok=True)
        with open(expected_path, "wb") as f:
            f.write(actual)
        return True
    if not os.path.exists(expected_path):
        print("%s: missing expected file %s (run with JOBVIZ_UPDATE_GOLDEN=1)" % (name, expected_path))
        return False
    with open(expected_path, "rb") as f:
        expected = f.read()
    if expected == actual:
        return True
    print("%s differs from %s:" % (name, expected_path))
    diff = difflib.unified_diff(expected.decode("utf-8", "replace").splitlines(True),
                                actual.decode("utf-8", "replace").splitlines(True),
                                "expected", "actual")
    sys.stdout.writelines(list(diff)[:80])
    return False


def main():
    jobviz, root, case_file = sys.argv[1:4]
    jobviz = os.path.abspath(jobviz)
    name = os.path.splitext(os.path.basename(case_file))[0]
    case = read_case(case_file)
    expected_dir = os.path.join(root, "test", "expected", name)
    update = os.environ.get("JOBVIZ_UPDATE_GOLDEN") == "1"
    with tempfile.TemporaryDirectory(prefix="jobviz_golden_") as scratch:
        for src, dst in case["copy"]:
            src_path, dst_path = os.path.join(root, src), os.path.join(scratch, dst)
            if os.path.isdir(src_path):
                shutil.copytree(src_path, dst_path,
                                ignore=shutil.ignore_patterns("pipeline_profile*.json"))
            else:
                os.makedirs(os.path.dirname(dst_path) or scratch, exist_ok=True)
                shutil.copy(src_path, dst_path)
        stdin = open(os.path.join(scratch, case["stdin"]), "rb") if case["stdin"] else subprocess.DEVNULL
        env = dict(os.environ, LC_ALL="C")
        result = subprocess.run([jobviz] + case["args"], cwd=scratch, stdin=stdin,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=120)
        ok = compare("exit code", os.path.join(expected_dir, "exit_code"),
                     ("%d\n" % result.returncode).encode(), update)
        ok &= compare("stdout", os.path.join(expected_dir, "stdout"), result.stdout, update)
        if "--json" in case["args"] and result.returncode == 0:
            json.loads(result.stdout)  # must always be valid JSON
        # Timing and memory figures (-v) differ from run to run.
        stderr = b"".join(l for l in result.stderr.splitlines(True) if not l.startswith(b"jobviz: time:"))
        ok &= compare("stderr", os.path.join(expected_dir, "stderr"), stderr, update)
        for output in case["output"]:
            path = os.path.join(scratch, output)
            if not os.path.exists(path):
                print("output %s was not written" % output)
                ok = False
                continue
            with open(path, "rb") as f:
                data = f.read()
            if output.endswith(".json"):
                json.loads(data)  # must always be valid JSON
            if output.endswith(".xml"):
                check_junit(data)
            ok &= compare(output, os.path.join(expected_dir, os.path.basename(output)), data, update)
        for absent in case["absent"]:
            if os.path.exists(os.path.join(scratch, absent)):
                print("%s was written, but must not be" % absent)
                ok = False
        leftovers = [f for _, _, files in os.walk(scratch) for f in files if ".tmp." in f]
        if leftovers:
            print("temporary files left behind: %s" % leftovers)
            ok = False
    if not ok:
        print("command: jobviz %s" % " ".join(shlex.quote(a) for a in case["args"]))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
