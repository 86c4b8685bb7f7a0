"""The environment of a Python child process that must import this very ``pruner_ms``."""
from __future__ import annotations

import os

#: the folder that holds the ``pruner_ms`` package this process imported
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child_environment() -> dict[str, str]:
    """This process's environment with :data:`PACKAGE_ROOT` first on ``PYTHONPATH``, so that a child
    started as ``python -m pruner_ms...`` imports the package this process runs (a source checkout, a
    worktree, an install) whatever its working directory."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (PACKAGE_ROOT, env.get("PYTHONPATH"))))
    return env
