"""Tuning records across work_dirs: the program a record holds, records by workload, statistics,
merging and export.

A MetaSchedule work_dir holds a ``JSONDatabase`` (:func:`~pruner_ms.integration.resume.open_database`
opens it after checking it). Records are keyed here as MetaSchedule keys them: by the workload's
structural hash, the target and the trace. :func:`merge_databases` copies the records of several
work_dirs into one, each record once, so tuning done on one machine (or by one run) is found by the
next; ``pruner-ms db stats | merge | export`` is the command line for it.
"""
from __future__ import annotations

import dataclasses
import json
import math

from tvm.s_tir import Schedule
from tvm.s_tir import meta_schedule as ms

from .measured_latency import record_seconds
from .resume import open_database, workload_key


def workload_name(mod) -> str:
    """A readable name for a workload: its function and the shapes of its first buffer parameters."""
    names = [gv.name_hint for gv in mod.get_global_vars()]
    func = mod[names[0]]
    shapes = []
    for p in list(func.params)[:4]:  # TVM 0.27: buffer parameters carry their shape
        if getattr(p, "shape", None) is not None:
            shapes.append("x".join(str(d) for d in p.shape))
    return f"{names[0]}({', '.join(shapes)})"


def compiled_schedule(mod, trace) -> Schedule:
    """The program a record's ``trace`` made of ``mod`` (an ``IRModule`` or ``PrimFunc``), as MetaSchedule
    built and ran it: the trace replayed with its decisions and its postprocessors' instructions (a
    record keeps them; a search strategy replays without them and runs the postprocessors itself).
    Raises what TVM raises when the trace does not apply to ``mod`` (e.g. a record of another shape)."""
    sch = Schedule(mod)
    trace.apply_to_schedule(sch, remove_postproc=False)
    return sch


def record_key(record) -> tuple[int, str, str]:
    """One record's identity: workload, target and trace (its decisions included), not its latency."""
    return workload_key(record.workload.mod), str(record.target), str(record.trace.as_json(remove_postproc=False))


def records_by_workload(database) -> dict:
    """``{workload key: {"name", "latencies" (in measurement order, inf = failed), "best" record}}``."""
    out: dict = {}
    for rec in database.get_all_tuning_records():
        entry = out.setdefault(workload_key(rec.workload.mod),
                               {"name": workload_name(rec.workload.mod), "latencies": [], "best": None})
        entry["latencies"].append(record_seconds(rec))
        if entry["best"] is None or entry["latencies"][-1] < record_seconds(entry["best"]):
            entry["best"] = rec
    return out


@dataclasses.dataclass
class WorkloadStats:
    """What a database holds for one workload and target."""

    name: str
    workload_key: int
    target: str
    measured: int
    valid: int
    best_seconds: float  # inf when no measurement is valid
    best: object = None  # the TuningRecord of best_seconds (None when no measurement is valid)

    @property
    def failed(self) -> int:
        return self.measured - self.valid


def database_stats(work_dir: str) -> list[WorkloadStats]:
    """Per workload and target: records, valid ones and the best latency, in first-seen order."""
    stats: dict[tuple[int, str], WorkloadStats] = {}
    for rec in open_database(work_dir, repair_tail=False).get_all_tuning_records():
        key = (workload_key(rec.workload.mod), str(rec.target))
        s = stats.get(key)
        if s is None:
            s = stats[key] = WorkloadStats(workload_name(rec.workload.mod), key[0], key[1], 0, 0, math.inf)
        seconds = record_seconds(rec)
        s.measured += 1
        if math.isfinite(seconds):
            s.valid += 1
            if seconds < s.best_seconds:
                s.best_seconds, s.best = seconds, rec
    return list(stats.values())


@dataclasses.dataclass
class MergeReport:
    added: int  # records copied into the destination
    duplicates: int  # records the destination (or an earlier source) already held
    sources: list[str]


def merge_databases(destination: str, sources: list[str]) -> MergeReport:
    """Copy every record of the ``sources`` work_dirs into the ``destination`` work_dir's database
    (created if missing), each record once: a record whose workload, target and trace the
    destination already holds is skipped, whatever its latency (the first measurement stands)."""
    if not sources:
        raise ValueError("merge_databases: no source work_dir given")
    out = open_database(destination)
    seen = {record_key(rec) for rec in out.get_all_tuning_records()}
    added = duplicates = 0
    for src in sources:
        for rec in open_database(src, repair_tail=False).get_all_tuning_records():
            key = record_key(rec)
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            workload = out.commit_workload(rec.workload.mod)
            out.commit_tuning_record(ms.database.TuningRecord(rec.trace, workload, rec.run_secs, rec.target,
                                                              rec.args_info))
            added += 1
    return MergeReport(added, duplicates, list(sources))


def export_best(work_dir: str, path: str) -> int:
    """Write the best valid record of each workload and target as one JSON object per line
    (workload name and key, target, latency, the trace as Python); return how many were written."""
    best = [s for s in database_stats(work_dir) if s.best is not None]
    with open(path, "w", encoding="utf-8") as f:
        for s in best:
            f.write(json.dumps({
                "workload": s.name, "workload_key": s.workload_key, "target": s.target, "seconds": s.best_seconds,
                "trace": "\n".join(s.best.trace.as_python(remove_postproc=True)),
            }) + "\n")
    return len(best)
