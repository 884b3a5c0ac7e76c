#!/usr/bin/env python3
"""tools/check-layout's rules on small trees made here: a .cc and the .h
(and _impl.h) beside it count together, a shim file with its public header
too, a header that no .cc of its name owns counts alone, and an include against the
layering fails.

usage: check_layout_rules.py SOURCE_ROOT     (exits 0 or 1)
"""
import os
import shutil
import subprocess
import sys
import tempfile

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def tree(files):
    """A source tree of {path: line count or text}; returns its root."""
    root = tempfile.mkdtemp(prefix="jobviz_layout_")
    for path, body in files.items():
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(body if isinstance(body, str) else "// line\n" * body)
    return root


def run(checker, files):
    root = tree(files)
    done = subprocess.run([sys.executable, checker, root], capture_output=True, text=True)
    shutil.rmtree(root)
    return done.returncode, done.stdout


def main():
    checker = os.path.join(os.path.abspath(sys.argv[1]), "tools", "check-layout")
    code, out = run(checker, {"src/analyse/x.cc": 300, "src/analyse/x.h": 160})
    check(code == 1 and "src/analyse/x.cc + x.h: 460 lines, over 450" in out, "a pair of 300 + 160 lines passed:\n" + out)
    code, out = run(checker, {"src/analyse/x.cc": 300, "src/analyse/x.h": 150})
    check(code == 0, "a pair of 300 + 150 lines failed:\n" + out)
    code, out = run(checker, {"src/shim/p.cc": 300, "include/jobviz/p.h": 151})
    check(code == 1 and "src/shim/p.cc + include/jobviz/p.h: 451 lines" in out, "the shim's pair was not counted:\n" + out)
    code, out = run(checker, {"src/shim/p.cc": 200, "src/shim/p_impl.h": 151, "include/jobviz/p.h": 100})
    check(code == 1 and "src/shim/p.cc + p_impl.h + include/jobviz/p.h: 451 lines" in out,
          "a .cc was not counted with its _impl.h:\n" + out)
    code, out = run(checker, {"src/analyse/y.cc": 400, "src/analyse/x.h": 400, "src/analyse/y_test.cc": 900})
    check(code == 0, "files of different names, or a test, were counted together:\n" + out)
    code, out = run(checker, {"src/analyse/shared_room.h": 451})
    check(code == 1 and "src/analyse/shared_room.h: 451 lines" in out, "a header alone over the limit passed:\n" + out)
    code, out = run(checker, {"src/model/m.cc": '#include "emit/e.h"\n', "src/emit/e.h": 1})
    check(code == 1 and 'src/model/m.cc: #include "emit/e.h": emit/ is above model/' in out,
          "an include against the layering passed:\n" + out)
    print("FAILED:" if failures else "ok:", len(failures), "failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
