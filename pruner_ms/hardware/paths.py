"""Where the hardware figures and suites (``configs/``) are found."""
from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]


def configs_dir() -> Path:
    """Return the ``configs/`` folder.

    ``$PRUNER_MS_CONFIGS`` if set; else the repository's ``configs/`` beside the package (a source
    checkout or an editable install); else the copy a wheel ships inside the package
    (``pruner_ms/configs``, package data built from the same folder).
    """
    env = os.environ.get("PRUNER_MS_CONFIGS")
    candidates = [Path(env)] if env else [_PACKAGE.parent / "configs", _PACKAGE / "configs"]
    for path in candidates:
        if (path / "cpu").is_dir():
            return path
    raise FileNotFoundError(
        f"pruner_ms hardware configs not found (looked in {', '.join(map(str, candidates))}). "
        + ("Point PRUNER_MS_CONFIGS at a folder with cpu/, gpu/ and suites/." if env else
           "Reinstall pruner_ms (`pip install .` or a wheel ships them as package data) or set PRUNER_MS_CONFIGS.")
    )
