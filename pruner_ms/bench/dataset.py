"""A measured CPU dataset for training and evaluating learned cost models.

``scripts/make_dataset.py`` tunes a handful of small fp32 workloads on one CPU and keeps, per
workload, the two JSON files of MetaSchedule's ``JSONDatabase`` (``database_workload.json`` and
``database_tuning_record.json``) under ``tests/data/cpu_dataset/<workload>/``, with a
``manifest.json`` (names, record counts, FLOPs) and a ``README.md`` (how it was produced).
Each work_dir holds random programs (``ReplayTrace``) followed by searched ones
(``EvolutionarySearch`` + ``XGBModel``); failed builds and runs are kept (MetaSchedule records them
at 1e10 s) and load here with latency ``inf``::

    from pruner_ms.bench.dataset import load_records, split_by_workload
    data = load_records()                                   # {name: WorkloadRecords}
    train, test = split_by_workload(list(data), "dense-1x1024x1024")
    recs = data["gemm-128x128x128"]
    recs.candidates[0].sch.mod, recs.latencies[0], recs.valid   # program, mean seconds, finite mask
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..integration.measured_latency import METASCHEDULE_FAILED_SECONDS, record_seconds
from ..integration.resume import RECORD_FILE, WORKLOAD_FILE

from .workloads import Workload, conv2d_nchw, dense, gemm

__all__ = [
    "DATASET_WORKLOADS",
    "FAILED_RUN_SECS",
    "REGENERATE",
    "DatasetError",
    "WorkloadRecords",
    "dataset_dir",
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


class DatasetError(RuntimeError):
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
@dataclasses.dataclass
class WorkloadRecords:
    """The measured programs of one workload, in the order they were measured.

    Attributes
    ----------
    name : str
        Workload name (the sub-directory of the dataset).
    mod : tvm.IRModule
        The workload as stored in ``database_workload.json``.
    candidates : list of ms.MeasureCandidate
        One per record: the schedule replayed from the record's trace (``TuningRecord.as_measure_candidate``,
        postprocessors not re-run, as MetaSchedule's databases replay them) and its argument info.
    latencies : numpy.ndarray
        Mean measured seconds per record; ``inf`` where the build or run failed.
    target : tvm.target.Target
        The target the programs were built and measured for.
    sources : list of str
        ``"random"`` or ``"search"`` per record, from ``manifest.json`` (``"unknown"`` without one).
    flops : float or None
        Floating-point operations of one run (from ``manifest.json``), if known.
    """

    name: str
    mod: Any
    candidates: list
    latencies: np.ndarray
    target: Any
    sources: list[str] = dataclasses.field(default_factory=list)
    flops: float | None = None

    def __len__(self) -> int:
        return len(self.candidates)

    @property
    def valid(self) -> np.ndarray:
        """Boolean mask of the records with a finite, positive latency."""
        return np.isfinite(self.latencies) & (self.latencies > 0)


def dataset_dir() -> Path:
    """The dataset of a source checkout, ``tests/data/cpu_dataset`` beside the ``pruner_ms`` package
    (a wheel does not ship it: pass a dataset directory explicitly there)."""
    return Path(__file__).resolve().parents[2] / "tests" / "data" / "cpu_dataset"


def _root(root: str | Path | None) -> Path:
    path = Path(root) if root is not None else dataset_dir()
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


def list_workloads(root: str | Path | None = None) -> list[str]:
    """Names of the workloads in a dataset directory (the sub-directories holding a database).

    Parameters
    ----------
    root : str or Path, optional
        Dataset directory; default :func:`dataset_dir`.

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


def _read_json_lines(path: Path) -> list:
    if not path.exists():
        raise DatasetError(f"{path} is missing; regenerate the dataset with `{REGENERATE}`")
    rows = []
    with path.open() as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError as err:
                raise DatasetError(f"{path}, line {lineno}: not valid JSON ({err}); the file is corrupt, "
                                   f"regenerate the dataset with `{REGENERATE}`") from None
    if not rows:
        raise DatasetError(f"{path} is empty; regenerate the dataset with `{REGENERATE}`")
    return rows


