"""Measured programs read back from a MetaSchedule work_dir: per workload, the programs (replayed from
their traces) and their latencies.

One reader for everything that learns from measurements: the cost-model dataset
(:func:`pruner_ms.bench.dataset.load_records`, one work_dir per workload) and offline training
(:func:`pruner_ms.cost_model.train.train_offline`, any work_dirs). The two JSON files of MetaSchedule's
``JSONDatabase`` are read line by line, so a truncated or foreign file is an error that names the
file and the line, not a crash inside TVM's parser.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
from pathlib import Path

import numpy as np

from .measured_latency import record_seconds
from .resume import RECORD_FILE, WORKLOAD_FILE

logger = logging.getLogger("pruner_ms")


class RecordsError(RuntimeError):
    """A work_dir's database files are missing or unreadable; the message names the file (and line)."""


@dataclasses.dataclass
class WorkloadRecords:
    """The measured programs of one workload of one work_dir, in the order they were measured.

    Attributes
    ----------
    name : str
        The work_dir's base name (``base/i`` for the ``i``-th workload of a work_dir holding several);
        a dataset names it by its sub-directory.
    mod : tvm.IRModule
        The workload as stored in ``database_workload.json``.
    candidates : list of ms.MeasureCandidate
        One per record: the schedule replayed from the record's trace (``TuningRecord.as_measure_candidate``,
        postprocessors not re-run, as MetaSchedule's databases replay them) and its argument info.
    latencies : numpy.ndarray
        Mean measured seconds per record; ``inf`` where the build or run failed.
    target : tvm.target.Target
        The target the programs were built and measured for (the first record's).
    work_dir : str
        The directory the records were read from.
    sources : list of str
        Where each record came from (a dataset's ``manifest.json``: ``"random"`` or ``"search"``);
        ``"unknown"`` otherwise.
    flops : float or None
        Floating-point operations of one run, if known.
    records : list of ms.database.TuningRecord
        The records themselves (trace with its postprocessors' instructions, ``run_secs``), one per
        candidate.
    skipped : int
        Records whose trace no longer applies (another TVM version or shape), left out when read
        with ``on_replay_error="skip"``.
    """

    name: str
    mod: object
    candidates: list
    latencies: np.ndarray
    target: object
    work_dir: str = ""
    sources: list[str] = dataclasses.field(default_factory=list)
    flops: float | None = None
    records: list = dataclasses.field(default_factory=list)
    skipped: int = 0

    def __len__(self) -> int:
        return len(self.candidates)

    @property
    def valid(self) -> np.ndarray:
        """Boolean mask of the records with a finite, positive latency."""
        return np.isfinite(self.latencies) & (self.latencies > 0)


