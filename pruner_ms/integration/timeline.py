"""Record when each measured batch finished, for time-to-quality curves and progress bars."""
from __future__ import annotations

import math
import time

from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.measure_callback import PyMeasureCallback

from ..strategy.forwarding import ForwardingStrategy
from .measured_latency import result_seconds


class Timeline:
    """Shared log of a tuning run: one entry per measured batch (seconds since ``start``)."""

    def __init__(self, total_trials: int, *, progress: bool = True, desc: str = "tuning") -> None:
        self.start = time.perf_counter()
        self.batches: list[dict] = []
        self.round_seconds: list[float] = []
        # per search round, the strategy's own breakdown (``last_round_profile``; None if it keeps none)
        self.round_profiles: list[dict | None] = []
        self.bar = None
        if progress:
            from tqdm import tqdm

            self.bar = tqdm(total=total_trials, desc=desc, unit="trial", leave=True)

    def restart(self) -> None:
        self.start = time.perf_counter()

    def record(self, latencies: list[float], build_errors: int, run_errors: int, *, task_id: int | None = None) -> None:
        """One measured batch (``task_id``: the task scheduler's index of its task, for networks; the
        best is then over all tasks, so per-task curves are rebuilt from ``latencies`` and ``task``)."""
        best = min([self.best] + latencies)
        self.batches.append({
            "seconds": time.perf_counter() - self.start,
            "trials": self.trials + len(latencies),
            "best": best,
            "latencies": latencies,
            "build_errors": build_errors,
            "run_errors": run_errors,
            **({"task": int(task_id)} if task_id is not None else {}),
        })
        if self.bar is not None:
            self.bar.update(len(latencies))
            if math.isfinite(best):
                self.bar.set_postfix(best_ms=f"{best * 1e3:.3f}")

    @property
    def trials(self) -> int:
        return self.batches[-1]["trials"] if self.batches else 0

    @property
    def best(self) -> float:
        return self.batches[-1]["best"] if self.batches else math.inf

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@derived_object
class TimelineCallback(PyMeasureCallback):
    """A measure callback that feeds a :class:`Timeline` (failed candidates count as ``inf``)."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline

    def apply(self, task_scheduler, task_id, measure_candidates, builder_results, runner_results) -> None:
        lat, build_err, run_err = [], 0, 0
        for b, r in zip(builder_results, runner_results):
            if b.error_msg is not None:
                build_err += 1
                lat.append(math.inf)
            else:
                lat.append(result_seconds(r))
                run_err += not math.isfinite(lat[-1])
        self.timeline.record(lat, build_err, run_err, task_id=task_id)


@derived_object
class TimedStrategy(ForwardingStrategy):
    """Wrap any search strategy and log the host time of each ``generate_measure_candidates``.

    After each call it also logs the inner strategy's ``last_round_profile`` (a dict of per-phase
    seconds and counters that :class:`~pruner_ms.PrunerSearch` keeps; ``None`` for strategies without
    one) in ``timeline.round_profiles``: the strategy's own dict, not a copy, since PrunerSearch adds
    the batch's measured outcome to it when the results come back (it makes a new one each round).
    """

    def __init__(self, inner, timeline: Timeline) -> None:
        super().__init__(inner)
        self.timeline = timeline

    def generate_measure_candidates(self):
        t = time.perf_counter()
        out = self.inner.generate_measure_candidates()
        self.timeline.round_seconds.append(time.perf_counter() - t)
        profile = getattr(self.inner, "last_round_profile", None)
        self.timeline.round_profiles.append(profile)
        return out

    def clone(self):
        return TimedStrategy(self.inner_clone(), self.timeline)