def _tensor_intrinsics_of(target_json, rows: list):
    """The block in which a workload's records replay: the tensor intrinsics of its target (from the
    manifest, else from the first record) registered, since tensorized traces name them."""
    import contextlib

    from tvm.target import Target

    from ..integration.workarounds import tensor_intrinsics_for

    if target_json is None:  # a record row is [workload index, [trace, run_secs, target, args_info]]
        first = rows[0][1] if len(rows[0]) == 2 and isinstance(rows[0][1], list) else []
        target_json = first[2] if len(first) > 2 and isinstance(first[2], dict) else None
    return tensor_intrinsics_for(Target(target_json)) if target_json else contextlib.nullcontext()


def _load_one(root: Path, name: str, info: dict | None, target_json: dict | None = None) -> WorkloadRecords:
    from tvm.s_tir import meta_schedule as ms

    wdir = root / name
    if not wdir.is_dir():
        raise DatasetError(f"workload directory {wdir} does not exist; known: {', '.join(list_workloads(root))}")
    wl_path, rec_path = wdir / WORKLOAD_FILE, wdir / RECORD_FILE
    wl_rows = _read_json_lines(wl_path)
    try:
        workloads = [ms.database.Workload.from_json(row) for row in wl_rows]
    except Exception as err:  # noqa: BLE001  (TVMError or a malformed row)
        raise DatasetError(f"{wl_path}: cannot parse a MetaSchedule workload ({type(err).__name__}: "
                           f"{str(err).strip().splitlines()[-1] if str(err).strip() else ''}); "
                           f"regenerate the dataset with `{REGENERATE}`") from None
    candidates, latencies, target = [], [], None
    rows = _read_json_lines(rec_path)
    with _tensor_intrinsics_of(target_json, rows):
        replayed = [_replay(ms, row, workloads, rec_path, lineno) for lineno, row in enumerate(rows, 1)]
    for rec, cand in replayed:
        candidates.append(cand)
        latencies.append(record_seconds(rec))
        if target is None and rec.target is not None:
            target = rec.target
    sources = ["unknown"] * len(candidates)
    flops = None
    if info is not None:
        n_random = int(info.get("random_records", 0))
        sources = ["random"] * min(n_random, len(candidates)) + ["search"] * max(0, len(candidates) - n_random)
        flops = info.get("flops")
    return WorkloadRecords(name=name, mod=workloads[0].mod, candidates=candidates,
                           latencies=np.asarray(latencies, dtype=np.float64), target=target,
                           sources=sources, flops=flops)


def _replay(ms, row, workloads: list, rec_path: Path, lineno: int):
    """One record row as (TuningRecord, MeasureCandidate); a clear error if it does not replay."""
    try:
        wl_index, rec_json = row
        if not 0 <= int(wl_index) < len(workloads):
            raise IndexError(f"workload index {wl_index} out of range ({len(workloads)} workloads)")
        rec = ms.database.TuningRecord.from_json(rec_json, workloads[int(wl_index)])
        return rec, rec.as_measure_candidate()
    except Exception as err:  # noqa: BLE001
        msg = str(err).strip().splitlines()[-1] if str(err).strip() else ""
        raise DatasetError(f"{rec_path}, record {lineno}: cannot replay a MetaSchedule tuning record "
                           f"({type(err).__name__}: {msg}); regenerate the dataset with `{REGENERATE}`") from None


def load_records(root: str | Path | None = None, workloads: Iterable[str] | None = None
                 ) -> dict[str, WorkloadRecords]:
    """Load the measured programs of a dataset.

    Parameters
    ----------
    root : str or Path, optional
        Dataset directory; default :func:`dataset_dir` (the shipped one).
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
        All workload names, e.g. ``list(load_records())``.
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
