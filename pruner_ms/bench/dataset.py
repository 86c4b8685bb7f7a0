"""A measured CPU dataset for training and evaluating learned cost models.

``scripts/make_dataset.py`` tunes a handful of small fp32 workloads on one CPU and keeps, per
workload, the two JSON files of MetaSchedule's ``JSONDatabase`` (``database_workload.json`` and
``database_tuning_record.json``) under ``tests/data/cpu_dataset/<workload>/`` of a source checkout
(a wheel does not ship it), with a
``manifest.json`` (names, record counts, FLOPs) and a ``README.md`` (how it was produced).
Each work_dir holds random programs (``ReplayTrace``) followed by searched ones
(``EvolutionarySearch`` + ``XGBModel``); failed builds and runs are kept (MetaSchedule records them
at 1e10 s) and load here with latency ``inf``::

    from pruner_ms.bench.dataset import load_records, split_by_workload
    data = load_records("tests/data/cpu_dataset")           # {name: WorkloadRecords}
    train, test = split_by_workload(list(data), "dense-1x1024x1024")
    recs = data["gemm-128x128x128"]
    recs.candidates[0].sch.mod, recs.latencies[0], recs.valid   # program, mean seconds, finite mask
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..integration.measured_latency import METASCHEDULE_FAILED_SECONDS
from ..integration.records import RecordsError, WorkloadRecords, read_work_dir
from ..integration.resume import RECORD_FILE, WORKLOAD_FILE

from .workloads import Workload, conv2d_nchw, dense, gemm

__all__ = [
    "DATASET_WORKLOADS",
    "FAILED_RUN_SECS",
    "REGENERATE",
    "DatasetError",
    "WorkloadRecords",
    "dataset_workload",
    "dense",
    "list_workloads",
    "load_records",
    "split_by_workload",
]

#: The command that (re)generates the shipped dataset, quoted in every error.
REGENERATE = "python scripts/make_dataset.py"
#: MetaSchedule records a failed build or run with this many seconds (``AddToDatabase``).
FAILED_RUN_SECS = METASCHEDULE_FAILED_SECONDS
MANIFEST_FILE = "manifest.json"


class DatasetError(RecordsError):
    """The dataset is missing or unreadable; the message names the file and how to regenerate it."""


# -- workloads ------------------------------------------------------------------------------------
#: The dataset's workloads: name -> (builder, arguments). Names equal ``Workload.name``.
DATASET_WORKLOADS: dict[str, tuple[Any, tuple[int, ...]]] = {
    "gemm-128x128x128": (gemm, (128, 128, 128)),
    "gemm-256x128x512": (gemm, (256, 128, 512)),
    "dense-16x512x1024": (dense, (16, 512, 1024)),
    "dense-1x1024x1024": (dense, (1, 1024, 1024)),
    "conv2d-1x32x28x28-f32-k3": (conv2d_nchw, (1, 32, 28, 28, 32, 3, 3, 1)),
    "conv2d-1x64x14x14-f64-k3": (conv2d_nchw, (1, 64, 14, 14, 64, 3, 3, 1)),
}


def dataset_workload(name: str) -> Workload:
    """The :class:`~pruner_ms.bench.workloads.Workload` (TE definition, numpy reference) of a dataset workload."""
    try:
        fn, args = DATASET_WORKLOADS[name]
    except KeyError:
        raise KeyError(f"unknown dataset workload {name!r}; choose from {', '.join(DATASET_WORKLOADS)}") from None
    wl = fn(*args)
    assert wl.name == name, (wl.name, name)
    return wl


# -- loading --------------------------------------------------------------------------------------
def _root(root: str | Path) -> Path:
    path = Path(root)
    if not path.is_dir():
        raise DatasetError(f"dataset directory {path} does not exist; generate it with `{REGENERATE}`")
    return path


def _manifest(root: Path) -> dict | None:
    path = root / MANIFEST_FILE
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise DatasetError(f"{path} is not valid JSON ({err}); regenerate the dataset with `{REGENERATE}`") from None


def list_workloads(root: str | Path) -> list[str]:
    """Names of the workloads in a dataset directory (the sub-directories holding a database).

    Parameters
    ----------
    root : str or Path
        Dataset directory (a source checkout's is ``tests/data/cpu_dataset``; a wheel ships none).

    Returns
    -------
    list of str
        Sorted workload names.
    """
    path = _root(root)
    names = sorted(p.name for p in path.iterdir() if p.is_dir() and (p / RECORD_FILE).exists())
    if not names:
        raise DatasetError(f"dataset directory {path} holds no workload (no */{RECORD_FILE}); "
                           f"generate it with `{REGENERATE}`")
    return names


def _load_one(root: Path, name: str, info: dict | None, target_json: dict | None = None) -> WorkloadRecords:
    wdir = root / name
    if not wdir.is_dir():
        raise DatasetError(f"workload directory {wdir} does not exist; known: {', '.join(list_workloads(root))}")
    try:
        groups = read_work_dir(wdir, on_replay_error="raise", target=target_json)
    except RecordsError as err:
        raise DatasetError(f"{err}; regenerate the dataset with `{REGENERATE}`") from None
    if not groups:
        raise DatasetError(f"{wdir / RECORD_FILE} holds no record; regenerate the dataset with `{REGENERATE}`")
    if len(groups) != 1:
        raise DatasetError(f"{wdir / RECORD_FILE} holds records of {len(groups)} workloads, a dataset workload "
                           f"one; regenerate the dataset with `{REGENERATE}`")
    (recs,) = groups
    recs.name = name
    if info is not None:
        n_random = int(info.get("random_records", 0))
        recs.sources = (["random"] * min(n_random, len(recs)) + ["search"] * max(0, len(recs) - n_random))
        recs.flops = info.get("flops")
    return recs


def load_records(root: str | Path, workloads: Iterable[str] | None = None) -> dict[str, WorkloadRecords]:
    """Load the measured programs of a dataset.

    Parameters
    ----------
    root : str or Path
        Dataset directory (a source checkout's is ``tests/data/cpu_dataset``).
    workloads : iterable of str, optional
        Names to load; default all of :func:`list_workloads`.

    Returns
    -------
    dict of str to WorkloadRecords
        In the order of ``workloads`` (sorted names by default).

    Raises
    ------
    DatasetError
        The directory, a workload or one of its files is missing or corrupt; the message names the
        file and the command that regenerates the dataset.
    """
    path = _root(root)
    names = list(workloads) if workloads is not None else list_workloads(path)
    manifest = _manifest(path) or {}
    info = {w["name"]: w for w in manifest.get("workloads", [])}
    return {name: _load_one(path, name, info.get(name), manifest.get("target")) for name in names}


def split_by_workload(names: Sequence[str], holdout: str | Iterable[str]) -> tuple[list[str], list[str]]:
    """Split workload names into (train, test) with whole workloads held out.

    Parameters
    ----------
    names : sequence of str
        All workload names, e.g. ``list(load_records(root))``.
    holdout : str or iterable of str
        The names to hold out for testing.

    Returns
    -------
    train, test : list of str
        ``names`` without the held-out ones, and the held-out ones, both in the order of ``names``.

    Raises
    ------
    ValueError
        A held-out name is not among ``names``, or nothing would be left to train on.
    """
    held = {holdout} if isinstance(holdout, str) else set(holdout)
    unknown = held - set(names)
    if unknown:
        raise ValueError(f"held-out workloads not in the dataset: {', '.join(sorted(unknown))}; "
                         f"choose from {', '.join(names)}")
    train = [n for n in names if n not in held]
    test = [n for n in names if n in held]
    if not train:
        raise ValueError("every workload is held out: nothing left to train on")
    return train, test
