#!/usr/bin/env python3
"""The HTML report's script is ES modules (src/emit/html/js/) that
src/emit/html/embed.py joins into one script at build time. Checks that the
join refuses what would break the page once joined (an import of a name its
module does not export, a name declared by two modules, a module given
before one it imports, which also refuses an import cycle), and, where node is
installed, that every module parses as an ES module and the joined script as
a classic one.

  check_modules.py SOURCE_ROOT      (exits 0 or 1)
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


def embed(root, out, paths):
    return subprocess.run([sys.executable, os.path.join(root, "src/emit/html/embed.py"), out] + paths,
                          capture_output=True, text=True)


def main():
    root = os.path.abspath(sys.argv[1])
    js = os.path.join(root, "src/emit/html/js")
    with open(os.path.join(root, "meson.build")) as f:
        build = f.read()
    order = [p for p in build.split("'") if p.startswith("src/emit/html/js/")]
    check(sorted(os.path.basename(p) for p in order) == sorted(os.listdir(js)),
          "meson.build does not list every module of src/emit/html/js/ once")
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "assets.h")
        done = embed(root, out, [os.path.join(root, p) for p in order])
        check(done.returncode == 0, "embed.py refused the page's modules: " + done.stderr)
        # Two modules a.js and b.js of the given texts, joined in the given order.
        bad = os.path.join(work, "js")
        os.makedirs(bad)

        def join(a_text, b_text, order="ab"):
            for name, text in (("a", a_text), ("b", b_text)):
                with open(os.path.join(bad, name + ".js"), "w") as f:
                    f.write(text)
            return embed(root, os.path.join(work, "joined.h"), [os.path.join(bad, name + ".js") for name in order])

        # A module that imports what another does not export, and one that declares what another does.
        done = join("export const shown = 1;\n", "import {hidden} from './a.js';\nconsole.log(hidden);\n")
        check(done.returncode != 0 and "b.js imports 'hidden', which a.js does not export" in done.stderr,
              "an import of a name not exported was joined: " + done.stderr)
        done = join("export const shown = 1;\n", "const shown = 2;\n")
        check(done.returncode != 0 and "'shown' is declared in a.js too" in done.stderr,
              "a name declared by two modules was joined: " + done.stderr)
        # An import cycle (a imports b, b imports a), and an import of a module given later.
        done = join("import {two} from './b.js';\nexport const one = 1;\nconsole.log(two);\n",
                    "import {one} from './a.js';\nexport const two = one + 1;\n")
        check(done.returncode != 0 and "a.js imports from b.js, which comes later" in done.stderr,
              "an import cycle was joined: " + done.stderr)
        done = join("import {two} from './b.js';\nconsole.log(two);\n", "export const two = 2;\n")
        check(done.returncode != 0 and "a.js imports from b.js, which comes later" in done.stderr,
              "a module was joined before one it imports: " + done.stderr)
        done = join("import {two} from './b.js';\nconsole.log(two);\n", "export const two = 2;\n", order="ba")
        check(done.returncode == 0, "modules in their import order were refused: " + done.stderr)
        node = shutil.which("node") or shutil.which("nodejs")
        if node:
            with open(out) as f:
                header = f.read()
            start = header.index('kAsset_report_js = R"jobviz_asset(') + len('kAsset_report_js = R"jobviz_asset(')
            script = os.path.join(work, "joined.js")
            with open(script, "w") as f:
                f.write(header[start:header.index(')jobviz_asset"', start)])
            parsed = subprocess.run([node, "--check", script], capture_output=True, text=True)
            check(parsed.returncode == 0, "the joined script does not parse: " + parsed.stderr)
            for name in sorted(os.listdir(js)):
                module = os.path.join(work, name[:-3] + ".mjs")
                shutil.copy(os.path.join(js, name), module)
                parsed = subprocess.run([node, "--check", module], capture_output=True, text=True)
                check(parsed.returncode == 0, name + " does not parse as an ES module: " + parsed.stderr)
        else:
            print("node is not installed: the parse checks are skipped")
    print("FAILED:" if failures else "ok:", len(failures), "failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
