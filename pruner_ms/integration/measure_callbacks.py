"""MetaSchedule measure callbacks.

:class:`ProgramLog` keeps, for every measured candidate in order, its scheduled module, latency and
build/run error, so that other numbers (the analyzer's estimate) can be put next to the measured
latency after the run, outside its timed part. :func:`short_error` is the telling line of a build or
run error, as the logs and :class:`~pruner_ms.integration.builders.BuildStats` count them.
"""
from __future__ import annotations

import math
import time

from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.measure_callback import PyMeasureCallback

from .measured_latency import result_seconds


def short_error(msg: str | None, limit: int = 300) -> str | None:
    """The telling line of a builder/runner error (its ``Check failed``/``Error`` line, else the last one)."""
    if msg is None:
        return None
    lines = [ln.strip() for ln in str(msg).splitlines() if ln.strip()]
    for ln in lines:
        if "Check failed" in ln or "Error" in ln or "error:" in ln or "Timeout" in ln:
            return ln[:limit]
    return lines[-1][:limit] if lines else "unknown error"


@derived_object
class ProgramLog(PyMeasureCallback):
    """A measure callback that keeps every measured candidate, in measurement order.

    ``programs`` gets one dict per candidate: ``batch`` (0-based), ``mod`` (the scheduled IRModule),
    ``latency_s`` (mean of the runner's times; ``None`` when the build or run failed), ``build_error``
    and ``run_error`` (the telling line, or ``None``); ``batch_times`` the clock reading when each
    batch was recorded.

    Parameters
    ----------
    clock : callable
        Seconds, monotonic; default ``time.perf_counter``.
    """

    def __init__(self, clock=time.perf_counter) -> None:
        self.programs: list[dict] = []
        self.batches = 0
        self.batch_times: list[float] = []
        self.clock = clock

    def apply(self, task_scheduler, task_id, measure_candidates, builder_results, runner_results) -> None:
        for cand, b, r in zip(measure_candidates, builder_results, runner_results):
            entry = {"batch": self.batches, "mod": cand.sch.mod, "latency_s": None,
                     "build_error": short_error(b.error_msg), "run_error": None}
            if b.error_msg is None:
                if r.error_msg is not None or not r.run_secs:
                    entry["run_error"] = short_error(r.error_msg) or "no run time"
                else:
                    mean = result_seconds(r)
                    if math.isfinite(mean):
                        entry["latency_s"] = mean
                    else:
                        entry["run_error"] = f"runner reported {[float(x) for x in r.run_secs]} s"
            self.programs.append(entry)
        self.batches += 1
        self.batch_times.append(self.clock())
