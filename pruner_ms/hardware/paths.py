"""Where the hardware figures (``configs/``) are found."""
from __future__ import annotations

import os
from pathlib import Path


def configs_dir() -> Path:
    """Return the ``configs/`` folder: ``$PRUNER_MS_CONFIGS`` or the one beside the package."""
    env = os.environ.get("PRUNER_MS_CONFIGS")
    path = Path(env) if env else Path(__file__).resolve().parents[2] / "configs"
    if not path.is_dir():
        raise FileNotFoundError(
            f"pruner_ms hardware configs not found at {path}. Install pruner_ms from a source "
            "checkout (`pip install -e .`) or point PRUNER_MS_CONFIGS at the repository's configs/ folder."
        )
    return path
