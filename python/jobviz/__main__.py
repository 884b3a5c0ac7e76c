"""``python -m jobviz ARGS``: runs the jobviz CLI that came with this package
(the same as the ``jobviz`` command), with ARGS, in place of this process."""
from __future__ import annotations

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


def find_cli() -> str:
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
    os.execv(cli, [cli] + sys.argv[1:])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
