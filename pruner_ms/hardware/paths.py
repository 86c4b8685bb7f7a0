"""Where the hardware figures and suites (``configs/``) are found, and how a user overrides them.

The shipped files are the repository's ``configs/`` in a source checkout, and package data
(``pruner_ms/configs``, found through the import system) in a wheel. A user adds or replaces files without touching them: ``$PRUNER_MS_CONFIGS``
names one or more folders (separated by ``os.pathsep``) laid out the same way (``cpu/``, ``gpu/``,
``suites/``); a file there replaces the shipped file of the same name, a new name adds one, and
everything else keeps coming from the shipped copy. The first folder listed wins.
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

#: config kinds (sub-folders of ``configs/``)
KINDS = ("cpu", "gpu", "suites")
#: the environment variable naming the user's config folders
CONFIGS_ENV = "PRUNER_MS_CONFIGS"

_SOURCE_CHECKOUT = Path(__file__).resolve().parents[2] / "configs"


def configs_dir() -> Path:
    """The shipped ``configs/`` folder: the repository's, beside the imported package (a source tree or
    an editable install), else the package data of an installed ``pruner_ms`` (a wheel)."""
    if (_SOURCE_CHECKOUT / "cpu").is_dir():  # first: a worktree on PYTHONPATH reads its own configs
        return _SOURCE_CHECKOUT
    shipped = _package_data_dir()
    if shipped is not None and (shipped / "cpu").is_dir():
        return shipped
    raise FileNotFoundError(
        f"pruner_ms's shipped hardware configs are missing (looked in {_SOURCE_CHECKOUT} and the package data "
        "pruner_ms/configs): reinstall pruner_ms (`pip install .` or a wheel ships them)")


def _package_data_dir() -> Path | None:
    """Where the installed package's ``pruner_ms.configs`` lies: a data-only (namespace) package, so
    its location comes from the import system (``importlib.resources.files`` gives a multiplexed
    path for such a package in Python 3.10-3.11, not a folder)."""
    try:
        spec = importlib.util.find_spec("pruner_ms.configs")
    except ModuleNotFoundError:  # a source tree on PYTHONPATH: pruner_ms.configs is not a package there
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


def user_configs_dirs() -> list[Path]:
    """The folders ``$PRUNER_MS_CONFIGS`` names, first (highest priority) first; each must exist."""
    value = os.environ.get(CONFIGS_ENV, "")
    dirs = [Path(p) for p in value.split(os.pathsep) if p.strip()]
    for path in dirs:
        if not path.is_dir():
            raise FileNotFoundError(
                f"${CONFIGS_ENV} names {path}, which is not a folder: give folders holding cpu/, gpu/ or "
                f"suites/ files (separated by {os.pathsep!r}), or unset it")
    return dirs


def config_files(kind: str) -> list[Path]:
    """The ``*.json`` files of ``configs/<kind>/``, sorted by name: the shipped ones, each replaced by a
    user file of the same name where ``$PRUNER_MS_CONFIGS`` has one, plus the user's new ones."""
    if kind not in KINDS:
        raise ValueError(f"unknown config kind {kind!r}; choose from {', '.join(KINDS)}")
    by_name: dict[str, Path] = {}
    for folder in reversed([*user_configs_dirs(), configs_dir()]):  # the first folder listed wins
        by_name.update({p.name: p for p in (folder / kind).glob("*.json")})
    return [by_name[name] for name in sorted(by_name)]


def config_file(kind: str, name: str) -> Path | None:
    """``configs/<kind>/<name>.json`` as :func:`config_files` resolves it; ``None`` if there is none."""
    return next((p for p in config_files(kind) if p.stem == name), None)


def config_search_path(kind: str) -> str:
    """Where :func:`config_files` looks for ``kind``, for error messages."""
    return ", ".join(str(d / kind) for d in [*user_configs_dirs(), configs_dir()])
