"""Hooks for benchmark runs: stop a search when its time is up, keep every measured program.

* :class:`StopWhen` wraps any search strategy and ends the tuning run (MetaSchedule stops when a
  strategy hands back no candidates) once a condition holds, e.g. a wall-clock budget: the batch in
  flight is measured and recorded as usual, so the run's database and curve stay consistent.
* :class:`ProgramLog` is a measure callback that keeps, for every measured candidate in order, its
  scheduled module, latency and build/run error, so that other numbers (the analyzer's estimate)
  can be put next to the measured latency after the run, outside its timed part.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable

from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.measure_callback import PyMeasureCallback

from ..integration.measured_latency import result_seconds
from ..strategy.forwarding import ForwardingStrategy


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
class StopWhen(ForwardingStrategy):
    """Wrap a search strategy; hand back no candidates (which ends the run) once ``stop()`` is true.

    Parameters
    ----------
    inner : SearchStrategy
        The strategy that searches.
    stop : callable
        Called before each round; ``True`` ends the run.

    Attributes
    ----------
    stopped : bool
        Whether ``stop`` ended the run (rather than the trial budget). MetaSchedule tunes a clone of
        the strategy it is given; clones share this flag with the original.
    """

    def __init__(self, inner, stop: Callable[[], bool], _state: dict | None = None) -> None:
        super().__init__(inner)
        self.stop = stop
        self._state = _state if _state is not None else {"stopped": False}

    @property
    def stopped(self) -> bool:
        return self._state["stopped"]

    def generate_measure_candidates(self):
        if self.stop():
            self._state["stopped"] = True
            return None
        return self.inner.generate_measure_candidates()

    def clone(self):
        return StopWhen(self.inner_clone(), self.stop, self._state)


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