def read_work_dir(work_dir: str | os.PathLike, *, on_replay_error: str = "raise",
                  target=None) -> list[WorkloadRecords]:
    """The records of a MetaSchedule work_dir, grouped by workload in order of first appearance.

    Parameters
    ----------
    work_dir : str or PathLike
        A directory holding ``database_workload.json`` and ``database_tuning_record.json``.
    on_replay_error : {"raise", "skip"}
        A record whose trace does not replay: raise :class:`RecordsError` naming it, or leave it out
        (counted in :attr:`WorkloadRecords.skipped`, with one warning per workload).
    target : tvm.target.Target or dict, optional
        The target whose tensor intrinsics the traces may name (registered while replaying); by
        default the first record's.

    Returns
    -------
    list of WorkloadRecords
        Empty when the record file holds no record.

    Raises
    ------
    RecordsError
        A file is missing, is not JSON lines, or holds something that is not a MetaSchedule workload
        or (with ``on_replay_error="raise"``) tuning record; the message names the file and line.
    """
    from tvm.s_tir import meta_schedule as ms

    if on_replay_error not in ("raise", "skip"):
        raise ValueError(f"on_replay_error must be 'raise' or 'skip', got {on_replay_error!r}")
    root = Path(work_dir)
    wl_path, rec_path = root / WORKLOAD_FILE, root / RECORD_FILE
    for path in (wl_path, rec_path):
        if not path.is_file():
            raise RecordsError(f"{path} is missing (not a MetaSchedule work_dir)")
    wl_rows = _read_json_lines(wl_path)
    try:
        workloads = [ms.database.Workload.from_json(row) for row in wl_rows]
    except Exception as err:  # noqa: BLE001  (TVMError or a malformed row)
        raise RecordsError(f"{wl_path}: cannot parse a MetaSchedule workload ({type(err).__name__}: "
                           f"{_last_line(err)})") from None
    rows = _read_json_lines(rec_path)
    groups: dict[int, WorkloadRecords] = {}
    with _tensor_intrinsics(target, rows):
        for lineno, row in enumerate(rows, 1):
            index, rec, cand = _replay(ms, row, workloads, rec_path, lineno, on_replay_error)
            wl = groups.get(index)
            if wl is None:
                wl = groups[index] = WorkloadRecords(name="", mod=workloads[index].mod, candidates=[],
                                                     latencies=[], target=None, work_dir=str(root))
            if rec is None:
                wl.skipped += 1
                continue
            wl.candidates.append(cand)
            wl.records.append(rec)
            wl.latencies.append(record_seconds(rec))
            if wl.target is None and rec.target is not None:
                wl.target = rec.target
    out = list(groups.values())
    base = os.path.basename(os.path.normpath(str(root)))
    for i, wl in enumerate(out):
        wl.name = base if len(out) == 1 else f"{base}/{i}"
        wl.latencies = np.asarray(wl.latencies, dtype=np.float64)
        wl.sources = ["unknown"] * len(wl.candidates)
        if wl.skipped:
            logger.warning("%s: %d of %d records do not replay (another TVM version or shape?), left out",
                           rec_path, wl.skipped, wl.skipped + len(wl.candidates))
    return out


def _last_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[-1] if text else ""


def _read_json_lines(path: Path) -> list:
    rows = []
    with path.open() as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError as err:
                raise RecordsError(f"{path}, line {lineno}: not valid JSON ({err}); the file is corrupt") from None
    return rows


def _tensor_intrinsics(target, rows: list):
    """The block in which a work_dir's records replay: the tensor intrinsics of its target registered,
    since tensorized traces name them (``target`` if given, else the first record's)."""
    from tvm.target import Target

    from .workarounds import tensor_intrinsics_for

    if target is None and rows:  # a record row is [workload index, [trace, run_secs, target, args_info]]
        first = rows[0][1] if isinstance(rows[0], list) and len(rows[0]) == 2 and isinstance(rows[0][1], list) else []
        target = first[2] if len(first) > 2 and isinstance(first[2], dict) else None
    if target is None:
        return contextlib.nullcontext()
    return tensor_intrinsics_for(target if isinstance(target, Target) else Target(target))


def _replay(ms, row, workloads: list, rec_path: Path, lineno: int, on_replay_error: str):
    """One record row as (workload index, TuningRecord, MeasureCandidate); record and candidate are
    ``None`` when the record does not replay and ``on_replay_error`` is ``"skip"``."""
    try:
        wl_index, rec_json = row
        wl_index = int(wl_index)
        if not 0 <= wl_index < len(workloads):
            raise IndexError(f"workload index {wl_index} out of range ({len(workloads)} workloads)")
    except (TypeError, ValueError, IndexError) as err:  # not a [workload index, record] row at all
        raise RecordsError(f"{rec_path}, record {lineno}: not a MetaSchedule tuning record row "
                           f"({type(err).__name__}: {_last_line(err)})") from None
    try:
        rec = ms.database.TuningRecord.from_json(rec_json, workloads[wl_index])
        return wl_index, rec, rec.as_measure_candidate()
    except Exception as err:  # noqa: BLE001  (TVMError: a foreign record, or a trace that does not apply)
        if on_replay_error == "skip":
            return wl_index, None, None
        raise RecordsError(f"{rec_path}, record {lineno}: cannot replay a MetaSchedule tuning record "
                           f"({type(err).__name__}: {_last_line(err)})") from None
