"""``python -m jobviz ARGS``: runs the jobviz CLI that came with this package
(the same as the ``jobviz`` command), with ARGS, in place of this process."""
from __future__ import annotations

import errno
import os
import shutil
import sys
import sysconfig
from typing import Iterator, List

from . import _location


def _candidates() -> Iterator[str]:
    explicit = os.environ.get("JOBVIZ_CLI")
    if explicit:
        yield explicit
        return
    if _location.CLI:  # the build tree's, or where `meson install` put it
        yield _location.CLI
    # A wheel installs it among this interpreter's scripts (a venv's bin/,
    # or ~/.local/bin for pip install --user).
    schemes = [None] + [s for s in (f"{os.name}_user",) if s in sysconfig.get_scheme_names()]
    for scheme in schemes:
        try:
            scripts = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
        except KeyError:
            continue
        yield os.path.join(scripts, "jobviz")
    yield os.path.join(os.path.dirname(sys.executable), "jobviz")
    found = shutil.which("jobviz")
    if found:
        yield found


def _why_not(path: str) -> str:
    """Why JOBVIZ_CLI cannot be run, in words; "" when it can."""
    if not os.path.exists(path):
        return "there is no such file"
    if os.path.isdir(path):
        return "it is a directory, not the jobviz program"
    if not os.access(path, os.X_OK):
        return "it is not executable (chmod +x it, or point JOBVIZ_CLI at the jobviz program)"
    return ""


def find_cli() -> str:
    explicit = os.environ.get("JOBVIZ_CLI")
    if explicit:
        why = _why_not(explicit)
        if why:
            raise FileNotFoundError(f"jobviz: JOBVIZ_CLI={explicit} cannot be run: {why}")
        return explicit
    tried: List[str] = []
    for candidate in _candidates():
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
        tried.append(candidate)
    raise FileNotFoundError("jobviz: the jobviz command is not where this package was installed with it; tried: " +
                            ", ".join(tried) + " (set JOBVIZ_CLI to its path)")


def main() -> int:
    try:
        cli = find_cli()
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 2
    try:
        os.execv(cli, [cli] + sys.argv[1:])
    except OSError as e:  # a file the kernel cannot run: no #! line, another machine's binary
        source = "JOBVIZ_CLI=" + cli if os.environ.get("JOBVIZ_CLI") else cli
        print(f"jobviz: cannot run {source}: {e.strerror}"
              + (" (not a program for this machine, nor a script with a #! line)" if e.errno == errno.ENOEXEC else ""),
              file=sys.stderr)
        return 2
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
