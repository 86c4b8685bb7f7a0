"""Which code a benchmark ran: the imported ``pruner_ms`` package's directory, version and git commit.

A before/after comparison runs two trees of this package; ``PYTHONPATH`` does not decide which one
``python -m pruner_ms.cli`` imports when the working directory holds another checkout (the working
directory comes first on ``sys.path``). Every suite invocation records :func:`code_provenance`, so a
result says which tree produced it instead of the command line that was meant to choose it.
"""
from __future__ import annotations

import os
import subprocess


def _git(package_dir: str, *args: str) -> str | None:
    """``git -C package_dir args`` stdout, or None where git is missing or the directory is not in a work tree."""
    try:
        out = subprocess.run(["git", "-C", package_dir, *args], capture_output=True, text=True, check=False,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def code_provenance() -> dict:
    """The imported package: ``{"pruner_ms", "tvm", "path", "commit", "dirty"}``.

    ``path`` is the directory ``pruner_ms`` was imported from; ``commit`` the git commit of the work
    tree holding it and ``dirty`` whether that tree's ``pruner_ms/`` or ``configs/`` differ from the
    commit (both None outside a git work tree, e.g. an installed wheel).
    """
    import tvm

    import pruner_ms

    package_dir = os.path.dirname(os.path.abspath(pruner_ms.__file__))
    commit = _git(package_dir, "rev-parse", "HEAD")
    dirty = None
    if commit is not None:
        top = _git(package_dir, "rev-parse", "--show-toplevel")
        status = _git(top or package_dir, "status", "--porcelain", "--", "pruner_ms", "configs")
        dirty = None if status is None else bool(status)
    return {"pruner_ms": pruner_ms.__version__, "tvm": tvm.__version__, "path": package_dir,
            "commit": commit, "dirty": dirty}


def describe_provenance(code: dict | None) -> str:
    """One line for logs and Markdown: ``pruner_ms 0.1.0 from <path> (commit 1234567, uncommitted changes)``."""
    if not code:
        return "code not recorded"
    if code.get("commit"):
        state = ", uncommitted changes" if code.get("dirty") else ""
        where = f"commit {code['commit'][:7]}{state}"
    else:
        where = "not a git work tree"
    return f"pruner_ms {code.get('pruner_ms')} from {code.get('path')} ({where}), tvm {code.get('tvm')}"
