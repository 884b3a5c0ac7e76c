#!/usr/bin/env python3
"""`pip install .` as a Python user does it: builds the wheel from a copy of
the source tree into a fresh virtual environment (--system-site-packages for
meson-python, no network, no build isolation; at -O1 to build in less
time), then, with nothing from the
build tree on any path:
  - `import jobviz` comes from the venv, with libjobviz beside it;
  - `jobviz --version`, `python -m jobviz --version`, `jobviz.__version__`
    and the wheel's metadata all give the Meson project's version;
  - libjobviz and the CLI need only the C and C++ runtimes (plus CUDA and
    NCCL when built with them): nothing else from the build machine;
  - the four-process CPU pipeline with the barrier clock sync
    (e2e_processes.py) runs on the installed package and the installed
    `jobviz` command draws every job.

usage: e2e_wheel.py SOURCE_ROOT PROJECT_VERSION   (exits 77 without venv or meson-python)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# What every Linux machine with a C++ runtime has; CUDA and NCCL only in a
# wheel built with the CUDA backend (docs/runtime-shim.md, "pip install").
RUNTIME = re.compile(r"(libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt|ld-linux-x86-64|ld-linux-aarch64)\.so")
CUDA = re.compile(r"(libcudart|libnccl)\.so")


def run(args, **kw):
    result = subprocess.run(args, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        print(result.stdout[-4000:], result.stderr[-4000:], sep="\n")
        raise SystemExit("failed (%d): %s" % (result.returncode, " ".join(args)))
    return result


def copy_sources(source_root, dest):
    """The files git tracks (what a clone holds), or the tree without build dirs."""
    listed = subprocess.run(["git", "-C", source_root, "ls-files", "-z"], capture_output=True)
    if listed.returncode == 0 and listed.stdout:
        for name in listed.stdout.decode().split("\0"):
            if name and os.path.isfile(os.path.join(source_root, name)):
                os.makedirs(os.path.dirname(os.path.join(dest, name)), exist_ok=True)
                shutil.copy2(os.path.join(source_root, name), os.path.join(dest, name))
    else:
        shutil.copytree(source_root, dest, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("build*", ".git", "__pycache__"))


def needed(path):
    dump = run(["objdump", "-p", path]).stdout
    return re.findall(r"^\s*NEEDED\s+(\S+)", dump, re.M)


def main():
    source_root, version = sys.argv[1], sys.argv[2]
    system_python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    probe = subprocess.run([system_python, "-c", "import venv, ensurepip, mesonpy"], capture_output=True)
    if probe.returncode != 0:
        print("skipped: %s lacks venv, ensurepip or mesonpy (tools/install-deps installs python3-venv "
              "python3-mesonpy)" % system_python)
        return 77
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JOBVIZ_LIBRARY", "JOBVIZ_CLI",
                                                            "VIRTUAL_ENV", "PIP_FIND_LINKS")}
    env["PIP_NO_INPUT"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    with tempfile.TemporaryDirectory(prefix="jobviz_wheel_") as root:
        src, venv = os.path.join(root, "src"), os.path.join(root, "venv")
        copy_sources(source_root, src)
        run([system_python, "-m", "venv", "--system-site-packages", venv], env=env)
        python, bindir = os.path.join(venv, "bin", "python"), os.path.join(venv, "bin")
        # At -O1, not the wheel's release -O3: 73 s against 113 s to build on
        # 2 cores, and nothing checked here depends on the optimisation.
        run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
             "--config-settings=setup-args=-Doptimization=1", "."], cwd=src, env=env)
        shutil.rmtree(src)  # nothing may come from the source or build tree after this

        where = run([python, "-c", "import jobviz, os; print(jobviz.__file__); print(jobviz.__version__); "
                     "print(jobviz.library_version()); import importlib.metadata as m; print(m.version('jobviz'))"],
                    cwd=root, env=env).stdout.split()
        package = os.path.dirname(where[0])
        assert package.startswith(os.path.realpath(venv)) or package.startswith(venv), package
        assert where[1:] == [version] * 3, where
        cli = os.path.join(bindir, "jobviz")
        assert run([cli, "--version"], env=env).stdout.split() == ["jobviz", version]
        assert run([python, "-m", "jobviz", "--version"], cwd=root, env=env).stdout.split() == ["jobviz", version]

        library = os.path.join(package, "libjobviz.so")
        for binary in (library, cli):
            foreign = [n for n in needed(binary) if not RUNTIME.match(n) and not CUDA.match(n)]
            assert not foreign, (binary, foreign)
            print("%s needs %s" % (os.path.basename(binary), ", ".join(needed(binary))))

        # The pipeline on the installed package; only the test helpers on the path.
        run_env = dict(env, PYTHONPATH=HERE, PATH=bindir + os.pathsep + env.get("PATH", ""))
        check = ("import jobviz, sys; assert jobviz.__file__.startswith(sys.prefix), jobviz.__file__")
        run([python, "-c", check], cwd=root, env=run_env)
        result = run([python, os.path.join(HERE, "e2e_processes.py"), cli], cwd=root, env=run_env)
        print(result.stdout.strip().splitlines()[-1])
    print("ok: pip install . built and installed jobviz %s; the installed package and command drew every job" % version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
