"""Tuning records reused from other work_dirs (``--reuse``): a workload tuned before is not tuned again.

For each workload of a run that the run's own database does not hold yet, :func:`reuse_records`
looks for valid records of the same workload (structural hash) and target in other work_dirs (or a
database merged with ``pruner-ms db merge``). The best ``top`` of them are built and measured once
here, with the run's own builder and runner, and committed to the run's database with this
machine's latency: a record measured elsewhere never decides what is compiled here. A workload
whose reused programs all fail here is tuned as if nothing had been found.
"""
from __future__ import annotations

import dataclasses
import logging
import math
import os

from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.meta_schedule.utils import remove_build_dir

from .database import compiled_schedule, workload_name
from .measured_latency import METASCHEDULE_FAILED_SECONDS, mean_run_seconds, record_seconds, result_seconds
from .resume import RECORD_FILE, measured_count, open_database, workload_key

logger = logging.getLogger("pruner_ms")


class ReuseError(ValueError):
    """A ``--reuse`` source is not a work_dir."""


def check_reuse_sources(sources: list[str]) -> list[str]:
    """``sources`` if each is a MetaSchedule work_dir; :class:`ReuseError` naming the first that is not."""
    for src in sources:
        if not os.path.exists(os.path.join(src, RECORD_FILE)):
            raise ReuseError(f"--reuse {src}: not a MetaSchedule work_dir (no {RECORD_FILE}); give work_dirs of "
                             "earlier runs or a database made with pruner-ms db merge")
    return list(sources)


@dataclasses.dataclass
class ReusedWorkload:
    """What ``--reuse`` found for one workload."""

    name: str
    source: str  # the work_dir the best reused record came from
    source_seconds: float  # its latency there
    seconds: float  # the best of the reused programs measured here (inf: all failed here)

    @property
    def holds(self) -> bool:
        """Whether a reused program ran here (the workload then needs no tuning)."""
        return math.isfinite(self.seconds)


def _valid_records(sources: list[str]) -> dict[tuple[int, str], list[tuple[float, str, object]]]:
    """The valid records of the ``sources`` by (workload key, target), fastest first."""
    found: dict[tuple[int, str], list[tuple[float, str, object]]] = {}
    for src in sources:
        for rec in open_database(src, repair_tail=False).get_all_tuning_records():
            seconds = record_seconds(rec)
            if math.isfinite(seconds):
                found.setdefault((workload_key(rec.workload.mod), str(rec.target)), []).append((seconds, src, rec))
    for records in found.values():
        records.sort(key=lambda item: item[0])
    return found


def _measure_here(records, mod, target, builder, runner) -> list[list[float]]:
    """Build and run each record's program of ``mod`` once; its run seconds (failed: MetaSchedule's marker).
    ``runner`` as :func:`~pruner_ms.integration.runners.make_runner` returns it ("local": a ``LocalRunner``)."""
    if isinstance(runner, str):
        runner = ms.runner.Runner.create(runner)
    kind = str(target.kind.name)
    device_type = "cpu" if kind == "llvm" else kind  # as MetaSchedule's task scheduler names the device
    out: list[list[float] | None] = [None] * len(records)
    schedules, applied = [], []
    for i, rec in enumerate(records):
        try:
            sch = compiled_schedule(mod, rec.trace)
        except Exception as err:  # noqa: BLE001  (a record whose trace no longer applies is skipped, never fatal)
            logger.warning("--reuse: a record of %s no longer applies to it (%s: %s); skipped", workload_name(mod),
                           type(err).__name__, str(err).splitlines()[0] if str(err) else "")
            continue
        schedules.append(sch)
        applied.append(i)
    built = builder.build([ms.builder.BuilderInput(sch.mod, target) for sch in schedules]) if schedules else []
    inputs, positions = [], []
    for i, sch, result in zip(applied, schedules, built):
        rec = records[i]
        if result.error_msg:
            logger.warning("--reuse: a reused program of %s does not build here: %s", workload_name(mod),
                           str(result.error_msg).splitlines()[0])
            continue
        args_info = rec.args_info if rec.args_info is not None else ms.arg_info.ArgInfo.from_entry_func(
            sch.mod, remove_preproc=True)
        inputs.append(ms.runner.RunnerInput(result.artifact_path, device_type, args_info))
        positions.append(i)
    for i, future, inp in zip(positions, runner.run(inputs) if inputs else [], inputs):
        result = future.result()
        remove_build_dir(inp.artifact_path)
        if math.isfinite(result_seconds(result)):
            out[i] = [float(x) for x in result.run_secs]
        else:
            logger.warning("--reuse: a reused program of %s does not run here: %s", workload_name(mod),
                           (str(result.error_msg or "no valid time").strip().splitlines() or [""])[-1])
    return [secs if secs is not None else [METASCHEDULE_FAILED_SECONDS] for secs in out]


def reuse_records(database, sources: list[str], workloads: list, target, *, builder, runner,
                  top: int = 1) -> dict[int, ReusedWorkload]:
    """Measure here the best ``top`` records that the ``sources`` work_dirs hold for each workload
    of ``workloads`` (IRModules) that ``database`` holds nothing of yet, and commit them to
    ``database``. Returns what was found, by workload key (workloads found nowhere are absent)."""
    if top < 1:
        raise ValueError(f"reuse_records: top must be >= 1, got {top}")
    check_reuse_sources(sources)
    target_str = str(target)
    available = _valid_records(sources)
    found: dict[int, ReusedWorkload] = {}
    for mod in workloads:
        key = workload_key(mod)
        if key in found or measured_count(database, mod):
            continue  # already here: the run resumes from its own records
        best = available.get((key, target_str), [])[:top]
        if not best:
            continue
        run_secs = _measure_here([rec for _, _, rec in best], mod, target, builder, runner)
        workload = database.commit_workload(mod)
        for (_, _, rec), secs in zip(best, run_secs):
            database.commit_tuning_record(ms.database.TuningRecord(rec.trace, workload, secs, target, rec.args_info))
        here = min(mean_run_seconds(secs) for secs in run_secs)
        found[key] = ReusedWorkload(workload_name(mod), best[0][1], best[0][0], here)
        if found[key].holds:
            logger.warning("--reuse: %s found in %s (%.4f ms there, %.4f ms here); not tuned again",
                           found[key].name, found[key].source, 1e3 * found[key].source_seconds, 1e3 * here)
        else:
            logger.warning("--reuse: %s found in %s, but its programs fail here; tuning it", found[key].name,
                           found[key].source)
    return found
